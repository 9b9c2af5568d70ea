import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SendPacer } from './send-pacer.service.js';
import { SendController } from './send.controller.js';
import { SendService } from './send.service.js';

@Module({
  imports: [InstancesModule, MessagesModule],
  controllers: [SendController],
  providers: [SendService, SendPacer],
  exports: [SendService],
})
export class SendModule {}
