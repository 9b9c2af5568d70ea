import { Module } from '@nestjs/common';
import { registerQueue, TURN_QUEUE } from '../queue/queues.js';
import { TurnScheduler } from './turn-scheduler.js';
import { TurnStore } from './turn.store.js';

/** Turns without HTTP routes: their store and their wake-ups, shared by the API and the workers. */
@Module({
  imports: [registerQueue(TURN_QUEUE)],
  providers: [TurnStore, TurnScheduler],
  exports: [TurnStore, TurnScheduler],
})
export class TurnsModule {}
