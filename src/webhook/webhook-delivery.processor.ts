import { Processor } from '@nestjs/bullmq';
import { UnrecoverableError, type Job } from 'bullmq';
import { GracefulWorkerHost } from '../common/graceful-worker-host.js';
import { WEBHOOK_QUEUE, type WebhookDeliveryJob } from '../common/queues.js';
import { InboundService, type DeliveryResult } from './inbound.service.js';
import type { WebhookEnvelope } from '../platform/webhook-payload.js';

/** Thin: parse the stored delivery, hand it to InboundService; failures throw so BullMQ retries. */
@Processor(WEBHOOK_QUEUE, { concurrency: 16 })
export class WebhookDeliveryProcessor extends GracefulWorkerHost {
  constructor(private readonly inbound: InboundService) {
    super();
  }

  async process(job: Job<WebhookDeliveryJob>): Promise<DeliveryResult> {
    let envelope: WebhookEnvelope;
    try {
      envelope = JSON.parse(job.data.body) as WebhookEnvelope;
    } catch {
      // Signed by the platform but not JSON: retrying cannot help.
      throw new UnrecoverableError('the delivery is not JSON');
    }
    return this.inbound.processDelivery(envelope, new Date(job.data.receivedAt));
  }
}
