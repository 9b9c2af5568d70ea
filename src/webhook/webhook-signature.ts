import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

const PREFIX = 'sha256=';

/** The app secrets as HMAC keys, made once: a key from a string costs more than the HMAC of a delivery. */
export function signatureKeys(secrets: readonly string[]): KeyObject[] {
  return secrets.map((secret) => createSecretKey(secret, 'utf8'));
}

/**
 * Checks `x-hub-signature-256` (sha256=<hex HMAC of the raw body>) against
 * every configured app secret, in constant time.
 */
export function hasValidSignature(
  rawBody: Buffer,
  header: string | undefined,
  keys: readonly KeyObject[],
): boolean {
  if (!header?.startsWith(PREFIX)) return false;
  const given = Buffer.from(header.slice(PREFIX.length), 'hex');
  if (given.length !== 32) return false;
  let valid = false;
  // Every secret is tried (no early exit), so timing says nothing about which matched.
  for (const key of keys) {
    const expected = createHmac('sha256', key).update(rawBody).digest();
    valid = timingSafeEqual(expected, given) || valid;
  }
  return valid;
}
