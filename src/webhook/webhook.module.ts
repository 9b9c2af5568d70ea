import { Module } from '@nestjs/common';
import { DeliveryQueue } from './delivery-queue.service.js';
import { WebhookController } from './webhook.controller.js';
import { WebhookService } from './webhook.service.js';

@Module({
  controllers: [WebhookController],
  providers: [WebhookService, DeliveryQueue],
})
export class WebhookModule {}
