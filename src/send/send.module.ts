import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { OUTBOUND_RECORD_QUEUE } from '../common/queues.js';
import { InstanceStoreModule } from '../instances/instance-store.module.js';
import { MessageStoreModule } from '../messages/message-store.module.js';
import { OutboundRecordProcessor, OutboundRecordQueue } from './outbound-records.js';
import { SendPacer } from './send-pacer.service.js';
import { SendService } from './send.service.js';

/** The send path without HTTP routes: /send/* and the agent's answers both use it. */
@Module({
  imports: [
    InstanceStoreModule,
    MessageStoreModule,
    BullModule.registerQueue({ name: OUTBOUND_RECORD_QUEUE }),
  ],
  providers: [SendService, SendPacer, OutboundRecordQueue],
  exports: [SendService],
})
export class SendingModule {}

/** Writes the records parked while PostgreSQL was away (APP_ROLE all or worker). */
@Module({
  imports: [MessageStoreModule, BullModule.registerQueue({ name: OUTBOUND_RECORD_QUEUE })],
  providers: [OutboundRecordProcessor],
})
export class SendingWorkerModule {}
