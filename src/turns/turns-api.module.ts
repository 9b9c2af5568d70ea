import { Module } from '@nestjs/common';
import { TurnsModule } from './turns.module.js';
import { TurnsController } from './turns.controller.js';
import { TurnsService } from './turns.service.js';

/** The operator's routes for turns (api processes). */
@Module({
  imports: [TurnsModule],
  controllers: [TurnsController],
  providers: [TurnsService],
})
export class TurnsApiModule {}
