import { Module } from '@nestjs/common';
import { EventSecretsReencryption } from './event-secrets-reencryption.js';
import { EventSender } from './event-sender.js';
import { EventWake } from './event-wake.js';
import { EventStore } from './event.store.js';
import { TargetGuard } from './target-guard.js';

/** Event forwarding without routes or loops: the store, the target guard and the sender. */
@Module({
  providers: [EventStore, TargetGuard, EventSender, EventWake, EventSecretsReencryption],
  exports: [EventStore, TargetGuard, EventSender, EventWake],
})
export class EventsModule {}
