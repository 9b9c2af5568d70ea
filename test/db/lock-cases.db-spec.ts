import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import { laneOrder } from '../../src/database/lock-order.js';
import { sqlState } from '../../src/database/sql.js';
import { ContactStore } from '../../src/contacts/contact.store.js';
import { EventStore } from '../../src/events/event.store.js';
import { MessageStore } from '../../src/messages/message.store.js';
import { insertInstance, insertSubscription, useMigratedDatabase } from './support.js';

/** PostgreSQL's code for a transaction it ended to break a deadlock. */
const DEADLOCK_DETECTED = '40P01';

/** How often, and at most how many times, a case looks whether the writer waits yet. */
const POLL_MS = 10;
const MAX_POLLS = 2000;

type Outcome = { ok: true } | { ok: false; error: unknown };

const settle = (work: Promise<unknown>): Promise<Outcome> =>
  work.then(
    () => ({ ok: true }) as const,
    (error: unknown) => ({ ok: false, error }) as const,
  );

/** A failure as the report shows it: the side, its SQLSTATE, and PostgreSQL's account of it. */
function failureOf(side: string, error: unknown): string {
  const driver =
    (error as { driverError?: Record<string, unknown> }).driverError ??
    (error as Record<string, unknown>);
  const code = sqlState(error) ?? 'no sqlstate';
  const kind = code === DEADLOCK_DETECTED ? 'deadlock' : 'failure';
  return [
    `${side}: ${kind} ${code}: ${String(driver.message ?? error)}`,
    driver.detail,
    driver.where,
  ]
    .filter(Boolean)
    .join('\n');
}

const identity = (
  waId: string | null,
  userId: string | null,
  name: string | null = null,
): {
  key: string;
  waId: string | null;
  userId: string | null;
  parentUserId: null;
  username: null;
  name: string | null;
  lastInboundAt: Date;
} => ({
  key: `${waId ?? ''}|${userId ?? ''}`,
  waId,
  userId,
  parentUserId: null,
  username: null,
  name,
  lastInboundAt: new Date(),
});

/**
 * The deadlocks of issue 23 between the writers of database/lock-order.ts, one
 * at a time and without timing: a transaction (the holder) takes its first
 * lock; the writer under test runs on a connection of its own until
 * PostgreSQL shows it waiting for the holder; then the holder asks for its
 * second lock, in the one order. A writer that keeps the order waits; one that
 * breaks it closes a cycle, and PostgreSQL ends a side with 40P01.
 */
describe('lock order: the cases', () => {
  const context = useMigratedDatabase();
  let contacts: ContactStore;
  let messages: MessageStore;

  beforeAll(() => {
    contacts = new ContactStore(context.source);
    messages = new MessageStore(context.source);
  });

  /** A data source of one connection, for a writer whose backend the case watches. */
  async function withWriter<T>(work: (source: DataSource, pid: number) => Promise<T>): Promise<T> {
    const source = new DataSource({
      type: 'postgres',
      url: context.db.url,
      extra: { max: 1, idleTimeoutMillis: 0 },
    });
    await source.initialize();
    try {
      const [{ pid }] = await source.query<Array<{ pid: number }>>(
        'SELECT pg_backend_pid() AS pid',
      );
      return await work(source, pid);
    } finally {
      await source.destroy();
    }
  }

  /** A connection in an open transaction that detects a deadlock soon after it waits. */
  async function openHolder(): Promise<{ holder: Client; holderPid: number }> {
    const holder = await context.client();
    await holder.query(`SET deadlock_timeout = '100ms'`);
    const {
      rows: [{ pid }],
    } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await holder.query('BEGIN');
    return { holder, holderPid: pid };
  }

  /**
   * Starts `write`, waits until it waits for the holder (or is done), has the
   * holder `ask` for its second lock, and ends the holder's transaction. The
   * failures of both sides; the writer's result.
   */
  async function collide<T>(
    holder: Client,
    holderPid: number,
    writerPid: number,
    write: () => Promise<T>,
    ask: () => Promise<unknown>,
  ): Promise<{ failures: string[]; result: T | undefined }> {
    let result: T | undefined;
    let done = false;
    const writing = settle(
      write().then((value) => {
        result = value;
      }),
    ).finally(() => {
      done = true;
    });
    let waited = false;
    for (let polls = 0; polls < MAX_POLLS && !done && !waited; polls++) {
      const [{ blocked }] = await context.source.query<Array<{ blocked: boolean }>>(
        'SELECT $2::int = ANY (pg_blocking_pids($1::int)) AS blocked',
        [writerPid, holderPid],
      );
      waited = blocked;
      if (!waited) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const failures: string[] = [];
    if (!waited && !done) {
      failures.push('writer: neither waited for the holder nor finished');
      await holder.query('ROLLBACK');
    } else {
      const asked = await settle(ask());
      if (!asked.ok) failures.push(failureOf('holder', asked.error));
      await holder.query(asked.ok ? 'COMMIT' : 'ROLLBACK');
    }
    const written = await writing;
    if (!written.ok) failures.push(failureOf('writer', written.error));
    return { failures, result };
  }

  /** The instance's contacts by number, in the lock order (ascending id). */
  async function contactsByNumber(
    instanceId: string,
    numbers: string[],
  ): Promise<Array<{ id: string; wa_id: string }>> {
    return context.db.query(
      `SELECT id, wa_id FROM contacts WHERE instance_id = $1 AND wa_id = ANY ($2::text[])
       ORDER BY id`,
      [instanceId, numbers],
    );
  }

  const send = (instanceId: string, waId: string, wamid: string) => ({
    instanceId,
    address: waId,
    byNumber: true,
    sentBy: 'api' as const,
    type: 'text',
    body: { text: { body: 'hello' } },
    wamid,
  });

  it('an outbound record completing a placeholder and recording a new send, against an inbound batch on the same two contacts', async () => {
    const instanceId = await insertInstance(context.db);
    const numbers = ['5511970000001', '5511970000002'];
    await contacts.resolveContacts(
      instanceId,
      numbers.map((n) => identity(n, null)),
    );
    const [lo, hi] = await contactsByNumber(instanceId, numbers);
    // A status that came before its send's answer, for the higher contact.
    await messages.applyStatuses(instanceId, [
      { wamid: 'wamid.b1a.early', recipient: hi.wa_id, status: 'sent', errors: null },
    ]);

    const { holder, holderPid } = await openHolder();
    // The inbound batch (contacts_known_numbers) locks its contacts by id: lo first...
    const first = await holder.query('SELECT 1 FROM contacts WHERE id = $1 FOR NO KEY UPDATE', [
      lo.id,
    ]);
    expect(first.rowCount).toBe(1);
    const { failures } = await withWriter((source, pid) =>
      collide(
        holder,
        holderPid,
        pid,
        // ...while the outbound record completes hi's placeholder and sends to lo.
        () =>
          new MessageStore(source).insertOutbound([
            send(instanceId, hi.wa_id, 'wamid.b1a.early'),
            send(instanceId, lo.wa_id, 'wamid.b1a.new'),
          ]),
        // ...then hi.
        () => holder.query('SELECT 1 FROM contacts WHERE id = $1 FOR NO KEY UPDATE', [hi.id]),
      ),
    );

    expect(failures).toEqual([]);
    expect(
      await context.db.query(
        `SELECT m.wamid, m.type, m.contact_id, c.last_outbound_at IS NOT NULL AS last_send
         FROM messages m JOIN contacts c ON c.id = m.contact_id
         WHERE m.instance_id = $1 ORDER BY m.wamid`,
        [instanceId],
      ),
    ).toEqual([
      { wamid: 'wamid.b1a.early', type: 'text', contact_id: hi.id, last_send: true },
      { wamid: 'wamid.b1a.new', type: 'text', contact_id: lo.id, last_send: true },
    ]);
  });

  it('a status batch for a stored send and for one not stored yet, against the dispatcher finishing their lanes', async () => {
    const instanceId = await insertInstance(context.db);
    const subscriptions: string[] = [];
    for (let n = 0; n < 2; n++) {
      subscriptions.push(
        await insertSubscription(context.db, instanceId, ['message.sent', 'message.status']),
      );
    }
    const [sMin, sMax] = (
      await context.db.query<{ id: string }>(
        'SELECT id FROM event_subscriptions WHERE id = ANY ($1::uuid[]) ORDER BY id',
        [subscriptions],
      )
    ).map((s) => s.id);
    // A stored send (its lanes pending), and a placeholder for another number (its lanes too).
    await messages.insertOutbound([send(instanceId, '5511970000011', 'wamid.b1b.stored')]);
    await messages.applyStatuses(instanceId, [
      { wamid: 'wamid.b1b.p0', recipient: '5511970000012', status: 'sent', errors: null },
    ]);
    const [stored] = await contactsByNumber(instanceId, ['5511970000011']);
    const storedLane = `contact:${stored.id}`;
    const placeholderLane = `contact:${instanceId}:5511970000012`;
    expect(
      await context.db.query(
        `SELECT subscription_id, lane FROM event_lanes WHERE subscription_id = ANY ($1::uuid[])
         ORDER BY subscription_id, lane`,
        [subscriptions],
      ),
    ).toEqual(
      expect.arrayContaining([
        { subscription_id: sMin, lane: placeholderLane },
        { subscription_id: sMax, lane: storedLane },
      ]),
    );

    const { holder, holderPid } = await openHolder();
    const lockLane = (subscriptionId: string, lane: string) =>
      holder.query(
        // As EventStore.finish (event_lanes_finish) locks the lanes it releases.
        `SELECT 1 FROM event_lanes WHERE subscription_id = $1 AND lane = $2 FOR NO KEY UPDATE`,
        [subscriptionId, lane],
      );
    // The dispatcher's finish, in the lane order: the first subscription's placeholder lane...
    expect((await lockLane(sMin, placeholderLane)).rowCount).toBe(1);
    const { failures } = await withWriter((source, pid) =>
      collide(
        holder,
        holderPid,
        pid,
        // ...while a status batch writes a status of the stored send and a placeholder...
        () =>
          new MessageStore(source).applyStatuses(instanceId, [
            {
              wamid: 'wamid.b1b.stored',
              recipient: '5511970000011',
              status: 'delivered',
              errors: null,
            },
            { wamid: 'wamid.b1b.p1', recipient: '5511970000012', status: 'sent', errors: null },
          ]),
        // ...then the second subscription's lane of the stored send.
        () => lockLane(sMax, storedLane),
      ),
    );

    expect(failures).toEqual([]);
    expect(
      await context.db.query(
        `SELECT wamid, type, status FROM messages WHERE instance_id = $1 ORDER BY wamid`,
        [instanceId],
      ),
    ).toEqual([
      { wamid: 'wamid.b1b.p0', type: 'unknown', status: 'sent' },
      { wamid: 'wamid.b1b.p1', type: 'unknown', status: 'sent' },
      { wamid: 'wamid.b1b.stored', type: 'text', status: 'delivered' },
    ]);
    // Each new status reached both subscribers, in its lane.
    expect(
      await context.db.query(
        `SELECT e.data->'message'->>'wamid' AS wamid, d.lane, count(*)::int AS deliveries
         FROM events e JOIN event_deliveries d ON d.event_seq = e.seq
         WHERE e.instance_id = $1 AND e.type = 'message.status'
           AND e.data->'message'->>'wamid' IN ('wamid.b1b.stored', 'wamid.b1b.p1')
         GROUP BY 1, 2 ORDER BY 1`,
        [instanceId],
      ),
    ).toEqual([
      { wamid: 'wamid.b1b.p1', lane: placeholderLane, deliveries: 2 },
      { wamid: 'wamid.b1b.stored', lane: storedLane, deliveries: 2 },
    ]);
  });

  it("an inbound batch that updates one contact and links a user id to another, against a rekey holding the instance's contact lock", async () => {
    const instanceId = await insertInstance(context.db);
    const numbers = ['5511970000021', '5511970000022'];
    await contacts.resolveContacts(
      instanceId,
      numbers.map((n) => identity(n, null)),
    );
    const [lo, hi] = await contactsByNumber(instanceId, numbers);
    // The lower contact is known by its user id too; the higher one by its number alone.
    await contacts.resolveContacts(instanceId, [identity(lo.wa_id, 'BR.lo')]);

    const { holder, holderPid } = await openHolder();
    // mc_rekey_contact's first step: the instance's advisory lock...
    await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended('mc-contacts:' || $1, 0))`, [
      instanceId,
    ]);
    const loIdentity = identity(lo.wa_id, 'BR.lo', 'Renamed');
    const hiIdentity = identity(hi.wa_id, 'BR.hi');
    const { failures, result } = await withWriter((source, pid) =>
      collide(
        holder,
        holderPid,
        pid,
        // ...while an inbound batch brings lo's profile forward and links a user id to hi...
        () => new ContactStore(source).resolveContacts(instanceId, [loIdentity, hiIdentity]),
        // ...then the rekey writes lo (a new parent user id).
        () =>
          holder.query('SELECT mc_rekey_contact($1, $2, $3, NULL, NULL, $4)', [
            instanceId,
            lo.wa_id,
            'BR.lo',
            'BR.parent',
          ]),
      ),
    );

    expect(failures).toEqual([]);
    expect(result).toEqual(
      new Map([
        [loIdentity.key, lo.id],
        [hiIdentity.key, hi.id],
      ]),
    );
    expect(
      await context.db.query(
        `SELECT id, wa_id, user_id, parent_user_id, name FROM contacts WHERE instance_id = $1
         ORDER BY id`,
        [instanceId],
      ),
    ).toEqual([
      {
        id: lo.id,
        wa_id: lo.wa_id,
        user_id: 'BR.lo',
        parent_user_id: 'BR.parent',
        name: 'Renamed',
      },
      { id: hi.id, wa_id: hi.wa_id, user_id: 'BR.hi', parent_user_id: null, name: null },
    ]);
  });

  it('an inbound batch that merges two contacts, against an outbound record naming the loser', async () => {
    const instanceId = await insertInstance(context.db);
    // The same person twice: by number (the loser) and by user id alone (the survivor).
    await contacts.resolveContacts(instanceId, [
      identity('5511970000031', null),
      identity(null, 'BR.survivor'),
    ]);
    const [loser] = await contactsByNumber(instanceId, ['5511970000031']);
    const [survivor] = await context.db.query<{ id: string }>(
      `SELECT id FROM contacts WHERE instance_id = $1 AND user_id = 'BR.survivor'`,
      [instanceId],
    );

    const { holder, holderPid } = await openHolder();
    // An outbound record naming the loser: its foreign key check (as PostgreSQL's RI trigger)...
    const checked = await holder.query(
      'SELECT 1 FROM ONLY contacts x WHERE id = $1 FOR KEY SHARE OF x',
      [loser.id],
    );
    expect(checked.rowCount).toBe(1);
    const merged = identity('5511970000031', 'BR.survivor');
    const { failures, result } = await withWriter((source, pid) =>
      collide(
        holder,
        holderPid,
        pid,
        // ...while an inbound batch brings both keys: the two contacts are merged...
        () => new ContactStore(source).resolveContacts(instanceId, [merged]),
        // ...then mc_messages_inserted locks the contacts of its sends (their last send).
        () => holder.query('SELECT mc_lock_contacts(ARRAY[$1::uuid])', [loser.id]),
      ),
    );

    expect(failures).toEqual([]);
    expect(result).toEqual(new Map([[merged.key, survivor.id]]));
    expect(
      await context.db.query(
        'SELECT id, wa_id, user_id FROM contacts WHERE instance_id = $1 ORDER BY id',
        [instanceId],
      ),
    ).toEqual([{ id: survivor.id, wa_id: '5511970000031', user_id: 'BR.survivor' }]);
  });

  /** A subscription to sends, with one pending delivery on each of two contacts' lanes. */
  async function subscriptionWithTwoLanes(
    instanceId: string,
    numbers: [string, string],
    wamid: string,
  ): Promise<{ subscriptionId: string; lanes: [string, string] }> {
    const subscriptionId = await insertSubscription(context.db, instanceId, ['message.sent']);
    await contacts.resolveContacts(
      instanceId,
      numbers.map((n) => identity(n, null)),
    );
    const [lo, hi] = await contactsByNumber(instanceId, numbers);
    // The higher lane first: its row comes first on disk, against the lane order.
    await messages.insertOutbound([send(instanceId, hi.wa_id, `${wamid}.hi`)]);
    await messages.insertOutbound([send(instanceId, lo.wa_id, `${wamid}.lo`)]);
    return { subscriptionId, lanes: [`contact:${lo.id}`, `contact:${hi.id}`] };
  }

  const lanesOf = (subscriptionId: string) =>
    context.db.query<{ lane: string; parked: boolean }>(
      `SELECT lane, next_attempt_at = 'infinity' AS parked FROM event_lanes
       WHERE subscription_id = $1 ORDER BY lane`,
      [subscriptionId],
    );

  const deliveriesOf = (subscriptionId: string) =>
    context.db.query<{ seq: string; state: string }>(
      'SELECT seq, state FROM event_deliveries WHERE subscription_id = $1 ORDER BY seq',
      [subscriptionId],
    );

  /** A lane, as EventStore.finish (event_lanes_finish) locks the lanes it releases. */
  const lockLane = (holder: Client, subscriptionId: string, lane: string) =>
    holder.query(
      'SELECT 1 FROM event_lanes WHERE subscription_id = $1 AND lane = $2 FOR NO KEY UPDATE',
      [subscriptionId, lane],
    );

  /** EventStore.delete's first two steps: the subscription, then its lanes in the lane order. */
  const lockForDelete = {
    subscription: (holder: Client, subscriptionId: string) =>
      holder.query('SELECT id FROM event_subscriptions WHERE id = $1 FOR UPDATE', [subscriptionId]),
    lanes: (holder: Client, subscriptionId: string) =>
      holder.query(
        `SELECT 1 FROM event_lanes l WHERE l.subscription_id = $1
         ORDER BY ${laneOrder('l')} FOR UPDATE`,
        [subscriptionId],
      ),
  };

  it('an admin deleting a subscription, against the dispatcher finishing one of its lanes', async () => {
    const instanceId = await insertInstance(context.db);
    const { subscriptionId, lanes } = await subscriptionWithTwoLanes(
      instanceId,
      ['5511970000041', '5511970000042'],
      'wamid.b2a',
    );
    const [{ seq }] = await context.db.query<{ seq: string }>(
      'SELECT seq FROM event_deliveries WHERE subscription_id = $1 AND lane = $2',
      [subscriptionId, lanes[0]],
    );

    const { holder, holderPid } = await openHolder();
    // A lane's holder (as a finish that began before the delete holds it)...
    expect((await lockLane(holder, subscriptionId, lanes[0])).rowCount).toBe(1);
    const { failures, result } = await withWriter((source, pid) =>
      collide(
        holder,
        holderPid,
        pid,
        // ...while an admin deletes the subscription...
        () => new EventStore(source).delete(subscriptionId),
        // ...then the attempt on the lane's delivery.
        () =>
          holder.query(
            `UPDATE event_deliveries SET state = 'delivered', attempts = attempts + 1
             WHERE seq = $1 AND state = 'pending'`,
            [seq],
          ),
      ),
    );

    expect(failures).toEqual([]);
    expect(result).toBe(true);
    expect(await lanesOf(subscriptionId)).toEqual([]);
    expect(await deliveriesOf(subscriptionId)).toEqual([]);
  });

  it('the dispatcher finishing a subscription’s lanes, against an admin deleting it', async () => {
    const instanceId = await insertInstance(context.db);
    const { subscriptionId } = await subscriptionWithTwoLanes(
      instanceId,
      ['5511970000071', '5511970000072'],
      'wamid.b2d',
    );
    const owner = randomUUID();
    const claimed = (await new EventStore(context.source).claim(owner, 10, 10, 60)).filter(
      (d) => d.subscription_id === subscriptionId,
    );
    expect(claimed).toHaveLength(2);

    const { holder, holderPid } = await openHolder();
    // The delete's first step (EventStore.delete): the subscription...
    expect((await lockForDelete.subscription(holder, subscriptionId)).rowCount).toBe(1);
    const { failures } = await withWriter((source, pid) =>
      collide(
        holder,
        holderPid,
        pid,
        // ...while the dispatcher records both lanes' deliveries as delivered...
        () =>
          new EventStore(source).finish(
            claimed.map((d) => ({
              subscriptionId,
              lane: d.lane,
              owner,
              attempts: [
                {
                  seq: d.seq,
                  state: 'delivered' as const,
                  failures: 0,
                  status: 200,
                  response: null,
                  error: null,
                  nextAttemptAt: null,
                },
              ],
              nextAttemptAt: new Date(),
            })),
            [],
          ),
        // ...then its lanes, in the lane order (and the admin thinks better of it).
        () => lockForDelete.lanes(holder, subscriptionId),
      ),
    );

    expect(failures).toEqual([]);
    expect((await deliveriesOf(subscriptionId)).map(({ state }) => ({ state }))).toEqual([
      { state: 'delivered' },
      { state: 'delivered' },
    ]);
    expect(await lanesOf(subscriptionId)).toEqual([]);
  });

  it('an admin retrying a failed delivery, against an admin deleting its subscription', async () => {
    const instanceId = await insertInstance(context.db);
    const { subscriptionId, lanes } = await subscriptionWithTwoLanes(
      instanceId,
      ['5511970000081', '5511970000082'],
      'wamid.b2e',
    );
    // A delivery that ran out of retries: its lane is gone (nothing pending).
    const [{ id }] = await context.db.query<{ id: string }>(
      `UPDATE event_deliveries SET state = 'failed' WHERE subscription_id = $1 AND lane = $2
       RETURNING id`,
      [subscriptionId, lanes[0]],
    );
    expect((await lanesOf(subscriptionId)).map((lane) => lane.lane)).toEqual([lanes[1]]);

    const { holder, holderPid } = await openHolder();
    // The delete's first steps (EventStore.delete): the subscription, then its lanes...
    await lockForDelete.subscription(holder, subscriptionId);
    await lockForDelete.lanes(holder, subscriptionId);
    const { failures, result } = await withWriter((source, pid) =>
      collide(
        holder,
        holderPid,
        pid,
        // ...while an admin retries the failed delivery...
        () => new EventStore(source).retryDelivery(id),
        // ...then the delete, which removes the deliveries.
        () => holder.query('DELETE FROM event_subscriptions WHERE id = $1', [subscriptionId]),
      ),
    );

    expect(failures).toEqual([]);
    expect(result).toBe(false);
    expect(await deliveriesOf(subscriptionId)).toEqual([]);
  });

  it('a send whose event fans out to a subscription an admin is deleting', async () => {
    const instanceId = await insertInstance(context.db);
    const deleted = await insertSubscription(context.db, instanceId, ['message.sent']);
    const kept = await insertSubscription(context.db, instanceId, ['message.sent']);

    const { holder, holderPid } = await openHolder();
    // The admin's delete, not committed yet...
    const removed = await holder.query('DELETE FROM event_subscriptions WHERE id = $1', [deleted]);
    expect(removed.rowCount).toBe(1);
    const { failures } = await withWriter((source, pid) =>
      collide(
        holder,
        holderPid,
        pid,
        // ...while a send is recorded: its event is wanted by both subscriptions it sees.
        () =>
          new MessageStore(source).insertOutbound([send(instanceId, '5511970000051', 'wamid.b2b')]),
        () => Promise.resolve(),
      ),
    );

    // The send is stored and its event goes to the subscription that is left.
    expect(failures).toEqual([]);
    expect(
      await context.db.query(
        `SELECT d.subscription_id FROM event_deliveries d JOIN events e ON e.seq = d.event_seq
         WHERE e.instance_id = $1 AND e.type = 'message.sent'`,
        [instanceId],
      ),
    ).toEqual([{ subscription_id: kept }]);
  });

  it('an admin disabling a subscription, against the dispatcher finishing its lanes', async () => {
    const instanceId = await insertInstance(context.db);
    const { subscriptionId, lanes } = await subscriptionWithTwoLanes(
      instanceId,
      ['5511970000061', '5511970000062'],
      'wamid.b2c',
    );

    const { holder, holderPid } = await openHolder();
    // A finish's lanes, in the lane order: the first...
    expect((await lockLane(holder, subscriptionId, lanes[0])).rowCount).toBe(1);
    const { failures } = await withWriter((source, pid) =>
      collide(
        holder,
        holderPid,
        pid,
        // ...while an admin disables the subscription (its lanes parked)...
        () => new EventStore(source).update(subscriptionId, { enabled: false }),
        // ...then the second lane.
        () => lockLane(holder, subscriptionId, lanes[1]),
      ),
    );

    expect(failures).toEqual([]);
    expect(await lanesOf(subscriptionId)).toEqual(lanes.map((lane) => ({ lane, parked: true })));
  });
});
