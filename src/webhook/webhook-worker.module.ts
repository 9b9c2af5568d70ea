import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { WEBHOOK_QUEUE } from '../common/queues.js';
import { AgentModule } from '../agent/agent.module.js';
import { InstanceStoreModule } from '../instances/instance-store.module.js';
import { MessageStoreModule } from '../messages/message-store.module.js';
import { InboundService } from './inbound.service.js';
import { WebhookDeliveryProcessor } from './webhook-delivery.processor.js';

/** The queue workers of the webhook pipeline (APP_ROLE all or worker). */
@Module({
  imports: [
    BullModule.registerQueue({ name: WEBHOOK_QUEUE }),
    InstanceStoreModule,
    MessageStoreModule,
    AgentModule,
  ],
  providers: [InboundService, WebhookDeliveryProcessor],
})
export class WebhookWorkerModule {}
