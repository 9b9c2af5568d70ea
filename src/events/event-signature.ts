import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks secrets are `whsec_` and the base64 of the key bytes. */
const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * The `webhook-signature` header of the Standard Webhooks specification:
 * `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under each secret
 * (two during a rotation's grace period), separated by spaces.
 */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return secrets
    .map(
      (secret) =>
        'v1,' +
        createHmac('sha256', Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'))
          .update(`${id}.${timestamp}.${body}`)
          .digest('base64'),
    )
    .join(' ');
}
