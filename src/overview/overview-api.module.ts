import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { HealthModule } from '../health/health.module.js';
import { InstancesModule } from '../instances/instances.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { TurnsModule } from '../turns/turns.module.js';
import { OverviewController } from './overview.controller.js';
import { OverviewService } from './overview.service.js';

/** GET /admin/overview: reads what other modules own, changes nothing (api processes). */
@Module({
  imports: [HealthModule, InstancesModule, MessagesModule, EventsModule, TurnsModule],
  controllers: [OverviewController],
  providers: [OverviewService],
})
export class OverviewApiModule {}
