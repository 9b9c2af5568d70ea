import { Module } from '@nestjs/common';
import { OUTBOUND_RECORD_QUEUE, registerQueue } from '../queue/queues.js';
import { InstancesModule } from '../instances/instances.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { TemplatesModule } from '../templates/templates.module.js';
import { OutboundRecordQueue } from './outbound-records.js';
import { SendPacer } from './send-pacer.js';
import { SendService } from './send.service.js';

/** The send path without HTTP routes: /send/* and the agent's answers both use it. */
@Module({
  imports: [InstancesModule, MessagesModule, TemplatesModule, registerQueue(OUTBOUND_RECORD_QUEUE)],
  providers: [SendService, SendPacer, OutboundRecordQueue],
  exports: [SendService, SendPacer, OutboundRecordQueue],
})
export class SendModule {}
