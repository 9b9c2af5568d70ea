import type { KeyObject } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import { Injectable } from '@nestjs/common';
import { keepAliveAgents } from '../common/http-agents.js';
import { LocalCache } from '../common/local-cache.js';
import { AppConfig } from '../config/app-config.js';
import { CryptoService } from '../crypto/crypto.service.js';
import { signatureHeader, signingKey } from './event-signature.js';
import type { ClaimedDelivery } from './event.types.js';
import { hostOf, TargetGuard } from '../outbound/target-guard.js';

/** How much of a response body is read and kept (the rest is not read at all). */
export const RESPONSE_EXCERPT_BYTES = 1024;

/** A Retry-After longer than this is taken as this. */
const MAX_RETRY_AFTER_S = 24 * 60 * 60;

/** Statuses whose Retry-After is honoured. */
const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** A subscription URL as a request needs it, parsed once. */
interface Target {
  secure: boolean;
  /** The host as the guard checks it (an IP literal is checked before connecting). */
  host: string;
  options: RequestOptions;
}

/** What one POST came to. */
export interface SendResult {
  ok: boolean;
  status: number | null;
  response: string | null;
  /** Why it failed without an answer (timeout, refused target, connection). */
  error: string | null;
  /** 429 or 503 with Retry-After: the receiver's wait, in seconds. */
  retryAfterS: number | null;
}

/**
 * Sends one event to one subscription by the Standard Webhooks
 * specification: the JSON body as stored, `webhook-id` (the event id, the
 * same on every retry), `webhook-timestamp` and `webhook-signature`. Redirects
 * are not followed, the target's addresses are checked on connection
 * (TargetGuard), and only the start of the response is read.
 */
@Injectable()
export class EventSender {
  private readonly agents: ReturnType<typeof keepAliveAgents>;
  /** Signing keys by subscription and ciphertext: a rotated secret is a new ciphertext. */
  private readonly keys = new LocalCache<KeyObject>(10 * 60_000, 10_000);
  private readonly targets = new LocalCache<Target>(10 * 60_000, 10_000);

  constructor(
    private readonly config: AppConfig,
    private readonly crypto: CryptoService,
    private readonly guard: TargetGuard,
  ) {
    // Every new connection resolves through the guard: a name re-pointed at a
    // private address after the subscription was saved is refused too.
    this.agents = keepAliveAgents(Infinity, guard.lookup, guard.plainHttpLookup);
  }

  async send(delivery: ClaimedDelivery, now = Date.now()): Promise<SendResult> {
    const failed = (error: string): SendResult => ({
      ok: false,
      status: null,
      response: null,
      error,
      retryAfterS: null,
    });
    const target = this.target(delivery.url);
    if (isIP(target.host)) {
      const why = this.guard.refusal(target.host);
      if (why) return failed(`target refused: ${target.host} is ${why} address`);
    }
    const timestamp = Math.floor(now / 1000);
    try {
      const answer = await this.post(target, delivery.body, {
        'content-type': 'application/json',
        'user-agent': 'messaging-connector',
        'webhook-id': delivery.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(
          this.signingKeys(delivery, now),
          delivery.event_id,
          timestamp,
          delivery.body,
        ),
      });
      return {
        ok: answer.status >= 200 && answer.status < 300,
        status: answer.status,
        response: answer.excerpt,
        error: null,
        retryAfterS: RETRY_AFTER_STATUSES.has(answer.status)
          ? retryAfterSeconds(answer.retryAfter, now)
          : null,
      };
    } catch (error) {
      return failed(describe(error));
    }
  }

  /**
   * One POST with Node's own client (per event, the lightest there is): the
   * status, Retry-After and the first bytes of the answer. The whole exchange
   * must end within EVENT_TIMEOUT_MS; a redirect is an answer like any other.
   */
  private post(
    target: Target,
    body: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; retryAfter: string | undefined; excerpt: string | null }> {
    return new Promise((resolve, reject) => {
      const request = (target.secure ? httpsRequest : httpRequest)(
        {
          ...target.options,
          method: 'POST',
          agent: target.secure ? this.agents.https : this.agents.http,
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        },
        (response) => {
          void readExcerpt(response, RESPONSE_EXCERPT_BYTES).then((excerpt) =>
            resolve({
              status: response.statusCode ?? 0,
              retryAfter: response.headers['retry-after'],
              excerpt,
            }),
          );
        },
      );
      const timer = setTimeout(
        () => request.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
        this.config.EVENT_TIMEOUT_MS,
      );
      request.on('close', () => clearTimeout(timer));
      request.on('error', reject);
      request.end(body);
    });
  }

  private target(url: string): Target {
    let target = this.targets.get(url);
    if (target === undefined) {
      const parsed = new URL(url);
      target = {
        secure: parsed.protocol === 'https:',
        host: hostOf(parsed),
        options: urlToHttpOptions(parsed),
      };
      this.targets.set(url, target);
    }
    return target;
  }

  /** The current secret's key, and the previous one's during its grace period. */
  private signingKeys(delivery: ClaimedDelivery, now: number): KeyObject[] {
    const keys = [this.key(delivery.secret_encrypted, delivery.subscription_id)];
    if (
      delivery.previous_secret_encrypted &&
      delivery.previous_secret_until &&
      delivery.previous_secret_until.getTime() > now
    ) {
      keys.push(this.key(delivery.previous_secret_encrypted, delivery.subscription_id));
    }
    return keys;
  }

  private key(ciphertext: string, subscriptionId: string): KeyObject {
    // Keyed by the subscription too: a ciphertext copied onto another row must not decrypt.
    const cacheKey = `${subscriptionId}:${ciphertext}`;
    let key = this.keys.get(cacheKey);
    if (key === undefined) {
      key = signingKey(this.crypto.decrypt(ciphertext, subscriptionId));
      this.keys.set(cacheKey, key);
    }
    return key;
  }
}

/** Most of an answer read to keep its connection for the next event; a longer one is cut. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * Reads up to `limit` bytes of a response (the rest, when short, is read and
 * dropped). A body cut short still has its status: what was read is kept.
 */
function readExcerpt(response: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      if (size === 0) return resolve(null);
      // Invalid UTF-8 and NUL (which PostgreSQL text refuses) become U+FFFD.
      resolve(
        Buffer.concat(chunks)
          .subarray(0, limit)
          .toString('utf8')
          .replaceAll('\u0000', '\uFFFD')
          .slice(0, limit),
      );
    };
    response.on('data', (chunk: Buffer) => {
      if (size < limit) chunks.push(chunk);
      size += chunk.length;
      if (size >= DRAIN_LIMIT_BYTES) response.destroy();
    });
    response.on('error', () => undefined);
    response.on('end', done);
    response.on('close', done);
  });
}

/** Retry-After as seconds or an HTTP date; null when absent or unreadable. */
function retryAfterSeconds(value: unknown, now: number): number | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const seconds = /^\d+$/.test(value.trim())
    ? Number(value.trim())
    : (Date.parse(value) - now) / 1000;
  if (!Number.isFinite(seconds)) return null;
  return Math.min(Math.max(seconds, 0), MAX_RETRY_AFTER_S);
}

/** A failure without an answer, in words that carry no URL or secret. */
function describe(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ETIMEDOUT') return 'timed out';
  if (code === 'ETARGETREFUSED') {
    return `target refused: ${(error as Error).message}`.slice(0, 300);
  }
  return `no answer: ${typeof code === 'string' ? code : 'connection failed'}`;
}
