import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import { WEBHOOK_DELIVERY_JOB, WEBHOOK_QUEUE, type WebhookDeliveryJob } from '../common/queues.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService, QUEUE_STATES } from '../metrics/metrics.service.js';

/**
 * The acknowledging side of the webhook queue. Its connection fails fast
 * (no offline queue) so that a delivery is either written or refused with
 * 503; the workers read the same queue through their own connections.
 */
@Injectable()
export class DeliveryQueue implements OnApplicationShutdown {
  private readonly queue: Queue<WebhookDeliveryJob>;

  constructor(config: AppConfig, metrics: MetricsService) {
    this.queue = new Queue<WebhookDeliveryJob>(WEBHOOK_QUEUE, {
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
    });
    this.queue.on('error', () => undefined);
    metrics.addQueueReader(async () => [
      { queue: WEBHOOK_QUEUE, counts: await this.queue.getJobCounts(...QUEUE_STATES) },
    ]);
  }

  async add(delivery: WebhookDeliveryJob): Promise<void> {
    await this.queue.add(WEBHOOK_DELIVERY_JOB, delivery);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}
