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
    let result;
    try {
      result = await reencryptStale(this.crypto, await this.store.secrets(), (secret, next) =>
        this.store.replaceSecret(secret, next),
      );
    } catch (error) {
      this.logger.error(
        { err: (error as Error).message },
        'event subscription secrets not re-encrypted at boot: the database is away',
      );
      return;
    }
    for (const { secret, reason } of result.unreadable) {
      this.logger.error(
        { subscriptionId: secret.id, column: secret.column, err: reason },
        'event subscription secret could not be re-encrypted: make a new one with POST /admin/event-subscriptions/{id}/rotate-secret',
      );
    }
    if (result.updated > 0) {
      this.logger.log(
        { updated: result.updated },
        'event subscription secrets re-encrypted under the current key',
      );
    }
  }
}
