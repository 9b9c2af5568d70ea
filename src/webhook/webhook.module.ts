import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { WEBHOOK_QUEUE } from '../common/queues.js';
import { AppConfig } from '../config/app-config.js';
import { WebhookController } from './webhook.controller.js';
import { WebhookService } from './webhook.service.js';

@Module({
  imports: [
    BullModule.registerQueueAsync({
      name: WEBHOOK_QUEUE,
      inject: [AppConfig],
      // The acknowledging side fails fast when Redis is away (503, the platform
      // re-sends) instead of queueing the write in memory.
      useFactory: (config: AppConfig) => ({
        connection: {
          url: config.REDIS_URL,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          connectTimeout: 2000,
          commandTimeout: 2000,
        },
        prefix: config.REDIS_PREFIX,
        defaultJobOptions: {
          attempts: 10,
          backoff: { type: 'exponential', delay: 1000 },
          removeOnComplete: { count: 1000 },
          removeOnFail: { age: 7 * 24 * 3600 },
        },
      }),
    }),
  ],
  controllers: [WebhookController],
  providers: [WebhookService],
})
export class WebhookModule {}
