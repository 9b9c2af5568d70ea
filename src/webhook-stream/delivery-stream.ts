import type { Socket } from 'node:net';
import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { WEBHOOK_GROUP, WEBHOOK_STREAM } from '../queue/queues.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';

/** Field names of a stream entry: the arrival time and the raw body. */
export const RECEIVED_FIELD = 'r';
export const BODY_FIELD = 'b';

export function webhookStreamKey(config: AppConfig, stream = WEBHOOK_STREAM): string {
  return `${config.REDIS_PREFIX}:${stream}`;
}

/**
 * The acknowledging side of the webhook: one XADD per delivery on a
 * connection of its own. It fails fast (no offline queue, a 2 s command
 * timeout) so that a delivery is either written or refused with 503 in time
 * for the platform to deliver again.
 *
 * No auto-pipelining: it holds one batch in flight and queues the next
 * behind it, and under load the requests waiting there (their bodies,
 * commands and replies) outlived two young-generation collections: about
 * 2 KB a request went to the old generation, a full collection (a 15–20 ms
 * pause) came more than once a second at 7,000 deliveries/s and set the
 * p99. Each XADD on its own promotes next to nothing.
 *
 * The XADDs of one turn of the event loop (the deliveries whose bodies came
 * in together) still leave in one write: the socket is corked at the first
 * and uncorked once the turn's I/O callbacks have run (setImmediate). A
 * write per XADD was the largest item of the route's profile (29%): each one
 * a system call that woke Redis. Nothing waits for a reply in flight, so
 * nothing is held longer than the turn it arrived in.
 */
@Injectable()
export class DeliveryStream implements OnApplicationShutdown {
  private readonly redis: Redis;
  private readonly key: string;
  /** The socket corked until the end of this turn of the event loop, if it is. */
  private corked?: Socket;
  private readonly uncork = () => {
    this.corked?.uncork();
    this.corked = undefined;
  };

  constructor(config: AppConfig, metrics: MetricsService) {
    this.key = webhookStreamKey(config);
    this.redis = new Redis(config.REDIS_URL, {
      enableOfflineQueue: false,
      enableAutoPipelining: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      commandTimeout: 2000,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.redis.on('error', () => undefined);
    metrics.addQueueReader(async () => [
      { queue: 'webhook-deliveries', counts: await streamCounts(this.redis, this.key) },
    ]);
  }

  /** The body as received: a Buffer is written as it is, without a copy into a string. */
  async add(body: Buffer | string, receivedAt: number): Promise<void> {
    this.coalesce();
    await this.redis.xadd(this.key, '*', RECEIVED_FIELD, String(receivedAt), BODY_FIELD, body);
  }

  /** Holds this turn's writes to Redis, to go out together once its I/O callbacks have run. */
  private coalesce(): void {
    const socket = this.redis.status === 'ready' ? this.redis.stream : undefined;
    if (this.corked || !socket?.writable) return;
    socket.cork();
    this.corked = socket;
    setImmediate(this.uncork);
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }
}

/** Deliveries not yet taken by a worker (waiting) and taken but not yet done (active). */
export async function streamCounts(redis: Redis, key: string): Promise<Record<string, number>> {
  const groups = (await redis.xinfo('GROUPS', key).catch(() => [])) as unknown[][];
  const group = groups
    .map((fields) => Object.fromEntries(pairs(fields)))
    .find((info) => info.name === WEBHOOK_GROUP);
  const length = await redis.xlen(key);
  return {
    waiting: Number(group?.lag ?? length),
    active: Number(group?.pending ?? 0),
  };
}

function pairs(fields: unknown[]): Array<[string, unknown]> {
  const result: Array<[string, unknown]> = [];
  for (let i = 0; i + 1 < fields.length; i += 2) result.push([String(fields[i]), fields[i + 1]]);
  return result;
}
