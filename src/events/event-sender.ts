import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { keepAliveAgents } from '../common/http-agents.js';
import { LocalCache } from '../common/local-cache.js';
import { AppConfig } from '../config/app-config.js';
import { CryptoService } from '../crypto/crypto.service.js';
import { signatureHeader } from './event-signature.js';
import type { ClaimedDelivery } from './event.types.js';
import { hostOf, TargetGuard } from './target-guard.js';

/** How much of a response body is read and kept (the rest is not read at all). */
export const RESPONSE_EXCERPT_BYTES = 1024;

/** A Retry-After longer than this is taken as this. */
const MAX_RETRY_AFTER_S = 24 * 60 * 60;

/** Statuses whose Retry-After is honoured. */
const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);

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
  /** Decrypted secrets by ciphertext: a rotated secret is a new ciphertext. */
  private readonly secrets = new LocalCache<string>(10 * 60_000, 10_000);

  constructor(
    private readonly config: AppConfig,
    private readonly crypto: CryptoService,
    private readonly guard: TargetGuard,
  ) {
    // Every new connection resolves through the guard: a name re-pointed at a
    // private address after the subscription was saved is refused too.
    this.agents = keepAliveAgents(Infinity, guard.lookup);
  }

  async send(delivery: ClaimedDelivery, now = Date.now()): Promise<SendResult> {
    const failed = (error: string): SendResult => ({
      ok: false,
      status: null,
      response: null,
      error,
      retryAfterS: null,
    });
    const host = hostOf(new URL(delivery.url));
    if (isIP(host)) {
      const why = this.guard.refusal(host);
      if (why) return failed(`target refused: ${host} is ${why} address`);
    }
    const timestamp = Math.floor(now / 1000);
    try {
      const answer = await this.post(delivery.url, delivery.body, {
        'content-type': 'application/json',
        'user-agent': 'messaging-connector',
        'webhook-id': delivery.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(
          this.signingSecrets(delivery, now),
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
    url: string,
    body: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; retryAfter: string | undefined; excerpt: string | null }> {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const request = (secure ? httpsRequest : httpRequest)(
        target,
        {
          method: 'POST',
          agent: secure ? this.agents.https : this.agents.http,
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        },
        (response) => {
          readExcerpt(response, RESPONSE_EXCERPT_BYTES).then(
            (excerpt) =>
              resolve({
                status: response.statusCode ?? 0,
                retryAfter: response.headers['retry-after'],
                excerpt,
              }),
            reject,
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

  /** The current secret, and the previous one during its grace period. */
  private signingSecrets(delivery: ClaimedDelivery, now: number): string[] {
    const secrets = [this.decrypt(delivery.secret_encrypted, delivery.subscription_id)];
    if (
      delivery.previous_secret_encrypted &&
      delivery.previous_secret_until &&
      delivery.previous_secret_until.getTime() > now
    ) {
      secrets.push(this.decrypt(delivery.previous_secret_encrypted, delivery.subscription_id));
    }
    return secrets;
  }

  private decrypt(ciphertext: string, subscriptionId: string): string {
    let secret = this.secrets.get(ciphertext);
    if (secret === undefined) {
      secret = this.crypto.decrypt(ciphertext, subscriptionId);
      this.secrets.set(ciphertext, secret);
    }
    return secret;
  }
}

/** Most of an answer read to keep its connection for the next event; a longer one is cut. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/** Reads up to `limit` bytes of a response (the rest, when short, is read and dropped). */
async function readExcerpt(stream: Readable, limit: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      if (size < limit) chunks.push(buffer);
      size += buffer.length;
      if (size >= DRAIN_LIMIT_BYTES) {
        stream.destroy();
        break;
      }
    }
  } catch {
    // A body cut short still has its status; what was read is kept.
  }
  if (size === 0) return null;
  // Invalid UTF-8 and NUL (which PostgreSQL text refuses) become U+FFFD.
  return Buffer.concat(chunks)
    .subarray(0, limit)
    .toString('utf8')
    .replaceAll('\u0000', '\uFFFD')
    .slice(0, limit);
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
