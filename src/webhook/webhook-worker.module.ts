import { Module } from '@nestjs/common';
import { ContactsModule } from '../contacts/contacts.module.js';
import { EventsModule } from '../events/events.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { HistoryModule } from '../history/history.module.js';
import { TemplatesModule } from '../templates/templates.module.js';
import { BufferModule } from '../turns/buffer/buffer.module.js';
import { ContactBuffer } from '../turns/buffer/contact-buffer.js';
import { BacklogHold } from '../webhook-stream/delivery-backlog.js';
import { DeliveryConsumer } from '../webhook-stream/delivery-consumer.js';
import { DeliveryHandler } from '../webhook-stream/delivery-handler.js';
import { InboundService } from './inbound.service.js';

/**
 * The workers of the webhook pipeline (APP_ROLE all or worker): the stream's
 * consumer hands its batches to InboundService and, once the workers catch
 * up, releases the buffers a backlog held.
 */
@Module({
  imports: [
    InstancesModule,
    ContactsModule,
    MessagesModule,
    TemplatesModule,
    BufferModule,
    EventsModule,
    HistoryModule,
  ],
  providers: [
    InboundService,
    DeliveryConsumer,
    { provide: DeliveryHandler, useExisting: InboundService },
    { provide: BacklogHold, useExisting: ContactBuffer },
  ],
})
export class WebhookWorkerModule {}
