import { Module } from '@nestjs/common';
import { InstancesModule } from '../instances/instances.module.js';
import { DeliveryStream } from '../webhook-stream/delivery-stream.js';
import { WebhookController } from './webhook.controller.js';
import { WebhookService } from './webhook.service.js';

@Module({
  controllers: [WebhookController],
  imports: [InstancesModule],
  providers: [WebhookService, DeliveryStream],
})
export class WebhookApiModule {}
