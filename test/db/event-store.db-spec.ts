import { randomUUID } from 'node:crypto';
import { EventStore } from '../../src/events/event.store.js';
import type { EventSubscription, LaneResult } from '../../src/events/event.types.js';
import { insertInstance, insertSubscription, useMigratedDatabase } from './support.js';

/**
 * The event outbox: EventStore's statements, and the SQL functions that
 * write, fan out and count events. Each case disables every subscription
 * left by the ones before, so the fan-out and the claim see only its own.
 */
const context = useMigratedDatabase();
let events: EventStore;

beforeAll(() => {
  events = new EventStore(context.source);
});

beforeEach(async () => {
  await context.db.query(`UPDATE event_subscriptions SET enabled = false WHERE enabled`);
});

/** Inserts events of `type` on `lanes` (one each, in order, one statement); their seqs. */
async function addEvents(instanceId: string | null, type: string, lanes: string[]) {
  const found = await context.db.query<{ seq: string; id: string }>(
    `INSERT INTO events (type, instance_id, lane, data)
     SELECT $1, $2, lane, jsonb_build_object('n', n) FROM unnest($3::text[]) WITH ORDINALITY AS l(lane, n)
     ORDER BY n RETURNING seq, id`,
    [type, instanceId, lanes],
  );
  return found.map((row) => row.seq);
}

async function deliveries(subscriptionId: string) {
  return context.db.query<{
    id: string;
    seq: string;
    event_seq: string;
    lane: string;
    state: string;
    attempts: number;
    failures: number;
    next_attempt_at: Date | null;
    delivered_at: Date | null;
    last_status: number | null;
  }>(
    `SELECT id, seq::text, event_seq::text, lane, state, attempts, failures, next_attempt_at,
       delivered_at, last_status
     FROM event_deliveries WHERE subscription_id = $1 ORDER BY seq`,
    [subscriptionId],
  );
}

async function lanes(subscriptionId: string) {
  return context.db.query<{
    lane: string;
    pending: number;
    lease_owner: string | null;
    leased_until: Date | null;
    parked: boolean;
    due: boolean;
  }>(
    `SELECT lane, pending, lease_owner, leased_until, next_attempt_at = 'infinity' AS parked,
       next_attempt_at <= now() AS due
     FROM event_lanes WHERE subscription_id = $1 ORDER BY lane`,
    [subscriptionId],
  );
}

async function subscription(id: string): Promise<EventSubscription> {
  return (await events.find(id))!;
}

/** A subscription of a fresh instance wanting message.received, and that instance. */
async function freshSubscription(types = ['message.received']) {
  const instanceId = await insertInstance(context.db);
  const subscriptionId = await insertSubscription(context.db, instanceId, types);
  return { instanceId, subscriptionId };
}

const lane = (suffix: string) => `contact:${randomUUID()}:${suffix}`;

describe('EventStore', () => {
  describe('subscriptions', () => {
    it('inserts, finds and lists a subscription, by instance or all', async () => {
      const instanceId = await insertInstance(context.db);
      const id = randomUUID();
      const created = await events.insertSubscription({
        id,
        url: 'https://example.test/hook',
        instance_id: instanceId,
        event_types: ['message.received', 'message.sent'],
        description: 'orders',
        enabled: true,
        secret_encrypted: 'secret-1',
      });
      expect(created).toMatchObject({
        id,
        url: 'https://example.test/hook',
        instance_id: instanceId,
        event_types: ['message.received', 'message.sent'],
        description: 'orders',
        enabled: true,
        disabled_reason: null,
        failing_since: null,
      });
      expect(await events.find(id)).toEqual(created);
      expect(await events.find(randomUUID())).toBeNull();
      expect((await events.list(instanceId)).map((s) => s.id)).toEqual([id]);
      expect((await events.list()).map((s) => s.id)).toContain(id);
      expect(await events.list(randomUUID())).toEqual([]);
    });

    it('counts the subscriptions of an instance scope, null counting those for every instance', async () => {
      const instanceId = await insertInstance(context.db);
      const everyBefore = await events.countFor(null);
      expect(await events.countFor(instanceId)).toBe(0);
      await insertSubscription(context.db, instanceId, ['message.sent']);
      await insertSubscription(context.db, instanceId, ['message.status']);
      await insertSubscription(context.db, null, ['message.status']);
      expect(await events.countFor(instanceId)).toBe(2);
      expect(await events.countFor(null)).toBe(everyBefore + 1);
    });

    it('updates the given columns only, and answers null for an unknown subscription', async () => {
      const { subscriptionId } = await freshSubscription();
      const before = await subscription(subscriptionId);
      const updated = await events.update(subscriptionId, {
        url: 'https://example.test/other',
        event_types: ['message.status'],
      });
      expect(updated).toMatchObject({
        url: 'https://example.test/other',
        event_types: ['message.status'],
        description: before.description,
        secret_encrypted: before.secret_encrypted,
        enabled: true,
      });
      expect(updated!.updated_at.getTime()).toBeGreaterThanOrEqual(before.updated_at.getTime());
      expect(await events.update(randomUUID(), { url: 'https://example.test/x' })).toBeNull();
    });

    it('parks the lanes of a subscription an admin disables and wakes them when enabled again', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      await addEvents(instanceId, 'message.received', [lane('a')]);
      await context.db.query(
        `UPDATE event_subscriptions SET failing_since = now() - interval '1 hour' WHERE id = $1`,
        [subscriptionId],
      );

      const disabled = await events.update(subscriptionId, { enabled: false });
      expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'disabled by an admin' });
      expect((await lanes(subscriptionId)).map((l) => l.parked)).toEqual([true]);
      expect(await events.claim(randomUUID(), 100, 10, 60)).toEqual([]);

      const enabled = await events.update(subscriptionId, { enabled: true });
      expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
      expect(await lanes(subscriptionId)).toEqual([
        expect.objectContaining({ parked: false, due: true }),
      ]);
    });

    it('deletes a subscription with its deliveries and lanes, once', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      await addEvents(instanceId, 'message.received', [lane('a')]);
      expect(await deliveries(subscriptionId)).toHaveLength(1);
      expect(await events.delete(subscriptionId)).toBe(true);
      expect(await events.find(subscriptionId)).toBeNull();
      expect(await deliveries(subscriptionId)).toEqual([]);
      expect(await lanes(subscriptionId)).toEqual([]);
      expect(await events.delete(subscriptionId)).toBe(false);
    });
  });

  describe('claim', () => {
    it('leases the due lanes of enabled subscriptions only, their deliveries in event order', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      const other = await insertSubscription(context.db, instanceId, ['message.received']);
      const [a, b] = [lane('a'), lane('b')];
      const seqs = await addEvents(instanceId, 'message.received', [a, b, a, a]);
      // Disabled after the fan-out, its lane still due: the claim must skip it.
      await context.db.query(`UPDATE event_subscriptions SET enabled = false WHERE id = $1`, [
        other,
      ]);
      const owner = randomUUID();

      const claimed = await events.claim(owner, 10, 2, 60);

      // Ordered by lane, then event; up to perLane (2) of each.
      const expected = [a, b].sort().flatMap((l) => (l === a ? [a, a] : [b]));
      expect(claimed.map((d) => [d.subscription_id, d.lane])).toEqual(
        expected.map((l) => [subscriptionId, l]),
      );
      const onA = claimed.filter((d) => d.lane === a);
      // The lane's oldest pending deliveries.
      const eventSeqs = await context.db.query<{ event_seq: string; seq: string }>(
        `SELECT event_seq::text, seq::text FROM event_deliveries WHERE seq = ANY($1::bigint[])`,
        [onA.map((d) => d.seq)],
      );
      expect(eventSeqs.map((row) => row.event_seq).sort()).toEqual([seqs[0], seqs[2]].sort());
      expect(Number(onA[0].seq)).toBeLessThan(Number(onA[1].seq));
      const body = JSON.parse(onA[0].body) as Record<string, unknown>;
      expect(body).toMatchObject({
        type: 'message.received',
        instance_id: instanceId,
        data: { n: 1 },
        id: onA[0].event_id,
      });
      expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(onA[0]).toMatchObject({ url: 'http://127.0.0.1:9/events', failures: 0 });

      expect(await lanes(subscriptionId)).toEqual(
        [a, b].sort().map((l): unknown =>
          expect.objectContaining({
            lane: l,
            lease_owner: owner,
            leased_until: expect.any(Date),
          }),
        ),
      );
      expect((await lanes(other)).every((l) => l.lease_owner === null)).toBe(true);
    });

    it('does not lease a lane twice while its lease runs, and again once it expired', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      await addEvents(instanceId, 'message.received', [lane('a')]);
      const first = randomUUID();
      expect(await events.claim(first, 10, 10, 60)).toHaveLength(1);
      expect(await events.claim(randomUUID(), 10, 10, 60)).toEqual([]);

      await context.db.query(
        `UPDATE event_lanes SET leased_until = now() - interval '1 second' WHERE subscription_id = $1`,
        [subscriptionId],
      );
      const second = randomUUID();
      expect(await events.claim(second, 10, 10, 60)).toHaveLength(1);
      expect((await lanes(subscriptionId))[0].lease_owner).toBe(second);
    });

    it('leaves a lane that is not due, and takes the most overdue first up to the limit', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      const [early, late, later] = [lane('early'), lane('late'), lane('later')];
      await addEvents(instanceId, 'message.received', [early, late, later]);
      await context.db.query(
        `UPDATE event_lanes SET next_attempt_at = CASE lane
           WHEN $2 THEN now() - interval '2 minutes'
           WHEN $3 THEN now() - interval '1 minute'
           ELSE now() + interval '1 hour' END
         WHERE subscription_id = $1`,
        [subscriptionId, early, late],
      );
      expect((await events.claim(randomUUID(), 1, 10, 60)).map((d) => d.lane)).toEqual([early]);
      expect((await events.claim(randomUUID(), 10, 10, 60)).map((d) => d.lane)).toEqual([late]);
      expect(await events.claim(randomUUID(), 10, 10, 60)).toEqual([]);
    });

    it('skips a lane another transaction has locked instead of waiting for it', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      const [locked, free] = [lane('locked'), lane('free')];
      await addEvents(instanceId, 'message.received', [locked, free]);
      const holder = await context.client();
      await holder.query('BEGIN');
      try {
        await holder.query(
          `SELECT 1 FROM event_lanes WHERE subscription_id = $1 AND lane = $2 FOR UPDATE`,
          [subscriptionId, locked],
        );
        expect((await events.claim(randomUUID(), 10, 10, 60)).map((d) => d.lane)).toEqual([free]);
      } finally {
        await holder.query('ROLLBACK');
      }
      expect((await events.claim(randomUUID(), 10, 10, 60)).map((d) => d.lane)).toEqual([locked]);
    });
  });

  describe('finish', () => {
    /** A subscription with `count` events on one lane, leased by `owner`. */
    async function leased(count: number) {
      const { instanceId, subscriptionId } = await freshSubscription();
      const l = lane('a');
      await addEvents(instanceId, 'message.received', Array<string>(count).fill(l));
      const owner = randomUUID();
      const claimed = await events.claim(owner, 10, 10, 60);
      expect(claimed).toHaveLength(count);
      return { instanceId, subscriptionId, lane: l, owner, claimed };
    }

    const delivered = (seq: string) => ({
      seq,
      state: 'delivered' as const,
      failures: 0,
      status: 200,
      response: 'ok',
      error: null,
      nextAttemptAt: null,
    });

    it('records the attempts, releases the lane and removes it once nothing is pending', async () => {
      const { subscriptionId, lane: l, owner, claimed } = await leased(2);
      const result: LaneResult = {
        subscriptionId,
        lane: l,
        owner,
        attempts: [delivered(claimed[0].seq)],
        nextAttemptAt: new Date(),
      };
      await events.finish([result], []);
      const [first, second] = await deliveries(subscriptionId);
      expect(first).toMatchObject({
        state: 'delivered',
        attempts: 1,
        last_status: 200,
        delivered_at: expect.any(Date),
      });
      expect(second).toMatchObject({ state: 'pending', attempts: 0 });
      expect(await lanes(subscriptionId)).toEqual([
        expect.objectContaining({ pending: 1, lease_owner: null, leased_until: null, due: true }),
      ]);

      // Recorded once: a delivery no longer pending is not counted again.
      await events.finish([{ ...result, attempts: [delivered(claimed[0].seq)] }], []);
      expect((await deliveries(subscriptionId))[0].attempts).toBe(1);

      expect(await events.claim(owner, 10, 10, 60)).toHaveLength(1);
      await events.finish([{ ...result, attempts: [delivered(claimed[1].seq)] }], []);
      expect(await lanes(subscriptionId)).toEqual([]);
    });

    it('tells how many released lanes still hold deliveries: events that came while they were leased', async () => {
      const { instanceId, subscriptionId, lane: l, owner, claimed } = await leased(1);
      const result: LaneResult = {
        subscriptionId,
        lane: l,
        owner,
        attempts: [delivered(claimed[0].seq)],
        nextAttemptAt: new Date(),
      };
      // An event of the lane stored while it is leased: no claim can take it yet.
      await addEvents(instanceId, 'message.received', [l]);
      expect(await events.claim(randomUUID(), 10, 10, 60)).toEqual([]);
      expect(await events.finish([result], [])).toBe(1);

      const again = await events.claim(owner, 10, 10, 60);
      expect(again).toHaveLength(1);
      expect(await events.finish([{ ...result, attempts: [delivered(again[0].seq)] }], [])).toBe(0);
      expect(await lanes(subscriptionId)).toEqual([]);
    });

    it('keeps a failed head pending until its next attempt, the lane not due before', async () => {
      const { subscriptionId, lane: l, owner, claimed } = await leased(2);
      const later = new Date(Date.now() + 3_600_000);
      await events.finish(
        [
          {
            subscriptionId,
            lane: l,
            owner,
            attempts: [
              {
                seq: claimed[0].seq,
                state: 'pending',
                failures: 1,
                status: 503,
                response: 'busy',
                error: 'the endpoint answered 503',
                nextAttemptAt: later,
              },
            ],
            nextAttemptAt: later,
          },
        ],
        [],
      );
      const [head] = await deliveries(subscriptionId);
      expect(head).toMatchObject({ state: 'pending', attempts: 1, failures: 1, last_status: 503 });
      expect(head.next_attempt_at!.getTime()).toBe(later.getTime());
      expect(await lanes(subscriptionId)).toEqual([
        expect.objectContaining({ pending: 2, lease_owner: null, due: false }),
      ]);
      expect(await events.claim(randomUUID(), 10, 10, 60)).toEqual([]);
      const found = await events.findDelivery(head.id);
      expect(found!.next_attempt_at!.getTime()).toBe(later.getTime());
    });

    it('does not count a lane whose head waits for its retry as still holding deliveries', async () => {
      const { subscriptionId, lane: l, owner, claimed } = await leased(2);
      const later = new Date(Date.now() + 3_600_000);
      const failed = {
        seq: claimed[0].seq,
        state: 'pending' as const,
        failures: 1,
        status: 503,
        response: 'busy',
        error: 'the endpoint answered 503',
        nextAttemptAt: later,
      };
      // Two deliveries still pending, neither due: the poll finds the lane when it is.
      expect(
        await events.finish(
          [{ subscriptionId, lane: l, owner, attempts: [failed], nextAttemptAt: later }],
          [],
        ),
      ).toBe(0);
      expect(await lanes(subscriptionId)).toEqual([
        expect.objectContaining({ pending: 2, lease_owner: null, due: false }),
      ]);
    });

    it('leaves alone a lane another owner has leased meanwhile', async () => {
      const { subscriptionId, lane: l, owner, claimed } = await leased(1);
      const taker = randomUUID();
      await context.db.query(
        `UPDATE event_lanes SET lease_owner = $2, leased_until = now() + interval '1 hour'
         WHERE subscription_id = $1`,
        [subscriptionId, taker],
      );
      await events.finish(
        [
          {
            subscriptionId,
            lane: l,
            owner,
            attempts: [
              {
                seq: claimed[0].seq,
                state: 'pending',
                failures: 1,
                status: null,
                response: null,
                error: 'timeout',
                nextAttemptAt: new Date(Date.now() + 60_000),
              },
            ],
            nextAttemptAt: new Date(Date.now() + 60_000),
          },
        ],
        [],
      );
      expect(await lanes(subscriptionId)).toEqual([
        expect.objectContaining({ lease_owner: taker, leased_until: expect.any(Date), due: true }),
      ]);
    });

    it('ends the run of failures of a healthy subscription, and keeps a parked lane parked', async () => {
      const { subscriptionId, lane: l, owner, claimed } = await leased(2);
      await context.db.query(
        `UPDATE event_subscriptions SET failing_since = now() - interval '1 minute' WHERE id = $1`,
        [subscriptionId],
      );
      await context.db.query(
        `UPDATE event_lanes SET next_attempt_at = 'infinity' WHERE subscription_id = $1`,
        [subscriptionId],
      );
      await events.finish(
        [
          {
            subscriptionId,
            lane: l,
            owner,
            attempts: [delivered(claimed[0].seq)],
            nextAttemptAt: new Date(),
          },
        ],
        [subscriptionId],
      );
      expect((await subscription(subscriptionId)).failing_since).toBeNull();
      expect(await lanes(subscriptionId)).toEqual([
        expect.objectContaining({ parked: true, lease_owner: null }),
      ]);
    });
  });

  describe('markFailing', () => {
    it('does nothing without ids', async () => {
      expect(await events.markFailing([], [], 60)).toEqual([]);
    });

    it('notes the start of a run of failures and disables the subscription once it lasted too long', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      await addEvents(instanceId, 'message.received', [lane('a')]);
      expect(await events.markFailing([subscriptionId], [], 3600)).toEqual([]);
      const failing = await subscription(subscriptionId);
      expect(failing).toMatchObject({ enabled: true, failing_since: expect.any(Date) });

      // The run keeps its start.
      await context.db.query(
        `UPDATE event_subscriptions SET failing_since = '2026-01-02T03:04:05.678Z' WHERE id = $1`,
        [subscriptionId],
      );
      expect(await events.markFailing([subscriptionId], [], 3600)).toEqual([
        {
          id: subscriptionId,
          reason: 'every delivery failed since 2026-01-02T03:04:05.678Z',
        },
      ]);
      expect(await subscription(subscriptionId)).toMatchObject({
        enabled: false,
        disabled_reason: 'every delivery failed since 2026-01-02T03:04:05.678Z',
      });
      expect((await lanes(subscriptionId)).map((l) => l.parked)).toEqual([true]);
      // Disabled once.
      expect(await events.markFailing([subscriptionId], [], 0)).toEqual([]);
    });

    it('disables a subscription whose endpoint answered 410 Gone at once', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      const { subscriptionId: bystander } = await freshSubscription();
      await addEvents(instanceId, 'message.received', [lane('a'), lane('b')]);
      expect(await events.markFailing([bystander], [subscriptionId], 3600)).toEqual([
        { id: subscriptionId, reason: 'the endpoint answered 410 Gone' },
      ]);
      expect((await lanes(subscriptionId)).map((l) => l.parked)).toEqual([true, true]);
      expect(await subscription(bystander)).toMatchObject({ enabled: true });
    });
  });

  describe('retryDelivery', () => {
    it('queues a failed delivery again from the start of the schedule and wakes its lane', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      const l = lane('a');
      await addEvents(instanceId, 'message.received', [l, l]);
      const [failed] = await deliveries(subscriptionId);
      await context.db.query(
        `UPDATE event_deliveries SET state = 'failed', failures = 7, next_attempt_at = NULL
         WHERE id = $1`,
        [failed.id],
      );
      await context.db.query(
        `UPDATE event_lanes SET next_attempt_at = now() + interval '1 hour' WHERE subscription_id = $1`,
        [subscriptionId],
      );
      expect(await lanes(subscriptionId)).toEqual([
        expect.objectContaining({ pending: 1, due: false }),
      ]);

      expect(await events.retryDelivery(failed.id)).toBe(true);
      expect((await deliveries(subscriptionId))[0]).toMatchObject({
        state: 'pending',
        failures: 0,
        next_attempt_at: null,
      });
      expect(await lanes(subscriptionId)).toEqual([
        expect.objectContaining({ pending: 2, due: true }),
      ]);
      expect(await events.retryDelivery(randomUUID())).toBe(false);
    });

    it('leaves the lane of a disabled subscription parked', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      await addEvents(instanceId, 'message.received', [lane('a')]);
      await events.update(subscriptionId, { enabled: false });
      const [delivery] = await deliveries(subscriptionId);
      expect(await events.retryDelivery(delivery.id)).toBe(true);
      expect((await lanes(subscriptionId))[0].parked).toBe(true);
    });
  });

  describe('findDelivery and listDeliveries', () => {
    it('find a delivery with its event, its next attempt shown only while it can happen', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      await addEvents(instanceId, 'message.received', [lane('a')]);
      const [delivery] = await deliveries(subscriptionId);
      const found = await events.findDelivery(delivery.id);
      expect(found).toMatchObject({
        id: delivery.id,
        subscription_id: subscriptionId,
        event_type: 'message.received',
        state: 'pending',
        attempts: 0,
        next_attempt_at: expect.any(Date),
      });
      await events.update(subscriptionId, { enabled: false });
      expect((await events.findDelivery(delivery.id))!.next_attempt_at).toBeNull();
      expect(await events.findDelivery(randomUUID())).toBeNull();
    });

    it('lists a subscription’s deliveries newest first, by state, after a cursor', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      await addEvents(instanceId, 'message.received', [lane('a'), lane('b'), lane('c')]);
      const all = await deliveries(subscriptionId);
      await context.db.query(`UPDATE event_deliveries SET state = 'delivered' WHERE id = $1`, [
        all[1].id,
      ]);
      const newestFirst = [...all].reverse().map((d) => d.id);
      expect(
        (await events.listDeliveries(subscriptionId, null, undefined, 10)).map((d) => d.id),
      ).toEqual(newestFirst);
      expect(
        (await events.listDeliveries(subscriptionId, null, undefined, 2)).map((d) => d.id),
      ).toEqual(newestFirst.slice(0, 2));
      expect(
        (await events.listDeliveries(subscriptionId, all[2].seq, undefined, 10)).map((d) => d.id),
      ).toEqual(newestFirst.slice(1));
      expect(
        (await events.listDeliveries(subscriptionId, null, 'delivered', 10)).map((d) => d.id),
      ).toEqual([all[1].id]);
    });
  });

  describe('replay', () => {
    it('queues the window’s events of the subscription’s types and instance, oldest first, not those still pending', async () => {
      const { instanceId, subscriptionId } = await freshSubscription(['message.received']);
      const otherInstance = await insertInstance(context.db);
      const l = lane('a');
      const seqs = await addEvents(instanceId, 'message.received', [l, l, l]);
      await addEvents(instanceId, 'message.sent', [l]);
      await addEvents(otherInstance, 'message.received', [l]);
      // Two delivered, one still pending (it goes out anyway).
      await context.db.query(
        `UPDATE event_deliveries SET state = 'delivered' WHERE subscription_id = $1
           AND event_seq = ANY($2::bigint[])`,
        [subscriptionId, seqs.slice(0, 2)],
      );
      await context.db.query(
        `UPDATE events SET created_at = '2026-03-01T12:00:00Z' WHERE instance_id = ANY($1::uuid[])`,
        [[instanceId, otherInstance]],
      );
      const since = new Date('2026-03-01T00:00:00Z');
      const until = new Date('2026-03-02T00:00:00Z');
      const sub = await subscription(subscriptionId);

      expect(
        await events.replay(sub, new Date('2026-03-01T12:00:00.001Z'), until, 10, 5000),
      ).toEqual({ kind: 'queued', queued: 0 });
      expect(await events.replay(sub, since, until, 1, 5000)).toEqual({
        kind: 'queued',
        queued: 1,
      });
      expect(await events.replay(sub, since, until, 10, 5000)).toEqual({
        kind: 'queued',
        queued: 1,
      });
      const pending = (await deliveries(subscriptionId)).filter((d) => d.state === 'pending');
      expect(pending.map((d) => d.event_seq)).toEqual([seqs[2], seqs[0], seqs[1]]);
      expect(await lanes(subscriptionId)).toEqual([
        expect.objectContaining({ lane: l, pending: 3 }),
      ]);
    });

    it('answers running while another replay of the subscription holds its lock', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      await addEvents(instanceId, 'message.received', [lane('a')]);
      const sub = await subscription(subscriptionId);
      const other = await context.client();
      await other.query('BEGIN');
      try {
        await other.query(
          `SELECT pg_advisory_xact_lock(hashtextextended('mc-event-replay:' || $1::text, 0))`,
          [subscriptionId],
        );
        expect(await events.replay(sub, new Date(0), new Date(), 10, 5000)).toEqual({
          kind: 'running',
        });
      } finally {
        await other.query('ROLLBACK');
      }
      const outcome = await events.replay(
        sub,
        new Date(0),
        new Date(Date.now() + 60_000),
        10,
        5000,
      );
      expect(outcome.kind).toBe('queued');
    });

    it('is cancelled and rolled back when it takes longer than its timeout', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      await addEvents(instanceId, 'message.received', [lane('a')]);
      await context.db.query(
        `UPDATE event_deliveries SET state = 'delivered' WHERE subscription_id = $1`,
        [subscriptionId],
      );
      const sub = await subscription(subscriptionId);
      // The replay's inserts need a key-share lock on the subscription row: held here, they wait.
      const holder = await context.client();
      await holder.query('BEGIN');
      try {
        await holder.query(`SELECT 1 FROM event_subscriptions WHERE id = $1 FOR UPDATE`, [
          subscriptionId,
        ]);
        expect(
          await events.replay(sub, new Date(0), new Date(Date.now() + 60_000), 10, 100),
        ).toEqual({ kind: 'timed_out' });
      } finally {
        await holder.query('ROLLBACK');
      }
      expect((await deliveries(subscriptionId)).map((d) => d.state)).toEqual(['delivered']);
    });
  });

  describe('ping', () => {
    it('writes a ping event delivered to that subscription only', async () => {
      const { instanceId, subscriptionId } = await freshSubscription(['message.received']);
      const { subscriptionId: bystander } = await freshSubscription(['message.received']);
      const sub = await subscription(subscriptionId);
      const { event_id, delivery_id } = await events.ping(sub);
      const [event] = await context.db.query<{
        type: string;
        instance_id: string;
        lane: string;
        data: unknown;
      }>(`SELECT type, instance_id, lane, data FROM events WHERE id = $1`, [event_id]);
      expect(event).toMatchObject({
        type: 'ping',
        instance_id: instanceId,
        lane: expect.stringMatching(/^ping:/),
        data: { subscription_id: subscriptionId, message: 'test event' },
      });
      expect((await deliveries(subscriptionId)).map((d) => d.id)).toEqual([delivery_id]);
      expect(await deliveries(bystander)).toEqual([]);
      const claimed = await events.claim(randomUUID(), 10, 10, 60);
      expect(claimed.map((d) => d.event_id)).toEqual([event_id]);
    });
  });

  describe('undeliveredSummary', () => {
    it('counts the pending deliveries of the enabled subscriptions, with the oldest event’s age', async () => {
      const before = await events.undeliveredSummary();
      const { instanceId, subscriptionId } = await freshSubscription();
      const [old] = await addEvents(instanceId, 'message.received', [lane('a'), lane('b')]);
      await context.db.query(
        `UPDATE events SET created_at = now() - interval '30 days' WHERE seq = $1`,
        [old],
      );
      const after = await events.undeliveredSummary();
      expect(after.count).toBe(before.count + 2);
      expect(after.oldestAgeSeconds).toBeGreaterThanOrEqual(30 * 86_400);

      await context.db.query(
        `UPDATE event_deliveries SET state = 'failed' WHERE subscription_id = $1 AND event_seq = $2`,
        [subscriptionId, old],
      );
      expect((await events.undeliveredSummary()).count).toBe(before.count + 1);
      // A disabled subscription's deliveries wait for it: not counted.
      await context.db.query(`UPDATE event_subscriptions SET enabled = false WHERE id = $1`, [
        subscriptionId,
      ]);
      expect((await events.undeliveredSummary()).count).toBe(before.count);
    });
  });

  describe('oldestPending', () => {
    it('gives per subscription the age of its oldest pending event', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      const [old] = await addEvents(instanceId, 'message.received', [lane('a'), lane('b')]);
      await context.db.query(
        `UPDATE events SET created_at = now() - interval '2 hours' WHERE seq = $1`,
        [old],
      );
      const mine = (await events.oldestPending()).filter(
        (row) => row.subscription_id === subscriptionId,
      );
      expect(mine).toHaveLength(1);
      expect(mine[0].age).toBeGreaterThanOrEqual(7200);
      expect(mine[0].age).toBeLessThan(3 * 3600);

      await context.db.query(
        `UPDATE event_deliveries SET state = 'delivered' WHERE subscription_id = $1`,
        [subscriptionId],
      );
      expect(
        (await events.oldestPending()).filter((row) => row.subscription_id === subscriptionId),
      ).toEqual([]);
    });
  });

  describe('prune', () => {
    it('deletes old events with nothing pending, with their deliveries, up to the limit', async () => {
      const { instanceId, subscriptionId } = await freshSubscription();
      const [oldDone, oldPending, recent, older] = await addEvents(instanceId, 'message.received', [
        lane('a'),
        lane('b'),
        lane('c'),
        lane('d'),
      ]);
      await context.db.query(
        `UPDATE events SET created_at = now() - CASE WHEN seq = $2 THEN interval '1000 days'
                                                     ELSE interval '999 days' END
         WHERE seq = ANY($1::bigint[])`,
        [[oldDone, oldPending, older], older],
      );
      await context.db.query(
        `UPDATE event_deliveries SET state = 'delivered' WHERE event_seq = ANY($1::bigint[])`,
        [[oldDone, recent, older]],
      );
      const remaining = async () =>
        (
          await context.db.query<{ seq: string }>(
            `SELECT seq::text FROM events WHERE instance_id = $1 ORDER BY seq`,
            [instanceId],
          )
        ).map((row) => row.seq);

      // The oldest first (older than any other test's events).
      expect(await events.prune(30, 1)).toBe(1);
      expect(await remaining()).toEqual([oldDone, oldPending, recent]);
      expect(await events.prune(30, 1000)).toBeGreaterThanOrEqual(1);
      expect(await remaining()).toEqual([oldPending, recent]);
      expect((await deliveries(subscriptionId)).map((d) => d.event_seq)).toEqual([
        oldPending,
        recent,
      ]);
    });
  });

  describe('secrets and replaceSecret', () => {
    it('lists current secrets and previous ones in their grace period', async () => {
      const { subscriptionId } = await freshSubscription();
      const { subscriptionId: expired } = await freshSubscription();
      await context.db.query(
        `UPDATE event_subscriptions SET previous_secret_encrypted = 'old-' || id,
           previous_secret_until = CASE WHEN id = $1 THEN now() + interval '1 hour'
                                        ELSE now() - interval '1 second' END
         WHERE id = ANY($2::uuid[])`,
        [subscriptionId, [subscriptionId, expired]],
      );
      const secrets = (await events.secrets()).filter((s) =>
        [subscriptionId, expired].includes(s.id),
      );
      expect(secrets).toEqual(
        expect.arrayContaining([
          { id: subscriptionId, column: 'secret_encrypted', value: 'not-a-secret' },
          {
            id: subscriptionId,
            column: 'previous_secret_encrypted',
            value: `old-${subscriptionId}`,
          },
          { id: expired, column: 'secret_encrypted', value: 'not-a-secret' },
        ]),
      );
      expect(secrets).toHaveLength(3);
    });

    it('replaces a secret only while it still holds the value read', async () => {
      const { subscriptionId } = await freshSubscription();
      const read = {
        id: subscriptionId,
        column: 'secret_encrypted' as const,
        value: 'not-a-secret',
      };
      expect(await events.replaceSecret(read, 'rewritten')).toBe(true);
      expect((await subscription(subscriptionId)).secret_encrypted).toBe('rewritten');
      expect(await events.replaceSecret(read, 'again')).toBe(false);
      expect((await subscription(subscriptionId)).secret_encrypted).toBe('rewritten');
    });
  });
});

describe('mc_iso', () => {
  it('writes a time as UTC ISO 8601 with milliseconds, whatever the session time zone', async () => {
    const client = await context.client();
    await client.query(`SET TIME ZONE 'America/Sao_Paulo'`);
    const { rows } = await client.query<{ iso: string; none: string | null }>(
      `SELECT mc_iso('2026-01-02 03:04:05.678912+02') AS iso, mc_iso(NULL) AS none`,
    );
    expect(rows).toEqual([{ iso: '2026-01-02T01:04:05.678Z', none: null }]);
  });
});

describe('mc_event_wanted', () => {
  const wanted = async (instanceId: string, type: string) =>
    (
      await context.db.query<{ wanted: boolean }>(`SELECT mc_event_wanted($1, $2) AS wanted`, [
        instanceId,
        type,
      ])
    )[0].wanted;

  it('tells whether a subscription of the instance, or of every instance, wants the type, enabled or not', async () => {
    const instanceId = await insertInstance(context.db);
    const other = await insertInstance(context.db);
    const type = `x.${randomUUID()}`;
    expect(await wanted(instanceId, type)).toBe(false);
    const subscriptionId = await insertSubscription(context.db, instanceId, [type]);
    expect(await wanted(instanceId, type)).toBe(true);
    expect(await wanted(other, type)).toBe(false);
    expect(await wanted(instanceId, `${type}.other`)).toBe(false);
    await context.db.query(`UPDATE event_subscriptions SET enabled = false WHERE id = $1`, [
      subscriptionId,
    ]);
    expect(await wanted(instanceId, type)).toBe(true);
    await insertSubscription(context.db, null, [type]);
    expect(await wanted(other, type)).toBe(true);
  });
});

describe('mc_event_unwanted', () => {
  const stored = async (instanceId: string, type: string) =>
    (
      await context.db.query(`SELECT 1 FROM events WHERE instance_id = $1 AND type = $2`, [
        instanceId,
        type,
      ])
    ).length;

  it('drops a rare writer’s event nobody wants, and keeps it once a subscription (even disabled) wants it', async () => {
    const instanceId = await insertInstance(context.db);
    await addEvents(instanceId, 'turn.failed', [lane('a')]);
    expect(await stored(instanceId, 'turn.failed')).toBe(0);

    const subscriptionId = await insertSubscription(context.db, instanceId, ['turn.failed']);
    await context.db.query(`UPDATE event_subscriptions SET enabled = false WHERE id = $1`, [
      subscriptionId,
    ]);
    await addEvents(instanceId, 'turn.failed', [lane('a')]);
    expect(await stored(instanceId, 'turn.failed')).toBe(1);
  });

  it('leaves message events (filtered by their writers) and pings alone', async () => {
    const instanceId = await insertInstance(context.db);
    await addEvents(instanceId, 'message.received', [lane('a')]);
    await addEvents(instanceId, 'ping', [lane('a')]);
    expect(await stored(instanceId, 'message.received')).toBe(1);
    expect(await stored(instanceId, 'ping')).toBe(1);
  });
});

describe('mc_events_fan_out', () => {
  it('writes one delivery per enabled subscription wanting the type and instance', async () => {
    const instanceId = await insertInstance(context.db);
    const other = await insertInstance(context.db);
    const mine = await insertSubscription(context.db, instanceId, [
      'message.received',
      'message.sent',
    ]);
    const everyInstance = await insertSubscription(context.db, null, ['message.received']);
    const otherInstance = await insertSubscription(context.db, other, ['message.received']);
    const otherType = await insertSubscription(context.db, instanceId, ['message.status']);
    const disabled = await insertSubscription(context.db, instanceId, ['message.received']);
    await context.db.query(`UPDATE event_subscriptions SET enabled = false WHERE id = $1`, [
      disabled,
    ]);

    const l = lane('a');
    const seqs = await addEvents(instanceId, 'message.received', [l, l]);
    for (const subscriptionId of [mine, everyInstance]) {
      expect((await deliveries(subscriptionId)).map((d) => [d.event_seq, d.lane, d.state])).toEqual(
        seqs.map((seq) => [seq, l, 'pending']),
      );
    }
    for (const subscriptionId of [otherInstance, otherType, disabled]) {
      expect(await deliveries(subscriptionId)).toEqual([]);
    }
  });

  it('writes no delivery for a ping', async () => {
    const instanceId = await insertInstance(context.db);
    const subscriptionId = await insertSubscription(context.db, instanceId, ['ping']);
    await addEvents(instanceId, 'ping', [lane('a')]);
    expect(await deliveries(subscriptionId)).toEqual([]);
  });
});

describe('mc_event_lanes_added', () => {
  it('counts each statement’s pending deliveries per (subscription, lane)', async () => {
    const { instanceId, subscriptionId } = await freshSubscription();
    const { subscriptionId: second } = await freshSubscription();
    await context.db.query(`UPDATE event_subscriptions SET instance_id = NULL WHERE id = $1`, [
      second,
    ]);
    const [a, b] = [lane('a'), lane('b')].sort();
    await addEvents(instanceId, 'message.received', [a, b, a]);
    await addEvents(instanceId, 'message.received', [a]);
    for (const id of [subscriptionId, second]) {
      expect((await lanes(id)).map((l) => [l.lane, l.pending])).toEqual([
        [a, 3],
        [b, 1],
      ]);
    }
    // A delivery written as already delivered does not count.
    const [event] = await context.db.query<{ seq: string }>(
      `SELECT max(event_seq)::text AS seq FROM event_deliveries WHERE subscription_id = $1`,
      [subscriptionId],
    );
    await context.db.query(
      `INSERT INTO event_deliveries (subscription_id, event_seq, lane, state)
       VALUES ($1, $2, $3, 'delivered')`,
      [subscriptionId, event.seq, b],
    );
    expect((await lanes(subscriptionId)).map((l) => [l.lane, l.pending])).toEqual([
      [a, 3],
      [b, 1],
    ]);
  });
});

describe('mc_event_lanes_changed', () => {
  it('follows deliveries leaving and re-entering pending, and removes a lane at 0', async () => {
    const { instanceId, subscriptionId } = await freshSubscription();
    const l = lane('a');
    await addEvents(instanceId, 'message.received', [l, l]);
    const [first, second] = await deliveries(subscriptionId);
    const setState = (ids: string[], state: string) =>
      context.db.query(`UPDATE event_deliveries SET state = $2 WHERE id = ANY($1::uuid[])`, [
        ids,
        state,
      ]);

    await setState([first.id], 'delivered');
    expect((await lanes(subscriptionId)).map((x) => x.pending)).toEqual([1]);
    // An update that leaves the state alone changes nothing.
    await context.db.query(`UPDATE event_deliveries SET attempts = attempts + 1 WHERE id = $1`, [
      second.id,
    ]);
    expect((await lanes(subscriptionId)).map((x) => x.pending)).toEqual([1]);
    await setState([second.id], 'failed');
    expect(await lanes(subscriptionId)).toEqual([]);
    await setState([first.id, second.id], 'pending');
    expect((await lanes(subscriptionId)).map((x) => [x.lane, x.pending])).toEqual([[l, 2]]);
  });
});

describe('mc_event_lanes_removed', () => {
  it('takes deleted pending deliveries off their lanes, removing a lane at 0', async () => {
    const { instanceId, subscriptionId } = await freshSubscription();
    const [a, b] = [lane('a'), lane('b')].sort();
    await addEvents(instanceId, 'message.received', [a, a, b]);
    const [first, , onB] = await deliveries(subscriptionId);
    await context.db.query(`DELETE FROM event_deliveries WHERE id = ANY($1::uuid[])`, [
      [first.id, onB.id],
    ]);
    expect((await lanes(subscriptionId)).map((x) => [x.lane, x.pending])).toEqual([[a, 1]]);

    // A delivered one is not counted, so deleting it leaves the counter alone.
    const [remaining] = await deliveries(subscriptionId);
    await addEvents(instanceId, 'message.received', [a]);
    await context.db.query(`UPDATE event_deliveries SET state = 'delivered' WHERE id = $1`, [
      remaining.id,
    ]);
    await context.db.query(`DELETE FROM event_deliveries WHERE id = $1`, [remaining.id]);
    expect((await lanes(subscriptionId)).map((x) => [x.lane, x.pending])).toEqual([[a, 1]]);
    await context.db.query(`DELETE FROM event_deliveries WHERE subscription_id = $1`, [
      subscriptionId,
    ]);
    expect(await lanes(subscriptionId)).toEqual([]);
  });
});
