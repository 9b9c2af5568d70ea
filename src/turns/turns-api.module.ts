import { Module } from '@nestjs/common';
import { TurnStoreModule } from './turn-store.module.js';
import { TurnsController } from './turns.controller.js';
import { TurnsService } from './turns.service.js';

/** The operator's routes for turns (api processes). */
@Module({
  imports: [TurnStoreModule],
  controllers: [TurnsController],
  providers: [TurnsService],
})
export class TurnsModule {}
