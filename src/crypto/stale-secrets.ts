import type { CryptoService } from './crypto.service.js';

/** One stored secret: its row (the id it is bound to), which column, the stored value. */
export interface StoredSecret<C extends string> {
  id: string;
  column: C;
  value: string;
}

/** What a pass over stored secrets did. */
export interface ReencryptionResult<C extends string> {
  updated: number;
  /** Values that could not be read (their key gone, or tampered with), and why. */
  unreadable: Array<{ secret: StoredSecret<C>; reason: string }>;
}

/**
 * Writes again under the current key every secret an older key (or format)
 * wrote, so an old key can be retired once every process has started with
 * the new one. `replace` writes only if the value is still the one read
 * (another process or an admin may have changed it): true when it wrote.
 */
export async function reencryptStale<C extends string>(
  crypto: CryptoService,
  secrets: Array<StoredSecret<C>>,
  replace: (secret: StoredSecret<C>, next: string) => Promise<boolean>,
): Promise<ReencryptionResult<C>> {
  const result: ReencryptionResult<C> = { updated: 0, unreadable: [] };
  for (const secret of secrets.filter((s) => crypto.needsReencryption(s.value))) {
    let plaintext: string;
    try {
      plaintext = crypto.decrypt(secret.value, secret.id);
    } catch (error) {
      result.unreadable.push({ secret, reason: (error as Error).message });
      continue;
    }
    if (await replace(secret, crypto.encrypt(plaintext, secret.id))) result.updated++;
  }
  return result;
}
