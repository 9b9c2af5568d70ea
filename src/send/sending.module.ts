import { Module } from '@nestjs/common';
import { InstanceStoreModule } from '../instances/instance-store.module.js';
import { MessageStoreModule } from '../messages/message-store.module.js';
import { SendPacer } from './send-pacer.service.js';
import { SendService } from './send.service.js';

/** The send path without HTTP routes: /send/* and the agent's answers both use it. */
@Module({
  imports: [InstanceStoreModule, MessageStoreModule],
  providers: [SendService, SendPacer],
  exports: [SendService],
})
export class SendingModule {}
