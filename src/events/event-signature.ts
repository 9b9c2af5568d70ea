import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** Standard Webhooks secrets are `whsec_` and the base64 of the key bytes. */
const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * A secret's HMAC key. Made once per secret: HMAC with a ready key costs a
 * quarter of one made from the secret's bytes.
 */
export function signingKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'));
}

/**
 * The `webhook-signature` header of the Standard Webhooks specification:
 * `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under each key
 * (two during a rotation's grace period), separated by spaces.
 */
export function signatureHeader(
  keys: readonly KeyObject[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return keys
    .map(
      (key) =>
        'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64'),
    )
    .join(' ');
}
