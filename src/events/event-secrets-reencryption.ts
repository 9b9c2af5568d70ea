import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { CryptoService } from '../crypto/crypto.service.js';
import { reencryptStale } from '../crypto/stale-secrets.js';
import { EventStore } from './event.store.js';

/**
 * At boot (every role: api processes sign test pings, workers sign every
 * event), subscription secrets written under an older key are written again
 * under the current one, as instance tokens are, so an old ENCRYPTION_KEY
 * can be retired once every process has started with the new one.
 */
@Injectable()
export class EventSecretsReencryption implements OnApplicationBootstrap {
  private readonly logger = new Logger(EventSecretsReencryption.name);

  constructor(
    private readonly store: EventStore,
    private readonly crypto: CryptoService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await reencryptStale(
      this.crypto,
      {
        what: 'event subscription secrets',
        remedy: 'make a new one with POST /admin/event-subscriptions/{id}/rotate-secret',
        read: () => this.store.secrets(),
        replace: (secret, next) => this.store.replaceSecret(secret, next),
      },
      this.logger,
    );
  }
}
