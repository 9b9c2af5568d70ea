import { Module } from '@nestjs/common';
import { EventDispatcher } from './event-dispatcher.js';
import { EventsModule } from './events.module.js';

/** Sends events to their subscriptions (worker processes). */
@Module({
  imports: [EventsModule],
  providers: [EventDispatcher],
})
export class EventsWorkerModule {}
