import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { WEBHOOK_GROUP } from '../queue/queues.js';
import { AppConfig } from '../config/app-config.js';
import { REDIS_CLIENT } from '../redis/redis.constants.js';
import { webhookStreamKey } from './delivery-stream.js';

/** Workers this close behind the webhook keep up: nothing is held for them. */
export const KEEPING_UP_MS = 1000;
/** One look at the stream serves every flush of this process for this long. */
const CACHE_MS = 100;
/**
 * A delivery taken this recently is in a worker's hands (being stored); one
 * taken longer ago belongs to a worker that died or is stuck, and one that
 * failed is aged past this at once (DeliveryConsumer): both are left to the
 * takeover (DELIVERY_LEASE_S) rather than holding every buffer back.
 */
export const IN_HAND_MS = 10_000;
/**
 * Taken deliveries looked at for the oldest in hand (oldest first): room for
 * a few dead workers' batches (4 readers × 200 each) ahead of the live ones.
 */
const IN_HAND_SCAN = 2000;

/** A stream entry id, `<ms>-<seq>`, as numbers. */
function entryId(id: string): [number, number] {
  const [ms, seq] = id.split('-');
  return [Number(ms), Number(seq ?? 0)];
}

/** The string fields of an XINFO reply (`[name, value, …]`). */
function fieldsOf(reply: unknown): Map<string, string> {
  const fields = new Map<string, string>();
  if (!Array.isArray(reply)) return fields;
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const value: unknown = reply[i + 1];
    if (typeof value === 'string') fields.set(String(reply[i]), value);
  }
  return fields;
}

/** How far the workers have read the webhook stream. */
export interface ReadPosition {
  /**
   * Arrival time (ms since epoch) up to which every delivery has been read
   * and stored (or left to a takeover, see IN_HAND_MS); null: all.
   */
  readUpTo: number | null;
  /** Deliveries wait unread, or unstored, for more than KEEPING_UP_MS: a backlog. */
  behind: boolean;
}

const ALL_READ: ReadPosition = { readUpTo: null, behind: false };

/**
 * What a backlog holds back: the contact buffers, which wait for a burst to
 * be stored whole. ContactBuffer is the one; the consumer releases it when
 * the workers catch up.
 */
export abstract class BacklogHold {
  /** The workers caught up: what was held is looked at again at once. */
  abstract release(): Promise<void>;
}

/**
 * How far behind the webhook the workers are. While deliveries wait unread
 * in the stream, or read but still being stored, a contact's burst may be
 * only partly stored: its buffer is held until everything that arrived
 * before the buffer is due has been stored (or left to a takeover), so the
 * agent gets the burst the user typed, not fragments of it. Behind a backlog (after an outage of the
 * workers, or a burst bigger than they take at once) only the max wait
 * counts, so a backlog is drained in far fewer turns.
 */
@Injectable()
export class DeliveryBacklog {
  private readonly key: string;
  private cached?: { at: number; value: Promise<ReadPosition> };

  constructor(
    config: AppConfig,
    @Inject(REDIS_CLIENT) private readonly redis: Redis,
  ) {
    this.key = webhookStreamKey(config);
  }

  /** Where the workers are (looked up at most every CACHE_MS; all read when the stream cannot be read). */
  position(): Promise<ReadPosition> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at > CACHE_MS) {
      this.cached = { at: now, value: this.read(now) };
    }
    return this.cached.value;
  }

  /** Forgets what was read of the stream (the workers just caught up). */
  forget(): void {
    this.cached = undefined;
  }

  /** Whether the workers keep up with the webhook (looked up afresh). */
  async caughtUp(): Promise<boolean> {
    this.forget();
    return !(await this.position()).behind;
  }

  private async read(now: number): Promise<ReadPosition> {
    try {
      const replies = await this.redis
        .pipeline()
        .xinfo('STREAM', this.key)
        .xinfo('GROUPS', this.key)
        .xpending(this.key, WEBHOOK_GROUP, '-', '+', IN_HAND_SCAN)
        .exec();
      const [[streamError, stream], [groupsError, groups], [, pending]] = replies ?? [];
      if (streamError || groupsError) return ALL_READ;
      const lastAdded = fieldsOf(stream).get('last-generated-id') ?? '0-0';
      const group = (Array.isArray(groups) ? groups : [])
        .map(fieldsOf)
        .find((fields) => fields.get('name') === WEBHOOK_GROUP);
      // No group yet: no worker has read anything (and none is in hand).
      const [readMs, readSeq] = entryId(group?.get('last-delivered-id') ?? '0-0');
      const [addedMs, addedSeq] = entryId(lastAdded);
      const allRead = readMs > addedMs || (readMs === addedMs && readSeq >= addedSeq);
      // A fresh delivery in hand is the race any live burst has; an old one is a backlog being stored.
      const inHand = oldestInHand(pending);
      const storing = inHand !== null && now - inHand > KEEPING_UP_MS ? inHand : null;
      if (allRead && storing === null) return ALL_READ;
      const upTo = Math.min(allRead ? Infinity : readMs, storing ?? Infinity);
      return { readUpTo: upTo, behind: now - upTo > KEEPING_UP_MS };
    } catch {
      return ALL_READ;
    }
  }
}

/**
 * The arrival time of the oldest delivery a worker is storing, from an
 * XPENDING reply (`[id, consumer, idle ms, times taken]`, oldest first); null: none.
 */
function oldestInHand(reply: unknown): number | null {
  if (!Array.isArray(reply)) return null;
  for (const entry of reply as unknown[]) {
    if (!Array.isArray(entry)) continue;
    const [id, , idle] = entry as [unknown, unknown, unknown];
    if (typeof id === 'string' && Number(idle) < IN_HAND_MS) return entryId(id)[0];
  }
  return null;
}
