import { Module } from '@nestjs/common';
import { ContactsModule } from '../contacts/contacts.module.js';
import { EventsModule } from '../events/events.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { TemplatesModule } from '../templates/templates.module.js';
import { BufferModule } from '../turns/buffer/buffer.module.js';
import { DeliveryConsumer } from './delivery-consumer.js';
import { InboundService } from './inbound.service.js';

/** The workers of the webhook pipeline (APP_ROLE all or worker). */
@Module({
  imports: [
    InstancesModule,
    ContactsModule,
    MessagesModule,
    TemplatesModule,
    BufferModule,
    EventsModule,
  ],
  providers: [InboundService, DeliveryConsumer],
})
export class WebhookWorkerModule {}
