import { Module } from '@nestjs/common';
import { MessagesModule } from '../messages/messages.module.js';
import { OUTBOUND_RECORD_QUEUE, registerQueue } from '../queue/queues.js';
import { OutboundRecordProcessor } from './outbound-record.processor.js';

/** Writes the records parked while PostgreSQL was away (APP_ROLE all or worker). */
@Module({
  imports: [MessagesModule, registerQueue(OUTBOUND_RECORD_QUEUE)],
  providers: [OutboundRecordProcessor],
})
export class SendWorkerModule {}
