import { Module } from '@nestjs/common';
import { ContactFlush } from '../../contacts/contact-flush.js';
import { InstancesModule } from '../../instances/instances.module.js';
import { MessagesModule } from '../../messages/messages.module.js';
import { DeliveryBacklog } from '../../webhook-stream/delivery-backlog.js';
import { BUFFER_QUEUE, registerQueue } from '../../queue/queues.js';
import { TurnsModule } from '../turns.module.js';
import { ContactBuffer } from './contact-buffer.js';

/**
 * Arming a contact's flush, without the processors: the API arms one when a
 * hand-back gives the agent the messages that came during a pause.
 */
@Module({
  imports: [registerQueue(BUFFER_QUEUE), MessagesModule, TurnsModule, InstancesModule],
  providers: [
    ContactBuffer,
    DeliveryBacklog,
    { provide: ContactFlush, useExisting: ContactBuffer },
  ],
  exports: [ContactBuffer, DeliveryBacklog, ContactFlush],
})
export class BufferModule {}
