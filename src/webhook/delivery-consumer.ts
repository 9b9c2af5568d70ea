import { setTimeout as sleep } from 'node:timers/promises';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Redis } from 'ioredis';
import { WEBHOOK_DEAD_STREAM, WEBHOOK_GROUP, type WebhookDelivery } from '../common/queues.js';
import { isDependencyUnavailable } from '../common/unavailable.js';
import { AppConfig } from '../config/app-config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';
import { newLeaseOwner } from '../agent/turn-lease.js';
import { BODY_FIELD, RECEIVED_FIELD, webhookStreamKey } from './delivery-stream.js';
import { InboundService } from './inbound.service.js';

/** Deliveries taken at once: one set of statements for all of them. */
const BATCH = 200;
/** Readers per process: one batch is stored while the next is read. */
const READERS = 2;
/** How long a read waits for new deliveries. */
const BLOCK_MS = 2000;
/** A delivery taken by a worker that has not finished it this long is taken over. */
const ORPHAN_IDLE_MS = 30_000;
const CLAIM_INTERVAL_MS = 15_000;
/** After this many failed attempts a delivery is set aside in the dead stream. */
const MAX_ATTEMPTS = 10;

type Entry = [id: string, fields: string[]];

function delivery([, fields]: Entry): WebhookDelivery {
  const value = (name: string) => fields[fields.indexOf(name) + 1] ?? '';
  return { body: value(BODY_FIELD), receivedAt: Number(value(RECEIVED_FIELD)) || Date.now() };
}

/**
 * The workers' side of the webhook stream: a Redis consumer group, read in
 * batches. A batch is acknowledged (and deleted) only once stored; one that
 * fails stays pending and is read again after a pause (the database away) or
 * one by one (something in a delivery); a worker that dies leaves its pending
 * deliveries to be taken over after 30 s; a delivery failing 10 times goes to
 * the dead stream, logged and counted. A Redis restarted empty gets its group back.
 */
@Injectable()
export class DeliveryConsumer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryConsumer.name);
  private readonly key: string;
  private readonly deadKey: string;
  private readonly name = newLeaseOwner();
  private readonly readers: Redis[] = [];
  private readonly failures = new Map<string, number>();
  private running = false;
  private readonly stopping = new AbortController();
  private loops: Array<Promise<void>> = [];
  private claimTimer?: NodeJS.Timeout;
  private claiming?: Promise<void>;
  private lastWarning = 0;

  constructor(
    config: AppConfig,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
    private readonly inbound: InboundService,
    private readonly metrics: MetricsService,
  ) {
    this.key = webhookStreamKey(config);
    this.deadKey = webhookStreamKey(config, WEBHOOK_DEAD_STREAM);
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
    }, CLAIM_INTERVAL_MS);
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
    // First what this consumer took before and did not finish, then new deliveries.
    let pendingFirst = true;
    let pause = 0;
    while (this.running) {
      try {
        const entries = await this.read(reader, consumer, pendingFirst ? '0' : '>');
        if (entries.length === 0) {
          pendingFirst = false;
          continue;
        }
        await this.handle(entries, consumer);
        pause = 0;
      } catch (error) {
        if (!this.running) return;
        pendingFirst = true;
        pause = Math.min(30_000, Math.max(500, pause * 2));
        this.warn(error, pause);
        await sleep(pause, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      }
    }
  }

  private async read(reader: Redis, consumer: string, from: '0' | '>'): Promise<Entry[]> {
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
      from,
    ] as const;
    let answer: unknown;
    try {
      answer = await reader.xreadgroup(...args);
    } catch (error) {
      if (!String((error as Error).message).includes('NOGROUP')) throw error;
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
   * Stores a batch and acknowledges it. If the batch fails for another reason
   * than a dependency away, its deliveries are tried one by one, so one that
   * cannot be processed holds up only itself (and is set aside after 10 tries).
   */
  private async handle(entries: Entry[], consumer: string): Promise<void> {
    try {
      await this.inbound.processBatch(entries.map(delivery));
      await this.done(entries.map(([id]) => id));
      return;
    } catch (error) {
      if (entries.length === 1 || isDependencyUnavailable(error)) {
        if (entries.length === 1) await this.failed(entries[0], consumer, error);
        throw error;
      }
    }
    for (const entry of entries) {
      try {
        await this.inbound.processBatch([delivery(entry)]);
        await this.done([entry[0]]);
      } catch (error) {
        if (isDependencyUnavailable(error)) throw error;
        await this.failed(entry, consumer, error);
      }
    }
  }

  private async done(ids: string[]): Promise<void> {
    for (const id of ids) this.failures.delete(id);
    await this.redis
      .multi()
      .xack(this.key, WEBHOOK_GROUP, ...ids)
      .xdel(this.key, ...ids)
      .exec();
  }

  /** Counts a failed attempt; past MAX_ATTEMPTS the delivery goes to the dead stream. */
  private async failed(
    entry: Entry,
    consumer: string,
    error: unknown,
    attempts?: number,
  ): Promise<void> {
    const [id] = entry;
    const count = attempts ?? (this.failures.get(id) ?? 0) + 1;
    this.failures.set(id, count);
    if (count < MAX_ATTEMPTS) return;
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
        String((error as Error)?.message ?? error),
        'id',
        id,
      )
      .xack(this.key, WEBHOOK_GROUP, id)
      .xdel(this.key, id)
      .exec();
    this.failures.delete(id);
    this.metrics.webhookDeliveries.inc({ outcome: 'dead' });
    this.logger.error(
      { entryId: id, consumer, attempts: count, err: (error as Error)?.message },
      'webhook delivery set aside in the dead stream after repeated failures',
    );
  }

  /**
   * Takes over deliveries another worker took and did not finish for 30 s
   * (it died), and processes them; those tried too often go to the dead stream.
   */
  private async claimOrphans(): Promise<void> {
    try {
      const pending = (await this.redis.xpending(
        this.key,
        WEBHOOK_GROUP,
        'IDLE',
        ORPHAN_IDLE_MS,
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
        ORPHAN_IDLE_MS,
        ...pending.map(([id]) => id),
      )) as Entry[];
      const attempts = new Map(pending.map(([id, , , count]) => [id, count]));
      const live: Entry[] = [];
      for (const entry of claimed.filter(([, fields]) => fields !== null)) {
        if ((attempts.get(entry[0]) ?? 0) >= MAX_ATTEMPTS) {
          await this.failed(entry, consumer, new Error('taken over too many times'), MAX_ATTEMPTS);
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
      this.warn(error, CLAIM_INTERVAL_MS);
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
