import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppException } from '../common/app.exception.js';
import { sameSecret } from '../common/secrets.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { DeliveryQueue } from './delivery-queue.service.js';
import { hasValidSignature } from './webhook-signature.js';

/** Longest the acknowledgement waits for the durable write. */
const STORE_TIMEOUT_MS = 2000;

@Injectable()
export class WebhookService {
  private readonly logger = new Logger(WebhookService.name);

  constructor(
    private readonly config: AppConfig,
    private readonly deliveries: DeliveryQueue,
    private readonly metrics: MetricsService,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  /** The platform's subscription check: the challenge when the token is ours, else 403. */
  async challenge(mode: unknown, token: unknown, challenge: unknown): Promise<string> {
    if (mode === 'subscribe' && typeof token === 'string' && typeof challenge === 'string') {
      if (sameSecret(token, this.config.PLATFORM_VERIFY_TOKEN)) return challenge;
      const rows = await this.db.query<unknown[]>(
        'SELECT 1 FROM instances WHERE webhook_verify_token = $1',
        [token],
      );
      if (rows.length > 0) return challenge;
    }
    throw new AppException('invalid_verify_token', 'The verify token does not match');
  }

  /**
   * Checks the signature over the bytes received, then writes the delivery
   * to the queue before answering. Nothing else happens here: parsing,
   * de-duplication and the agent all run in the workers.
   */
  async accept(rawBody: Buffer | undefined, signature: string | undefined): Promise<void> {
    if (!rawBody || !hasValidSignature(rawBody, signature, this.config.PLATFORM_APP_SECRET)) {
      this.metrics.webhookDeliveries.inc({ outcome: 'invalid_signature' });
      throw new AppException('invalid_signature', 'Missing or invalid x-hub-signature-256');
    }
    try {
      // BullMQ waits for a connection that is down: give up in time to answer 503
      // well within the platform's 5 s. A write that still lands later is a
      // duplicate delivery, which de-duplication by wamid absorbs.
      await this.storeWithin(rawBody.toString('utf8'), STORE_TIMEOUT_MS);
      this.metrics.webhookDeliveries.inc({ outcome: 'accepted' });
    } catch (error) {
      this.metrics.webhookDeliveries.inc({ outcome: 'unavailable' });
      // Not kept: the platform must deliver again, so say so instead of 200.
      this.logger.error({ err: (error as Error).message }, 'webhook delivery not stored');
      throw new AppException('unavailable', 'The delivery could not be stored; retry later');
    }
  }

  /** The queue write, given up after `ms`; the timer is cancelled as soon as the race is decided. */
  private async storeWithin(body: string, ms: number): Promise<void> {
    // A plain timer, cleared once decided (an AbortSignal-bound one cost a third of the throughput).
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.deliveries.add({ body, receivedAt: Date.now() }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('queue write timed out')), ms);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}
