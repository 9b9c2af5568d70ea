import { Module } from '@nestjs/common';
import { DeliveryStream } from './delivery-stream.js';
import { WebhookController } from './webhook.controller.js';
import { WebhookService } from './webhook.service.js';

@Module({
  controllers: [WebhookController],
  providers: [WebhookService, DeliveryStream],
})
export class WebhookModule {}
