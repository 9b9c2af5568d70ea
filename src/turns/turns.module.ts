import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { TURN_QUEUE } from '../common/queues.js';
import { TurnScheduler } from './turn-scheduler.service.js';
import { TurnStore } from './turn.store.js';

/** Turns without HTTP routes: their store and their wake-ups, shared by the API and the workers. */
@Module({
  imports: [BullModule.registerQueue({ name: TURN_QUEUE })],
  providers: [TurnStore, TurnScheduler],
  exports: [TurnStore, TurnScheduler],
})
export class TurnStoreModule {}
