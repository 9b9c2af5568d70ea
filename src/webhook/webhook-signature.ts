import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'sha256=';

/**
 * Checks `x-hub-signature-256` (sha256=<hex HMAC of the raw body>) against
 * every configured app secret, in constant time.
 */
export function hasValidSignature(
  rawBody: Buffer,
  header: string | undefined,
  secrets: readonly string[],
): boolean {
  if (!header?.startsWith(PREFIX)) return false;
  const given = Buffer.from(header.slice(PREFIX.length), 'hex');
  if (given.length !== 32) return false;
  let valid = false;
  // Every secret is tried (no early exit), so timing says nothing about which matched.
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    valid = timingSafeEqual(expected, given) || valid;
  }
  return valid;
}
