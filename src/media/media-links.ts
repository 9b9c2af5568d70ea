import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { AppConfig, decodeEncryptionKey } from '../config/app-config.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';

/** What a signed media link opens: one instance's media id, until a time. */
export interface MediaLink {
  instanceId: string;
  mediaId: string;
  /** Epoch seconds. */
  expires: number;
}

/** Why a link opens nothing. */
export type MediaLinkRefusal = 'invalid' | 'expired' | 'used';

/**
 * Short-lived signed URLs to media, for the agent: the platform's own media
 * URLs expire and need the number's token, which the agent must never hold.
 * A link names the instance, the media id and its expiry, signed with a key
 * derived from ENCRYPTION_KEY (one signed before a rotation still opens
 * while its key is in ENCRYPTION_PREVIOUS_KEYS); it downloads once (Redis
 * remembers its use until it expires).
 */
@Injectable()
export class MediaLinks {
  /** The signing key, then those of ENCRYPTION_PREVIOUS_KEYS (links signed before a rotation). */
  private readonly keys: Buffer[];

  constructor(
    private readonly config: AppConfig,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
  ) {
    this.keys = [config.ENCRYPTION_KEY, ...config.ENCRYPTION_PREVIOUS_KEYS].map((encoded) => {
      const secret = decodeEncryptionKey(encoded) ?? Buffer.from(encoded);
      // A key of its own: a link's signature says nothing of the encryption key.
      return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'media-links', 32));
    });
  }

  /** The URL of a media id for the agent; null when PUBLIC_URL is not set. */
  url(instanceId: string, mediaId: string, now = Date.now()): string | null {
    const base = this.config.PUBLIC_URL?.replace(/\/+$/, '');
    if (!base) return null;
    const expires = Math.floor(now / 1000) + this.config.AGENT_MEDIA_URL_TTL_S;
    return `${base}/media-links/${this.sign({ instanceId, mediaId, expires })}`;
  }

  sign(link: MediaLink): string {
    // A nonce: two links to one file in one second are two links, each used once.
    const payload = Buffer.from(
      JSON.stringify([
        link.instanceId,
        link.mediaId,
        link.expires,
        randomBytes(6).toString('base64url'),
      ]),
    ).toString('base64url');
    return `${payload}.${this.signature(payload)}`;
  }

  /** What a token opens, or why it opens nothing (without using it up). */
  verify(token: string, now = Date.now()): MediaLink | MediaLinkRefusal {
    const [payload, signature, extra] = token.split('.');
    if (!payload || !signature || extra !== undefined) return 'invalid';
    const given = Buffer.from(signature);
    const signedBy = this.keys.find((key) => {
      const expected = Buffer.from(this.signature(payload, key));
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
    if (!signedBy) return 'invalid';
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return 'invalid';
    }
    if (
      !Array.isArray(parsed) ||
      typeof parsed[0] !== 'string' ||
      typeof parsed[1] !== 'string' ||
      typeof parsed[2] !== 'number'
    ) {
      return 'invalid';
    }
    const link = { instanceId: parsed[0], mediaId: parsed[1], expires: parsed[2] };
    return link.expires * 1000 <= now ? 'expired' : link;
  }

  /** Whether the token was used already. */
  async used(token: string): Promise<boolean> {
    return (await this.redis.exists(this.usedKey(token))) === 1;
  }

  /** Gives a token back (its download failed before a byte was sent): it may be tried again. */
  async release(token: string): Promise<void> {
    await this.redis.del(this.usedKey(token));
  }

  /** Marks the token used; false when it was already. */
  async use(token: string, link: MediaLink, now = Date.now()): Promise<boolean> {
    const ttl = Math.max(1, link.expires - Math.floor(now / 1000));
    return (await this.redis.set(this.usedKey(token), '1', 'EX', ttl, 'NX')) === 'OK';
  }

  private usedKey(token: string): string {
    return `${this.config.REDIS_PREFIX}:media-link:${token.split('.')[1]}`;
  }

  private signature(payload: string, key = this.keys[0]): string {
    return createHmac('sha256', key).update(payload).digest('base64url');
  }
}
