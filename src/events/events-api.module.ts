import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module.js';
import { EventSubscriptionsController } from './event-subscriptions.controller.js';
import { EventSubscriptionsService } from './event-subscriptions.service.js';
import { EventsModule } from './events.module.js';

/** The admin's routes for event subscriptions and deliveries (api processes). */
@Module({
  imports: [EventsModule, InstancesModule],
  controllers: [EventSubscriptionsController],
  providers: [EventSubscriptionsService],
})
export class EventsApiModule {}
