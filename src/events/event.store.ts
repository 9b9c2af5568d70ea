import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { StoredSecret } from '../crypto/stale-secrets.js';
import { laneOrder } from '../database/lock-order.js';
import {
  prepared,
  QUERY_CANCELED,
  rows,
  sqlState,
  timedTransaction,
  type Queryable,
} from '../database/sql.js';
import type {
  ClaimedDelivery,
  DeliveryState,
  EventDeliveryRow,
  EventSubscription,
  LaneResult,
} from './event.types.js';

/** The columns a create sets. */
export type NewSubscription = Pick<
  EventSubscription,
  'id' | 'url' | 'instance_id' | 'event_types' | 'description' | 'enabled' | 'secret_encrypted'
>;

/** The columns a change may set. */
export type SubscriptionChanges = Partial<
  Pick<
    EventSubscription,
    | 'url'
    | 'event_types'
    | 'description'
    | 'enabled'
    | 'secret_encrypted'
    | 'previous_secret_encrypted'
    | 'previous_secret_until'
  >
>;

const CHANGEABLE: ReadonlyArray<keyof SubscriptionChanges> = [
  'url',
  'event_types',
  'description',
  'enabled',
  'secret_encrypted',
  'previous_secret_encrypted',
  'previous_secret_until',
];

/** The columns holding signing secrets (encrypted, bound to the subscription id). */
export type SubscriptionSecretColumn = 'secret_encrypted' | 'previous_secret_encrypted';

/** What a replay did: queued so many events, or found another replay running, or ran out of time. */
export type ReplayOutcome =
  { kind: 'queued'; queued: number } | { kind: 'running' } | { kind: 'timed_out' };

/** A subscription disabled by its failures, and why. */
export interface Disabled {
  id: string;
  reason: string;
}

const DELIVERY_COLUMNS = `d.id, d.seq, d.subscription_id, e.id AS event_id, e.type AS event_type,
  e.created_at AS event_created_at, d.state, d.attempts, d.last_attempt_at, d.last_status,
  d.last_response, d.last_error, d.delivered_at, d.created_at,
  CASE WHEN d.state = 'pending' AND s.enabled
    THEN COALESCE(d.next_attempt_at, l.next_attempt_at) END AS next_attempt_at`;

const DELIVERY_FROM = `event_deliveries d
  JOIN events e ON e.seq = d.event_seq
  JOIN event_subscriptions s ON s.id = d.subscription_id
  LEFT JOIN event_lanes l ON l.subscription_id = d.subscription_id AND l.lane = d.lane`;

/**
 * The only home of SQL on `events`, `event_subscriptions`,
 * `event_deliveries` and `event_lanes`. Events themselves are written by
 * triggers with the changes they report (each in its owner's `*.sql.ts`), and
 * fanned out to deliveries and lanes by triggers too; this store leases
 * lanes, records attempts and serves the admin routes.
 */
@Injectable()
export class EventStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insertSubscription(subscription: NewSubscription): Promise<EventSubscription> {
    const [row] = await rows<EventSubscription>(
      this.db,
      `INSERT INTO event_subscriptions
         (id, url, instance_id, event_types, description, enabled, secret_encrypted)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [
        subscription.id,
        subscription.url,
        subscription.instance_id,
        subscription.event_types,
        subscription.description,
        subscription.enabled,
        subscription.secret_encrypted,
      ],
    );
    return row;
  }

  /** How many subscriptions share an instance scope (null: those for every instance). */
  async countFor(instanceId: string | null): Promise<number> {
    const [row] = await rows<{ n: number }>(
      this.db,
      `SELECT count(*)::int AS n FROM event_subscriptions WHERE instance_id IS NOT DISTINCT FROM $1`,
      [instanceId],
    );
    return row.n;
  }

  list(instanceId?: string): Promise<EventSubscription[]> {
    return rows(
      this.db,
      `SELECT * FROM event_subscriptions WHERE $1::uuid IS NULL OR instance_id = $1
       ORDER BY created_at, id`,
      [instanceId ?? null],
    );
  }

  async find(id: string): Promise<EventSubscription | null> {
    const [row] = await rows<EventSubscription>(
      this.db,
      'SELECT * FROM event_subscriptions WHERE id = $1',
      [id],
    );
    return row ?? null;
  }

  /**
   * Applies the changes; null when the subscription is gone. Enabling clears
   * the failure record and wakes its waiting events; disabling parks them.
   */
  async update(id: string, changes: SubscriptionChanges): Promise<EventSubscription | null> {
    const columns = CHANGEABLE.filter((column) => changes[column] !== undefined);
    const sets = columns.map((column, i) => `${column} = $${i + 2}`);
    if (changes.enabled === true) sets.push('failing_since = NULL', 'disabled_reason = NULL');
    if (changes.enabled === false) sets.push(`disabled_reason = 'disabled by an admin'`);
    // One transaction: a crash between the two cannot leave an enabled subscription's lanes parked.
    return this.db.transaction(async (manager) => {
      const [row] = await rows<EventSubscription>(
        manager,
        `UPDATE event_subscriptions SET ${[...sets, 'updated_at = now()'].join(', ')}
         WHERE id = $1 RETURNING *`,
        [id, ...columns.map((column) => changes[column])],
      );
      if (row && changes.enabled !== undefined) {
        await this.parkLanes([id], !changes.enabled, manager);
      }
      return row ?? null;
    });
  }

  /**
   * Deletes a subscription with its deliveries and lanes, in the lock order
   * (database/lock-order.ts): the subscription, then its lanes, and only then
   * (the cascade) its deliveries. A finish in flight holds a lane and then
   * writes its deliveries; the cascade alone took deliveries before lanes.
   */
  async delete(id: string): Promise<boolean> {
    return this.db.transaction(async (manager) => {
      const [found] = await rows(
        manager,
        'SELECT id FROM event_subscriptions WHERE id = $1 FOR UPDATE',
        [id],
      );
      if (!found) return false;
      await manager.query(
        `SELECT 1 FROM event_lanes l WHERE l.subscription_id = $1
         ORDER BY ${laneOrder('l')} FOR UPDATE`,
        [id],
      );
      await manager.query('DELETE FROM event_subscriptions WHERE id = $1', [id]);
      return true;
    });
  }

  /**
   * Leases up to `lanes` due lanes of enabled subscriptions for `leaseS`
   * seconds and returns up to `perLane` of each one's pending deliveries, in
   * event order, with what sending them takes.
   */
  claim(owner: string, lanes: number, perLane: number, leaseS: number): Promise<ClaimedDelivery[]> {
    return prepared<ClaimedDelivery>(
      this.db,
      'event_lanes_claim',
      `WITH due AS (
         SELECT l.subscription_id, l.lane FROM event_lanes l
         JOIN event_subscriptions s ON s.id = l.subscription_id AND s.enabled
         WHERE l.next_attempt_at <= now() AND (l.leased_until IS NULL OR l.leased_until < now())
         ORDER BY l.next_attempt_at
         LIMIT $2
         FOR UPDATE OF l SKIP LOCKED
       ), leased AS (
         UPDATE event_lanes l SET lease_owner = $1,
           leased_until = now() + $4::float8 * interval '1 second'
         FROM due WHERE l.subscription_id = due.subscription_id AND l.lane = due.lane
         RETURNING l.subscription_id, l.lane
       )
       SELECT d.seq, d.subscription_id, d.lane, d.failures, e.id AS event_id,
         e.created_at AS event_created_at,
         json_build_object('id', e.id, 'type', e.type, 'created_at', mc_iso(e.created_at),
           'instance_id', e.instance_id, 'data', e.data)::text AS body,
         s.url, s.secret_encrypted, s.previous_secret_encrypted, s.previous_secret_until
       FROM leased
       JOIN LATERAL (
         SELECT * FROM event_deliveries d
         WHERE d.subscription_id = leased.subscription_id AND d.lane = leased.lane
           AND d.state = 'pending'
         ORDER BY d.event_seq LIMIT $3
       ) d ON true
       JOIN events e ON e.seq = d.event_seq
       JOIN event_subscriptions s ON s.id = d.subscription_id
       ORDER BY d.subscription_id, d.lane, d.event_seq`,
      [owner, lanes, perLane, leaseS],
    );
  }

  /**
   * Records the attempts of leased lanes and lets the lanes go on (now, or
   * when a failed head is due again), in one statement; a success also ends
   * its subscription's run of failures (`healthy`). A lane whose lease another
   * worker has taken meanwhile is left to it; attempts on deliveries no longer
   * pending are not recorded twice. The lanes are locked in the one order
   * (database/lock-order.ts): a message stored meanwhile (its events fan out
   * to the same lanes) then waits instead of deadlocking. How many of the
   * released lanes, due now, still hold deliveries besides those just
   * attempted: events that came while they were leased, which no claim could
   * take.
   */
  async finish(results: LaneResult[], healthy: string[]): Promise<number> {
    const attempts = results.flatMap((lane) => lane.attempts);
    const released = await prepared<{
      subscription_id: string;
      lane: string;
      pending: number;
      /** 'infinity' (a disabled subscription's) comes as Infinity. */
      next_attempt_at: Date | number;
    }>(
      this.db,
      'event_lanes_finish',
      `WITH attempted AS (
         UPDATE event_deliveries d SET state = a.state, attempts = d.attempts + 1,
           failures = a.failures, last_attempt_at = now(), last_status = a.status,
           last_response = a.response, last_error = a.error, next_attempt_at = a.next_attempt_at,
           delivered_at = CASE WHEN a.state = 'delivered' THEN now() END
         FROM unnest($1::bigint[], $2::text[], $3::int[], $4::int[], $5::text[], $6::text[],
                     $7::timestamptz[])
           AS a(seq, state, failures, status, response, error, next_attempt_at)
         WHERE d.seq = a.seq AND d.state = 'pending'
         RETURNING d.seq
       ), subscriptions AS (
         -- The key share the lanes' foreign key takes anyway (PostgreSQL checks it again
         -- when the counters' trigger updates a lane this statement wrote), taken first:
         -- the subscriptions before their lanes (database/lock-order.ts).
         SELECT id FROM event_subscriptions WHERE id = ANY($8::uuid[]) ORDER BY id FOR KEY SHARE
       ), recovered AS (
         UPDATE event_subscriptions SET failing_since = NULL
         WHERE id = ANY($12::uuid[]) AND failing_since IS NOT NULL
         RETURNING id
       ), released AS (
         SELECT l.subscription_id, l.lane, r.next_attempt_at FROM event_lanes l
         JOIN unnest($8::uuid[], $9::text[], $10::uuid[], $11::timestamptz[])
           AS r(subscription_id, lane, owner, next_attempt_at)
           ON l.subscription_id = r.subscription_id AND l.lane = r.lane AND l.lease_owner = r.owner
         -- A filter PostgreSQL evaluates once, before the first lane: the subscriptions'
         -- locks come first.
         WHERE (SELECT count(*) FROM subscriptions) + (SELECT count(*) FROM recovered) >= 0
         ORDER BY ${laneOrder('l')}
         FOR NO KEY UPDATE OF l
       )
       UPDATE event_lanes l SET lease_owner = NULL, leased_until = NULL,
         next_attempt_at = CASE WHEN l.next_attempt_at = 'infinity' THEN l.next_attempt_at
                                ELSE r.next_attempt_at END
       FROM released r
       WHERE l.subscription_id = r.subscription_id AND l.lane = r.lane
       RETURNING l.subscription_id, l.lane, l.pending, l.next_attempt_at`,
      [
        attempts.map((a) => a.seq),
        attempts.map((a) => a.state),
        attempts.map((a) => a.failures),
        attempts.map((a) => a.status),
        attempts.map((a) => a.response),
        attempts.map((a) => a.error),
        attempts.map((a) => a.nextAttemptAt),
        results.map((r) => r.subscriptionId),
        results.map((r) => r.lane),
        results.map((r) => r.owner),
        results.map((r) => r.nextAttemptAt),
        healthy,
      ],
    );
    // The counters move when the statement ends: `pending` still counts what was attempted.
    const settled = new Map(
      results.map((lane) => [
        `${lane.subscriptionId} ${lane.lane}`,
        lane.attempts.filter((attempt) => attempt.state !== 'pending').length,
      ]),
    );
    // Only lanes due now: one waiting for a retry, or parked, is the poll's to find.
    const now = Date.now();
    return released.filter(
      (lane) =>
        +lane.next_attempt_at <= now &&
        lane.pending > (settled.get(`${lane.subscription_id} ${lane.lane}`) ?? 0),
    ).length;
  }

  /**
   * Notes failures: a run of them longer than `disableAfterS` disables the
   * subscription, and so does a 410 Gone (`gone`). The ones disabled now.
   */
  async markFailing(ids: string[], gone: string[], disableAfterS: number): Promise<Disabled[]> {
    if (ids.length === 0 && gone.length === 0) return [];
    await this.db.query(
      `UPDATE event_subscriptions SET failing_since = now()
       WHERE id = ANY($1::uuid[]) AND failing_since IS NULL`,
      [ids],
    );
    const disabled = await rows<Disabled>(
      this.db,
      `UPDATE event_subscriptions SET enabled = false, updated_at = now(),
         disabled_reason = CASE WHEN id = ANY($2::uuid[])
           THEN 'the endpoint answered 410 Gone'
           ELSE 'every delivery failed since ' || mc_iso(failing_since) END
       WHERE enabled AND (id = ANY($2::uuid[])
         OR id = ANY($1::uuid[]) AND failing_since < now() - $3::float8 * interval '1 second')
       RETURNING id, disabled_reason AS reason`,
      [ids, gone, disableAfterS],
    );
    await this.parkLanes(
      disabled.map((row) => row.id),
      true,
    );
    return disabled;
  }

  /**
   * Parks a disabled subscription's lanes (never due), or wakes an enabled
   * one's; locked in the lane order first, as a finish locks them.
   */
  private async parkLanes(ids: string[], park: boolean, db: Queryable = this.db): Promise<void> {
    if (ids.length === 0) return;
    await db.query(
      `UPDATE event_lanes l SET next_attempt_at = ${park ? `'infinity'` : 'now()'}
       FROM (SELECT subscription_id, lane FROM event_lanes
             WHERE subscription_id = ANY($1::uuid[])
             ORDER BY ${laneOrder('event_lanes')} FOR NO KEY UPDATE) locked
       WHERE l.subscription_id = locked.subscription_id AND l.lane = locked.lane`,
      [ids],
    );
  }

  /** Every stored signing secret: current ones, and previous ones still in their grace period. */
  secrets(): Promise<Array<StoredSecret<SubscriptionSecretColumn>>> {
    return rows(
      this.db,
      `SELECT id, 'secret_encrypted' AS column, secret_encrypted AS value FROM event_subscriptions
       UNION ALL
       SELECT id, 'previous_secret_encrypted', previous_secret_encrypted FROM event_subscriptions
       WHERE previous_secret_encrypted IS NOT NULL AND previous_secret_until > now()`,
    );
  }

  /** Replaces a secret only if nobody changed it meanwhile; whether it did. */
  async replaceSecret(
    secret: StoredSecret<SubscriptionSecretColumn>,
    next: string,
  ): Promise<boolean> {
    const { column } = secret;
    const updated = await rows(
      this.db,
      `UPDATE event_subscriptions SET ${column} = $3 WHERE id = $1 AND ${column} = $2 RETURNING id`,
      [secret.id, secret.value, next],
    );
    return updated.length > 0;
  }

  /** A page of a subscription's deliveries, newest first, after the delivery `before` (its seq). */
  listDeliveries(
    subscriptionId: string,
    before: string | null,
    state: DeliveryState | undefined,
    limit: number,
  ): Promise<EventDeliveryRow[]> {
    return rows(
      this.db,
      `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM}
       WHERE d.subscription_id = $1 AND ($2::bigint IS NULL OR d.seq < $2::bigint)
         AND ($3::text IS NULL OR d.state = $3)
       ORDER BY d.seq DESC LIMIT $4`,
      [subscriptionId, before, state ?? null, limit],
    );
  }

  async findDelivery(id: string): Promise<EventDeliveryRow | null> {
    const [row] = await rows<EventDeliveryRow>(
      this.db,
      `SELECT ${DELIVERY_COLUMNS} FROM ${DELIVERY_FROM} WHERE d.id = $1`,
      [id],
    );
    return row ?? null;
  }

  /**
   * Sends a delivery again as soon as the events before it for the same
   * contact are through: a failed one from the start of the retry schedule,
   * a pending one without waiting for its next attempt, a delivered one once more.
   */
  async retryDelivery(id: string): Promise<boolean> {
    // In the lock order (database/lock-order.ts): the subscription's key share (the lane the
    // counters' trigger may insert checks it), the lane, then the delivery.
    return this.db.transaction(async (manager) => {
      const [found] = await rows<{ subscription_id: string; lane: string }>(
        manager,
        'SELECT subscription_id, lane FROM event_deliveries WHERE id = $1',
        [id],
      );
      if (!found) return false;
      await manager.query('SELECT 1 FROM event_subscriptions WHERE id = $1 FOR KEY SHARE', [
        found.subscription_id,
      ]);
      await manager.query(
        `UPDATE event_lanes SET next_attempt_at = now()
         WHERE subscription_id = $1 AND lane = $2 AND next_attempt_at <> 'infinity'`,
        [found.subscription_id, found.lane],
      );
      const retried = await rows(
        manager,
        `UPDATE event_deliveries SET state = 'pending', failures = 0, next_attempt_at = NULL
         WHERE id = $1 RETURNING id`,
        [id],
      );
      return retried.length > 0;
    });
  }

  /**
   * Queues the events created in [since, until) that the subscription would
   * have received (its instance and types) for delivery again, oldest first,
   * at most `limit`, except those still pending for it (they go out anyway).
   * One replay of a subscription at a time (an advisory lock: another one
   * finds it `running`); one that takes longer than `timeoutMs` is cancelled
   * by PostgreSQL and rolled back (`timed_out`, nothing queued).
   */
  async replay(
    subscription: EventSubscription,
    since: Date,
    until: Date,
    limit: number,
    timeoutMs: number,
  ): Promise<ReplayOutcome> {
    try {
      return await timedTransaction(this.db, timeoutMs, async (query) => {
        const [lock] = await query<{ locked: boolean }>(
          `SELECT pg_try_advisory_xact_lock(hashtextextended('mc-event-replay:' || $1::text, 0))
             AS locked`,
          [subscription.id],
        );
        if (!lock.locked) return { kind: 'running' } as const;
        const [row] = await query<{ queued: number }>(
          `WITH queued AS (
             INSERT INTO event_deliveries (subscription_id, event_seq, lane)
             SELECT $1, e.seq, e.lane FROM events e
             -- One index probe per event, whatever the statistics say: as an anti-join,
             -- stale ones (a fresh burst of events) made it scan every pending delivery
             -- for every event.
             LEFT JOIN LATERAL (
               SELECT 1 AS found FROM event_deliveries d
               WHERE d.subscription_id = $1 AND d.lane = e.lane AND d.event_seq = e.seq
                 AND d.state = 'pending'
               LIMIT 1
             ) pending ON true
             WHERE e.created_at >= $2 AND e.created_at < $3 AND e.type = ANY($4::text[])
               AND ($5::uuid IS NULL OR e.instance_id = $5) AND pending.found IS NULL
             ORDER BY e.seq LIMIT $6
             RETURNING 1
           )
           SELECT count(*)::int AS queued FROM queued`,
          [
            subscription.id,
            since,
            until,
            subscription.event_types,
            subscription.instance_id,
            limit,
          ],
        );
        return { kind: 'queued', queued: row.queued } as const;
      });
    } catch (error) {
      if (sqlState(error) === QUERY_CANCELED) return { kind: 'timed_out' };
      throw error;
    }
  }

  /** A `ping` event addressed to one subscription, and its delivery's id. */
  async ping(subscription: EventSubscription): Promise<{ event_id: string; delivery_id: string }> {
    const [row] = await rows<{ event_id: string; delivery_id: string }>(
      this.db,
      `WITH e AS (
         INSERT INTO events (type, instance_id, lane, data)
         VALUES ('ping', $2, 'ping:' || gen_random_uuid(),
                 jsonb_build_object('subscription_id', $1::uuid, 'message', 'test event'))
         RETURNING seq, id, lane
       )
       INSERT INTO event_deliveries (subscription_id, event_seq, lane)
       SELECT $1, e.seq, e.lane FROM e
       RETURNING id AS delivery_id, (SELECT id FROM e) AS event_id`,
      [subscription.id, subscription.instance_id],
    );
    return row;
  }

  /**
   * Deliveries still to be made to enabled subscriptions (a disabled one's
   * wait for it, and are its own concern), and the age in seconds of the
   * oldest event among them.
   */
  async undeliveredSummary(): Promise<{ count: number; oldestAgeSeconds: number }> {
    const [summary] = await rows<{ count: number; age: number | null }>(
      this.db,
      `SELECT count(*)::int AS count, extract(epoch FROM now() - min(e.created_at))::float8 AS age
       FROM event_deliveries d
       JOIN event_subscriptions s ON s.id = d.subscription_id AND s.enabled
       JOIN events e ON e.seq = d.event_seq
       WHERE d.state = 'pending'`,
    );
    return { count: summary.count, oldestAgeSeconds: Math.max(0, summary.age ?? 0) };
  }

  /** Per subscription with events waiting, the age in seconds of the oldest. */
  oldestPending(): Promise<Array<{ subscription_id: string; age: number }>> {
    return rows(
      this.db,
      `SELECT l.subscription_id, extract(epoch FROM now() - min(e.created_at))::float8 AS age
       FROM event_lanes l
       JOIN LATERAL (
         SELECT d.event_seq FROM event_deliveries d
         WHERE d.subscription_id = l.subscription_id AND d.lane = l.lane AND d.state = 'pending'
         ORDER BY d.event_seq LIMIT 1
       ) head ON true
       JOIN events e ON e.seq = head.event_seq
       GROUP BY l.subscription_id`,
    );
  }

  /**
   * Deletes up to `limit` events older than `days` with nothing pending
   * (their deliveries go with them). How many it deleted.
   */
  async prune(days: number, limit: number): Promise<number> {
    const deleted = await rows(
      this.db,
      `DELETE FROM events WHERE seq IN (
         SELECT e.seq FROM events e
         WHERE e.created_at < now() - $1::float8 * interval '1 day'
           AND NOT EXISTS (SELECT 1 FROM event_deliveries d
                           WHERE d.event_seq = e.seq AND d.state = 'pending')
         ORDER BY e.created_at LIMIT $2)
       RETURNING seq`,
      [days, limit],
    );
    return deleted.length;
  }
}
