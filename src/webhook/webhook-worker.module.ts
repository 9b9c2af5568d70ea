import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { InstanceStoreModule } from '../instances/instance-store.module.js';
import { MessageStoreModule } from '../messages/message-store.module.js';
import { DeliveryConsumer } from './delivery-consumer.js';
import { InboundService } from './inbound.service.js';

/** The workers of the webhook pipeline (APP_ROLE all or worker). */
@Module({
  imports: [InstanceStoreModule, MessageStoreModule, AgentModule],
  providers: [InboundService, DeliveryConsumer],
})
export class WebhookWorkerModule {}
