import { setTimeout as sleep } from 'node:timers/promises';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Redis } from 'ioredis';
import { WEBHOOK_DEAD_STREAM, WEBHOOK_GROUP, type WebhookDelivery } from '../queue/queues.js';
import { newLeaseOwner } from '../common/lease-owner.js';
import { isDependencyUnavailable } from '../common/unavailable.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';
import { BacklogHold, DeliveryBacklog, IN_HAND_MS, KEEPING_UP_MS } from './delivery-backlog.js';
import { DeliveryHandler } from './delivery-handler.js';
import { BODY_FIELD, RECEIVED_FIELD, webhookStreamKey } from './delivery-stream.js';

/** Deliveries taken at once: one set of statements for all of them. */
const BATCH = 200;
/**
 * Readers per process: batches are stored while others are read, so the
 * worker's CPU and PostgreSQL's overlap (2 left the worker idle a third of a drain).
 */
const READERS = 4;
/** How long a read waits for new deliveries. */
const BLOCK_MS = 2000;
/** After this many failed attempts a delivery is set aside in the dead stream. */
const MAX_ATTEMPTS = 10;

type Entry = [id: string, fields: string[]];

/** Redis answers NOGROUP for a stream or group it does not have (a new stream, or restarted empty). */
function isNoGroup(error: unknown): boolean {
  return String((error as Error)?.message).includes('NOGROUP');
}

function delivery([, fields]: Entry): WebhookDelivery {
  const value = (name: string) => fields[fields.indexOf(name) + 1] ?? '';
  return { body: value(BODY_FIELD), receivedAt: Number(value(RECEIVED_FIELD)) || Date.now() };
}

/**
 * The workers' side of the webhook stream: a Redis consumer group, read in
 * batches, each handed to the DeliveryHandler (InboundService) to be stored.
 * A batch is acknowledged (and deleted) only once stored. While
 * PostgreSQL or Redis is away the batch is stored again after a pause; a
 * batch that fails for another reason is stored delivery by delivery, and a
 * delivery that still fails stays pending. Pending deliveries (a failure, or
 * a worker that died) are taken over once DELIVERY_LEASE_S passes; a
 * delivery taken MAX_ATTEMPTS times goes to the dead stream, logged and
 * counted. A Redis restarted empty gets its group back.
 */
@Injectable()
export class DeliveryConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryConsumer.name);
  private readonly key: string;
  private readonly deadKey: string;
  /** A delivery taken by a worker that has not finished it this long is taken over. */
  private readonly orphanIdleMs: number;
  private readonly name = newLeaseOwner();
  private readonly readers: Redis[] = [];
  private running = false;
  private readonly stopping = new AbortController();
  private loops: Array<Promise<void>> = [];
  private claimTimer?: NodeJS.Timeout;
  private claiming?: Promise<void>;
  private lastWarning = 0;
  /** Whether the last batch read was full and more than a second old (the workers are behind). */
  private behind = false;

  constructor(
    config: AppConfig,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    private readonly handler: DeliveryHandler,
    private readonly backlog: DeliveryBacklog,
    private readonly held: BacklogHold,
    private readonly metrics: MetricsService,
  ) {
    this.key = webhookStreamKey(config);
    this.deadKey = webhookStreamKey(config, WEBHOOK_DEAD_STREAM);
    this.orphanIdleMs = config.DELIVERY_LEASE_S * 1000;
    for (let i = 0; i < READERS; i++) {
      // Blocking reads need connections of their own, with room for the block. They
      // fail fast while Redis is away (the loop pauses), so shutdown never waits on one.
      const reader = new Redis(config.REDIS_URL, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        commandTimeout: BLOCK_MS + 3000,
        retryStrategy: (times) => Math.min(times * 200, 2000),
      });
      reader.on('error', () => undefined);
      this.readers.push(reader);
    }
  }

  onApplicationBootstrap(): void {
    this.running = true;
    this.loops = this.readers.map((reader, i) => this.consume(reader, `${this.name}/${i}`));
    this.claimTimer = setInterval(() => {
      this.claiming ??= this.claimOrphans().finally(() => (this.claiming = undefined));
    }, this.orphanIdleMs / 2);
    this.claimTimer.unref();
  }

  /** Finishes the batches in hand; reads and pauses are cut short. */
  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    clearInterval(this.claimTimer);
    for (const reader of this.readers) reader.disconnect();
    await Promise.all([...this.loops, this.claiming]);
  }

  private async consume(reader: Redis, consumer: string): Promise<void> {
    let pause = 0;
    while (this.running) {
      try {
        const entries = await this.read(reader, consumer);
        pause = 0;
        if (entries.length > 0 && !(await this.store(entries, consumer))) return;
        await this.noteProgress(entries);
      } catch (error) {
        if (!this.running) return;
        pause = await this.backOff(error, pause);
      }
    }
  }

  /**
   * Stores a batch taken from the stream, trying again after a pause while
   * PostgreSQL or Redis is away (the batch stays in hand: taking it again
   * would count as another attempt). False when the process stops first:
   * the batch is left pending, for another worker to take over.
   */
  private async store(entries: Entry[], consumer: string): Promise<boolean> {
    for (let pause = 0; ;) {
      try {
        await this.handle(entries, consumer);
        return true;
      } catch (error) {
        if (!this.running) return false;
        pause = await this.backOff(error, pause);
        if (!this.running) return false;
      }
    }
  }

  /** Waits after a failure: 0.5 s, doubling up to 30 s; cut short when the process stops. */
  private async backOff(error: unknown, previous: number): Promise<number> {
    const pause = Math.min(30_000, Math.max(500, previous * 2));
    this.warn(error, pause);
    await sleep(pause, undefined, { signal: this.stopping.signal }).catch(() => undefined);
    return pause;
  }

  /**
   * Tracks whether the workers are behind the webhook (full batches of
   * deliveries more than a second old); when they catch up (a batch or a
   * look at the stream shows nothing left unread), the buffers the backlog
   * held are looked at again at once.
   */
  private async noteProgress(entries: Entry[]): Promise<void> {
    const newest = entries.length > 0 ? Number(entries[entries.length - 1][0].split('-')[0]) : 0;
    const old = entries.length === BATCH && Date.now() - newest > KEEPING_UP_MS;
    if (!this.behind) {
      this.behind = old;
      return;
    }
    if (old && !(await this.backlog.caughtUp())) return;
    this.behind = false;
    try {
      await this.held.release();
    } catch (error) {
      // The held buffers' own flushes look again within seconds.
      this.logger.warn(
        { err: (error as Error)?.message },
        'caught up with the webhook, but the waiting buffers could not be released at once',
      );
    }
  }

  private async read(reader: Redis, consumer: string): Promise<Entry[]> {
    const args = [
      'GROUP',
      WEBHOOK_GROUP,
      consumer,
      'COUNT',
      BATCH,
      'BLOCK',
      BLOCK_MS,
      'STREAMS',
      this.key,
      '>',
    ] as const;
    let answer: unknown;
    try {
      answer = await reader.xreadgroup(...args);
    } catch (error) {
      if (!isNoGroup(error)) throw error;
      // A new stream, or Redis restarted empty: the group is (re)made, from the start.
      await this.redis
        .xgroup('CREATE', this.key, WEBHOOK_GROUP, '0', 'MKSTREAM')
        .catch((created: Error) => {
          if (!created.message.includes('BUSYGROUP')) throw created;
        });
      answer = await reader.xreadgroup(...args);
    }
    const streams = answer as Array<[string, Entry[]]> | null;
    return streams?.[0]?.[1]?.filter(([, fields]) => fields !== null) ?? [];
  }

  /**
   * Stores a batch and acknowledges it. A batch that fails because a
   * dependency is away stays pending and is read again after a pause. One
   * that fails for another reason is tried delivery by delivery, so a
   * delivery that cannot be processed holds up only itself: it stays pending
   * and is tried again once its lease passes (see claimOrphans), at most
   * MAX_ATTEMPTS times in all.
   */
  private async handle(entries: Entry[], consumer: string): Promise<void> {
    if (entries.length > 1) {
      try {
        await this.handler.processBatch(entries.map(delivery));
        await this.done(entries.map(([id]) => id));
        return;
      } catch (error) {
        if (isDependencyUnavailable(error)) throw error;
      }
    }
    for (const entry of entries) {
      try {
        await this.handler.processBatch([delivery(entry)]);
        await this.done([entry[0]]);
      } catch (error) {
        if (isDependencyUnavailable(error)) throw error;
        await this.failed(entry, consumer, error);
      }
    }
  }

  private async done(ids: string[]): Promise<void> {
    try {
      await this.redis
        .multi()
        .xack(this.key, WEBHOOK_GROUP, ...ids)
        .xdel(this.key, ...ids)
        .exec();
    } catch (error) {
      // Redis restarted empty while the batch was being stored: nothing left to acknowledge.
      if (!isNoGroup(error)) throw error;
    }
  }

  /**
   * A delivery failed: it is tried again later, or, once it has been taken
   * MAX_ATTEMPTS times (Redis counts every time a worker takes it), it goes
   * to the dead stream with the error, logged and counted.
   */
  private async failed(entry: Entry, consumer: string, error: unknown): Promise<void> {
    const [id] = entry;
    let pending: [string, string, number, number] | undefined;
    try {
      [pending] = (await this.redis.xpending(this.key, WEBHOOK_GROUP, id, id, 1)) as Array<
        [string, string, number, number]
      >;
    } catch (error) {
      if (isNoGroup(error)) return;
      throw error;
    }
    const attempts = pending?.[3] ?? 0;
    const reason = String((error as Error)?.message ?? error);
    if (attempts < MAX_ATTEMPTS) {
      this.logger.warn(
        { entryId: id, consumer, attempts, err: reason },
        'webhook delivery could not be processed; it is tried again later',
      );
      // Waiting for a takeover, not in hand: buffers are not held for it
      // (JUSTID: not counted as another attempt).
      await this.redis
        .xclaim(this.key, WEBHOOK_GROUP, consumer, 0, id, 'IDLE', IN_HAND_MS, 'JUSTID')
        .catch(() => undefined);
      return;
    }
    const { body, receivedAt } = delivery(entry);
    await this.redis
      .multi()
      .xadd(
        this.deadKey,
        '*',
        RECEIVED_FIELD,
        String(receivedAt),
        BODY_FIELD,
        body,
        'error',
        reason,
        'id',
        id,
      )
      .xack(this.key, WEBHOOK_GROUP, id)
      .xdel(this.key, id)
      .exec();
    this.metrics.webhookDeliveries.inc({ outcome: 'dead' });
    this.logger.error(
      { entryId: id, consumer, attempts, err: reason },
      'webhook delivery set aside in the dead stream after repeated failures',
    );
  }

  /**
   * Takes over deliveries another worker took and did not finish within
   * DELIVERY_LEASE_S (it died), and processes them; those tried too often go
   * to the dead stream.
   */
  private async claimOrphans(): Promise<void> {
    try {
      const pending = (await this.redis.xpending(
        this.key,
        WEBHOOK_GROUP,
        'IDLE',
        this.orphanIdleMs,
        '-',
        '+',
        BATCH,
      )) as Array<[string, string, number, number]>;
      if (pending.length === 0) return;
      const consumer = `${this.name}/0`;
      const claimed = (await this.redis.xclaim(
        this.key,
        WEBHOOK_GROUP,
        consumer,
        this.orphanIdleMs,
        ...pending.map(([id]) => id),
      )) as Entry[];
      const attempts = new Map(pending.map(([id, , , count]) => [id, count]));
      const live: Entry[] = [];
      for (const entry of claimed.filter(([, fields]) => fields !== null)) {
        // Taken once more by this claim: past the limit, set aside without another try.
        if ((attempts.get(entry[0]) ?? 0) + 1 > MAX_ATTEMPTS) {
          await this.failed(entry, consumer, new Error('taken over too many times'));
        } else {
          live.push(entry);
        }
      }
      if (live.length > 0) {
        this.logger.warn(
          { count: live.length },
          'took over webhook deliveries a worker left unfinished',
        );
        await this.handle(live, consumer);
      }
    } catch (error) {
      this.warn(error, this.orphanIdleMs / 2);
    }
  }

  private warn(error: unknown, retryInMs: number): void {
    if (Date.now() - this.lastWarning < 10_000) return;
    this.lastWarning = Date.now();
    this.logger.warn(
      { err: (error as Error)?.message, retryInMs },
      'webhook deliveries not processed yet; trying again',
    );
  }
}
