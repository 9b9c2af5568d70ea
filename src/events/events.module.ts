import { Module } from '@nestjs/common';
import { OutboundModule } from '../outbound/outbound.module.js';
import { EventSecretsReencryption } from './event-secrets-reencryption.js';
import { EventSender } from './event-sender.js';
import { EventWake } from './event-wake.js';
import { EventStore } from './event.store.js';

/** Event forwarding without routes or loops: the store, the target guard and the sender. */
@Module({
  imports: [OutboundModule],
  providers: [EventStore, EventSender, EventWake, EventSecretsReencryption],
  exports: [EventStore, OutboundModule, EventSender, EventWake],
})
export class EventsModule {}
