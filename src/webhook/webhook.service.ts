import type { KeyObject } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppException } from '../common/app.exception.js';
import { sameSecret } from '../common/secrets.js';
import { AppConfig } from '../config/app-config.js';
import { InstancesService } from '../instances/instances.service.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { DeliveryStream } from '../webhook-stream/delivery-stream.js';
import { hasValidSignature, signatureKeys } from './webhook-signature.js';

@Injectable()
export class WebhookService {
  private readonly logger = new Logger(WebhookService.name);
  private readonly appSecrets: KeyObject[];

  constructor(
    private readonly config: AppConfig,
    private readonly deliveries: DeliveryStream,
    private readonly metrics: MetricsService,
    private readonly instances: InstancesService,
  ) {
    this.appSecrets = signatureKeys(config.PLATFORM_APP_SECRET);
  }

  /** The platform's subscription check: the challenge when the token is ours, else 403. */
  async challenge(mode: unknown, token: unknown, challenge: unknown): Promise<string> {
    if (mode === 'subscribe' && typeof token === 'string' && typeof challenge === 'string') {
      if (sameSecret(token, this.config.PLATFORM_VERIFY_TOKEN)) return challenge;
      if (await this.instances.isVerifyToken(token)) return challenge;
    }
    throw new AppException('invalid_verify_token', 'The verify token does not match');
  }

  /**
   * Checks the signature over the bytes received, then writes the delivery
   * to the stream before answering. Nothing else happens here: parsing,
   * de-duplication and the agent all run in the workers.
   */
  async accept(rawBody: Buffer | undefined, signature: string | undefined): Promise<void> {
    if (!rawBody || !hasValidSignature(rawBody, signature, this.appSecrets)) {
      this.metrics.webhookDeliveries.inc({ outcome: 'invalid_signature' });
      throw new AppException('invalid_signature', 'Missing or invalid x-hub-signature-256');
    }
    try {
      // Bounded by the stream connection's 2 s command timeout, well within the
      // platform's 5 s. A write that lands after giving up is a duplicate
      // delivery, which de-duplication by wamid absorbs.
      await this.deliveries.add(rawBody, Date.now());
      this.metrics.webhookDeliveries.inc({ outcome: 'accepted' });
    } catch (error) {
      this.metrics.webhookDeliveries.inc({ outcome: 'unavailable' });
      // Not kept: the platform must deliver again, so say so instead of 200.
      this.logger.error({ err: (error as Error).message }, 'webhook delivery not stored');
      throw new AppException(
        'unavailable',
        'The delivery could not be stored; retry later',
        undefined,
        {
          'retry-after': '5',
        },
      );
    }
  }
}
