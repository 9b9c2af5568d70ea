import type { LoggerService } from '@nestjs/common';
import type { CryptoService } from './crypto.service.js';

/** One stored secret: its row (the id it is bound to), which column, the stored value. */
export interface StoredSecret<C extends string> {
  id: string;
  column: C;
  value: string;
}

/** Where a kind of secret is stored, and what to tell an admin when one cannot be read. */
export interface SecretStore<C extends string> {
  /** What they are, in log lines ("instance tokens", "event subscription secrets"). */
  what: string;
  /** How an admin replaces one that cannot be read. */
  remedy: string;
  read(): Promise<Array<StoredSecret<C>>>;
  /** Writes `next` only if the value is still the one read; whether it wrote. */
  replace(secret: StoredSecret<C>, next: string): Promise<boolean>;
}

/**
 * Writes again under the current key every secret an older key (or format)
 * wrote, so an old key can be retired once every process has started with
 * the new one. Another process or an admin may change a value meanwhile: it
 * is then left as they wrote it. A value that cannot be read (its key gone,
 * or tampered with) is logged and skipped; when the database fails, the
 * rest waits for the next boot. How many it rewrote.
 */
export async function reencryptStale<C extends string>(
  crypto: CryptoService,
  store: SecretStore<C>,
  logger: LoggerService,
): Promise<number> {
  let updated = 0;
  try {
    for (const secret of (await store.read()).filter((s) => crypto.needsReencryption(s.value))) {
      let next: string;
      try {
        next = crypto.encrypt(crypto.decrypt(secret.value, secret.id), secret.id);
      } catch (error) {
        logger.error(
          { id: secret.id, column: secret.column, err: (error as Error).message },
          `${store.what}: one could not be re-encrypted, ${store.remedy}`,
        );
        continue;
      }
      if (await store.replace(secret, next)) updated++;
    }
  } catch (error) {
    logger.error(
      { err: (error as Error).message },
      `${store.what} not all re-encrypted at boot: the database failed; the next boot tries again`,
    );
  }
  if (updated > 0) logger.log({ updated }, `${store.what} re-encrypted under the current key`);
  return updated;
}
