import { randomUUID } from 'node:crypto';
import { isoFromEpochMicros } from '../../src/common/epoch-micros.js';
import { LIVE_CHANNEL } from '../../src/live/live.functions.sql.js';
import { MessageStore } from '../../src/messages/message.store.js';
import { OPEN_TURN_STATES, TURN_STATES, type NewTurnPart } from '../../src/turns/turn-states.js';
import { TurnStore, type ClaimOptions } from '../../src/turns/turn.store.js';
import { waitFor } from '../support/wait.js';
import { insertInstance, insertSubscription, useMigratedDatabase } from './support.js';

/**
 * Turns: TurnStore's statements and the turn triggers. Each case works on
 * contacts of its own; times that must be past are written in the past.
 */
const context = useMigratedDatabase();
let turns: TurnStore;
let messages: MessageStore;
let instanceId: string;

beforeAll(async () => {
  turns = new TurnStore(context.source);
  messages = new MessageStore(context.source);
  instanceId = await insertInstance(context.db);
});

let numbers = 0;

/** A contact of `instance` with a number of its own. */
async function newContact(instance = instanceId) {
  const waId = `55119${String(Date.now()).slice(-6)}${String(++numbers).padStart(4, '0')}`;
  const [row] = await context.db.query<{ id: string }>(
    `INSERT INTO contacts (instance_id, wa_id, user_id, name) VALUES ($1, $2, $3, 'Maria')
     RETURNING id`,
    [instance, waId, `BR.${waId}`],
  );
  return { contactId: row.id, waId };
}

/** Stores inbound messages waiting for a turn, received at `times`; their wamids in order. */
async function receive(
  contact: { contactId: string; waId: string },
  times: Date[],
  instance = instanceId,
) {
  const rows = times.map((at, n) => ({
    wamid: `wamid.${randomUUID()}`,
    address: contact.waId,
    contactId: contact.contactId,
    type: 'text',
    body: JSON.stringify({ from: contact.waId, type: 'text', text: { body: `m${n}` } }),
    sentAt: at,
    receivedAt: at,
  }));
  await messages.insertInbound(instance, true, rows);
  return rows.map((row) => row.wamid);
}

const ago = (ms: number) => new Date(Date.now() - ms);

const OPTIONS: ClaimOptions = {
  leaseMs: 60_000,
  agentHorizonMs: 600_000,
  dueBy: new Date(),
  delayMs: 1000,
  maxWaitMs: 10_000,
};

/** Claims the contact's waiting messages (received an hour ago) as a new turn under `owner`. */
async function claimed(owner = randomUUID(), instance = instanceId) {
  const contact = await newContact(instance);
  const wamids = await receive(contact, [ago(3_600_000), ago(3_599_000)], instance);
  const turnId = randomUUID();
  const result = await turns.claim(turnId, instance, contact.contactId, owner, {
    ...OPTIONS,
    dueBy: new Date(),
  });
  expect(result.kind).toBe('claimed');
  return { ...contact, turnId, owner, wamids };
}

async function turnRow(turnId: string) {
  const [row] = await context.db.query<{
    status: string;
    attempts: number;
    lease_owner: string | null;
    lease_until: Date | null;
    next_attempt_at: Date | null;
    agent_deadline: Date | null;
    reply_deadline: Date | null;
    completed_at: Date | null;
    last_error: string | null;
    answer: unknown;
    retry_pending: boolean;
  }>(`SELECT *, next_attempt_at > now() AS retry_pending FROM turns WHERE id = $1`, [turnId]);
  return row;
}

/** Writes a turn as it would be at some step. */
async function writeTurn(
  contactId: string,
  fields: { status: string; owner?: string | null; leaseUntil?: string; answer?: unknown },
  instance = instanceId,
) {
  const id = randomUUID();
  await context.db.query(
    `INSERT INTO turns (id, instance_id, contact_id, status, lease_owner, lease_until, answer)
     VALUES ($1, $2, $3, $4, $5, now() + $6::interval, $7)`,
    [
      id,
      instance,
      contactId,
      fields.status,
      fields.owner ?? null,
      fields.leaseUntil ?? '1 minute',
      fields.answer === undefined ? null : JSON.stringify(fields.answer),
    ],
  );
  return id;
}

const text = (body: string): NewTurnPart => ({ kind: 'text', body: { body }, status: 'queued' });

async function partsOf(turnId: string) {
  return context.db.query<{
    position: number;
    status: string;
    wamid: string | null;
    error: string | null;
    attempts: number;
  }>(
    `SELECT position, status, wamid, error, attempts FROM turn_parts WHERE turn_id = $1
     ORDER BY position`,
    [turnId],
  );
}

describe('TurnStore', () => {
  describe('claim', () => {
    it('opens a turn with all the contact’s waiting messages, in order, and its contact', async () => {
      const contact = await newContact();
      const bystander = await newContact();
      const wamids = await receive(contact, [ago(3_600_000), ago(3_599_000), ago(3_598_000)]);
      await receive(bystander, [ago(3_600_000)]);
      const turnId = randomUUID();
      const owner = randomUUID();

      const result = await turns.claim(turnId, instanceId, contact.contactId, owner, OPTIONS);

      expect(result).toEqual({
        kind: 'claimed',
        turnId,
        messages: ['m0', 'm1', 'm2'].map((body): unknown =>
          expect.objectContaining({ text: { body } }),
        ),
        contact: {
          wa_id: contact.waId,
          user_id: `BR.${contact.waId}`,
          parent_user_id: null,
          username: null,
          name: 'Maria',
        },
      });
      expect(await turnRow(turnId)).toMatchObject({
        status: 'calling',
        attempts: 1,
        lease_owner: owner,
        lease_until: expect.any(Date),
        agent_deadline: expect.any(Date),
      });
      expect((await turns.messageIds([turnId])).get(turnId)).toEqual(wamids);
      const waiting = await context.db.query<{ contact_id: string }>(
        `SELECT contact_id FROM messages WHERE awaiting_turn AND contact_id = ANY($1::uuid[])`,
        [[contact.contactId, bystander.contactId]],
      );
      expect(waiting).toEqual([{ contact_id: bystander.contactId }]);
    });

    it('answers busy while the contact has an open turn, its new messages left waiting', async () => {
      const first = await claimed();
      await receive(first, [ago(3_000_000)]);
      const result = await turns.claim(
        randomUUID(),
        instanceId,
        first.contactId,
        randomUUID(),
        OPTIONS,
      );
      expect(result).toEqual({ kind: 'busy', turnId: first.turnId });
      const [{ n }] = await context.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM messages WHERE awaiting_turn AND contact_id = $1`,
        [first.contactId],
      );
      expect(n).toBe(1);
    });

    it('takes nothing before the buffer is due, by the quiet delay or the max wait', async () => {
      const contact = await newContact();
      const first = new Date('2026-05-01T10:00:00.000Z');
      const last = new Date('2026-05-01T10:00:04.000Z');
      await receive(contact, [first, last]);
      const at = (iso: string) => new Date(iso);
      const claim = (dueBy: Date, delayMs: number | null) =>
        turns.claim(randomUUID(), instanceId, contact.contactId, randomUUID(), {
          ...OPTIONS,
          dueBy,
          delayMs,
          maxWaitMs: 10_000,
        });

      // Due 1 s after the last (10:00:05), or 10 s after the first (10:00:10).
      expect(await claim(at('2026-05-01T10:00:04.999Z'), 1000)).toEqual({
        kind: 'not_due',
        awaiting: { first, last },
      });
      // Behind a backlog quiet gaps do not count: the max wait only.
      expect((await claim(at('2026-05-01T10:00:09.999Z'), null)).kind).toBe('not_due');
      expect((await claim(at('2026-05-01T10:00:10.000Z'), null)).kind).toBe('claimed');
    });

    it('is due by the quiet delay after the last message', async () => {
      const contact = await newContact();
      await receive(contact, [new Date('2026-05-01T10:00:00Z'), new Date('2026-05-01T10:00:04Z')]);
      const result = await turns.claim(randomUUID(), instanceId, contact.contactId, randomUUID(), {
        ...OPTIONS,
        dueBy: new Date('2026-05-01T10:00:05Z'),
        delayMs: 1000,
        maxWaitMs: 10_000,
      });
      expect(result.kind).toBe('claimed');
    });

    it('answers empty when nothing waits', async () => {
      const contact = await newContact();
      expect(
        await turns.claim(randomUUID(), instanceId, contact.contactId, randomUUID(), OPTIONS),
      ).toEqual({ kind: 'empty' });
      expect(
        await context.db.query(`SELECT 1 FROM turns WHERE contact_id = $1`, [contact.contactId]),
      ).toEqual([]);
    });

    it('gives each message to exactly one turn when several claims race', async () => {
      const contact = await newContact();
      const wamids = await receive(contact, [ago(3_600_000), ago(3_599_000)]);
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          turns.claim(randomUUID(), instanceId, contact.contactId, randomUUID(), OPTIONS),
        ),
      );
      const won = results.filter((r) => r.kind === 'claimed');
      expect(won).toHaveLength(1);
      const taken = await context.db.query<{ turn_id: string; wamid: string }>(
        `SELECT turn_id, wamid FROM messages WHERE contact_id = $1 ORDER BY seq`,
        [contact.contactId],
      );
      expect(taken).toEqual(
        wamids.map((wamid) => ({ wamid, turn_id: (won[0] as { turnId: string }).turnId })),
      );
      const [{ n }] = await context.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM turns WHERE contact_id = $1`,
        [contact.contactId],
      );
      expect(n).toBe(1);
    });
  });

  describe('acquire, renew and release', () => {
    it('acquires a free, expired or own lease, and not one another worker holds', async () => {
      const { turnId, owner } = await claimed();
      const other = randomUUID();
      expect(await turns.acquire(turnId, other, 60_000)).toBeNull();
      expect(await turns.acquire(turnId, owner, 60_000)).toMatchObject({ lease_owner: owner });

      await context.db.query(
        `UPDATE turns SET lease_until = now() - interval '1 second' WHERE id = $1`,
        [turnId],
      );
      expect(await turns.acquire(turnId, other, 60_000)).toMatchObject({
        id: turnId,
        lease_owner: other,
      });
      await turns.release(turnId, owner);
      expect((await turnRow(turnId)).lease_owner).toBe(other);
      await turns.release(turnId, other);
      expect(await turnRow(turnId)).toMatchObject({ lease_owner: null, lease_until: null });
      expect(await turns.acquire(turnId, owner, 60_000)).toMatchObject({ lease_owner: owner });
    });

    it('does not acquire while a retry waits, nor an ended turn', async () => {
      const { turnId, owner } = await claimed();
      await turns.waitForRetry(turnId, owner, 3_600_000, 'the agent answered 503');
      expect(await turns.acquire(turnId, owner, 60_000)).toBeNull();
      await context.db.query(
        `UPDATE turns SET next_attempt_at = now() - interval '1 second' WHERE id = $1`,
        [turnId],
      );
      expect(await turns.acquire(turnId, owner, 60_000)).not.toBeNull();
      await turns.finish(turnId, owner, 'done', null);
      expect(await turns.acquire(turnId, owner, 60_000)).toBeNull();
    });

    it('renews the owner’s lease only', async () => {
      const { turnId, owner } = await claimed();
      await context.db.query(
        `UPDATE turns SET lease_until = now() + interval '1 second' WHERE id = $1`,
        [turnId],
      );
      expect(await turns.renew(turnId, randomUUID(), 3_600_000)).toBe(false);
      expect(
        (
          await context.db.query(
            `SELECT 1 FROM turns WHERE id = $1 AND lease_until > now() + interval '1 minute'`,
            [turnId],
          )
        ).length,
      ).toBe(0);
      expect(await turns.renew(turnId, owner, 3_600_000)).toBe(true);
      expect(
        (
          await context.db.query(
            `SELECT 1 FROM turns WHERE id = $1 AND lease_until > now() + interval '1 minute'`,
            [turnId],
          )
        ).length,
      ).toBe(1);
    });
  });

  describe('startAgentAttempt', () => {
    it('counts a call under the lease, setting the agent horizon once', async () => {
      const { contactId } = await newContact();
      const owner = randomUUID();
      const turnId = await writeTurn(contactId, { status: 'claimed', owner });
      expect(await turns.startAgentAttempt(turnId, randomUUID(), 60_000)).toBeNull();
      const started = await turns.startAgentAttempt(turnId, owner, 60_000);
      expect(started).toMatchObject({ status: 'calling', attempts: 1, next_attempt_at: null });
      const horizon = started!.agent_deadline!;
      const again = await turns.startAgentAttempt(turnId, owner, 3_600_000);
      expect(again!.attempts).toBe(2);
      expect(again!.agent_deadline!.getTime()).toBe(horizon.getTime());
      // Not once the answer is stored.
      await turns.storeAnswer(turnId, owner, {}, [text('a')], 60_000);
      expect(await turns.startAgentAttempt(turnId, owner, 60_000)).toBeNull();
      expect((await turnRow(turnId)).attempts).toBe(2);
    });
  });

  describe('storeAnswer', () => {
    it('stores the answer and its parts and goes on to sending', async () => {
      const { turnId, owner } = await claimed();
      const skipped: NewTurnPart = {
        kind: 'image',
        body: { nope: true },
        status: 'skipped',
        error: 'no link',
      };
      const result = await turns.storeAnswer(
        turnId,
        owner,
        { replies: ['a', 'b'] },
        [text('a'), skipped, text('b')],
        60_000,
      );
      expect(result).toEqual({ stored: true, ended: false, awaiting: null });
      expect(await turnRow(turnId)).toMatchObject({
        status: 'sending',
        answer: { replies: ['a', 'b'] },
        reply_deadline: expect.any(Date),
        lease_owner: owner,
        completed_at: null,
      });
      expect(await partsOf(turnId)).toEqual([
        { position: 0, status: 'queued', wamid: null, error: null, attempts: 0 },
        { position: 1, status: 'skipped', wamid: null, error: 'no link', attempts: 0 },
        { position: 2, status: 'queued', wamid: null, error: null, attempts: 0 },
      ]);
      expect((await turns.queuedParts(turnId)).map((p) => [p.position, p.kind, p.body])).toEqual([
        [0, 'text', { body: 'a' }],
        [2, 'text', { body: 'b' }],
      ]);
    });

    it('ends the turn at once with nothing to send, saying when messages waited meanwhile', async () => {
      const contact = await newContact();
      const owner = randomUUID();
      await receive(contact, [ago(3_600_000)]);
      const turnId = randomUUID();
      await turns.claim(turnId, instanceId, contact.contactId, owner, OPTIONS);
      const meanwhile = [new Date('2026-05-01T10:00:00Z'), new Date('2026-05-01T10:00:02Z')];
      await receive(contact, meanwhile);

      const result = await turns.storeAnswer(turnId, owner, { replies: [] }, [], 60_000);
      expect(result).toEqual({
        stored: true,
        ended: true,
        awaiting: { first: meanwhile[0], last: meanwhile[1] },
      });
      expect(await turnRow(turnId)).toMatchObject({
        status: 'done',
        lease_owner: null,
        completed_at: expect.any(Date),
        reply_deadline: null,
      });
    });

    it('stores nothing without the lease', async () => {
      const { turnId } = await claimed();
      expect(await turns.storeAnswer(turnId, randomUUID(), { x: 1 }, [text('a')], 60_000)).toEqual({
        stored: false,
        ended: false,
        awaiting: null,
      });
      expect(await turnRow(turnId)).toMatchObject({ status: 'calling', answer: null });
      expect(await partsOf(turnId)).toEqual([]);
    });
  });

  describe('waitForRetry and waitForSlot', () => {
    it('releases the turn until its retry, under the lease only', async () => {
      const { turnId, owner } = await claimed();
      expect(await turns.waitForRetry(turnId, randomUUID(), 60_000, 'nope')).toBe(false);
      expect(await turns.waitForRetry(turnId, owner, 3_600_000, 'the agent answered 503')).toBe(
        true,
      );
      expect(await turnRow(turnId)).toMatchObject({
        status: 'calling',
        lease_owner: null,
        lease_until: null,
        last_error: 'the agent answered 503',
        retry_pending: true,
      });
    });

    it('releases a turn waiting for an agent slot due at once, taking back an uncounted call', async () => {
      const { turnId, owner } = await claimed();
      expect(await turns.waitForSlot(turnId, randomUUID(), true, 'slots')).toBe(false);
      expect(await turns.waitForSlot(turnId, owner, true, 'every agent call in use')).toBe(true);
      expect(await turnRow(turnId)).toMatchObject({
        attempts: 0,
        lease_owner: null,
        last_error: 'every agent call in use',
        retry_pending: false,
        next_attempt_at: expect.any(Date),
      });
      expect(await turns.acquire(turnId, owner, 60_000)).not.toBeNull();
      expect(await turns.waitForSlot(turnId, owner, false, 'again')).toBe(true);
      expect((await turnRow(turnId)).attempts).toBe(0);
      // Not once the answer is stored.
      const sending = await claimed();
      await turns.storeAnswer(sending.turnId, sending.owner, {}, [text('a')], 60_000);
      expect(await turns.waitForSlot(sending.turnId, sending.owner, true, 'x')).toBe(false);
    });
  });

  describe('finish', () => {
    it('ends the turn under the lease, its sent part settled, and says what waits', async () => {
      const { turnId, owner, contactId, waId } = await claimed();
      await turns.storeAnswer(turnId, owner, {}, [text('a'), text('b')], 60_000);
      await turns.settlePart(turnId, 0, 'sent', { wamid: 'wamid.part0' });
      const later = [new Date('2026-05-02T10:00:00Z')];
      await receive({ contactId, waId }, later);

      expect(await turns.finish(turnId, randomUUID(), 'done', null)).toEqual({
        ended: false,
        awaiting: null,
      });
      expect(
        await turns.finish(turnId, owner, 'done', null, { position: 1, wamid: 'wamid.part1' }),
      ).toEqual({ ended: true, awaiting: { first: later[0], last: later[0] } });
      expect(await turnRow(turnId)).toMatchObject({
        status: 'done',
        lease_owner: null,
        completed_at: expect.any(Date),
      });
      expect((await partsOf(turnId)).map((p) => [p.status, p.wamid])).toEqual([
        ['sent', 'wamid.part0'],
        ['sent', 'wamid.part1'],
      ]);
      // Once.
      expect((await turns.finish(turnId, owner, 'failed', 'late')).ended).toBe(false);
      expect((await turnRow(turnId)).status).toBe('done');
    });

    it('keeps the last error when failing without a new one', async () => {
      const { turnId, owner } = await claimed();
      await turns.waitForRetry(turnId, owner, 0, 'the agent answered 500');
      await turns.acquire(turnId, owner, 60_000);
      await turns.finish(turnId, owner, 'failed', null);
      expect(await turnRow(turnId)).toMatchObject({
        status: 'failed',
        last_error: 'the agent answered 500',
        next_attempt_at: null,
      });
    });
  });

  describe('startSending', () => {
    it('enters sending from answered, setting the reply horizon once, under the lease', async () => {
      const { contactId } = await newContact();
      const owner = randomUUID();
      const turnId = await writeTurn(contactId, { status: 'answered', owner, answer: {} });
      expect(await turns.startSending(turnId, randomUUID(), 60_000)).toBeNull();
      const horizon = await turns.startSending(turnId, owner, 60_000);
      expect(horizon).toBeInstanceOf(Date);
      expect((await turnRow(turnId)).status).toBe('sending');
      expect((await turns.startSending(turnId, owner, 3_600_000))!.getTime()).toBe(
        horizon!.getTime(),
      );
    });
  });

  describe('parts', () => {
    it('settles parts whoever holds the turn, counts failed attempts, and names the first failure', async () => {
      const { turnId, owner } = await claimed();
      await turns.storeAnswer(turnId, owner, {}, [text('a'), text('b'), text('c')], 60_000);
      expect(await turns.firstPartFailure(turnId)).toBeNull();

      await turns.countPartAttempt(turnId, 0, 'timeout');
      await turns.settlePart(turnId, 0, 'sent', { wamid: 'wamid.a' });
      await turns.settlePart(turnId, 2, 'failed', { error: 'invalid parameter' });
      await turns.settlePart(turnId, 1, 'uncertain', {});
      expect(await partsOf(turnId)).toEqual([
        { position: 0, status: 'sent', wamid: 'wamid.a', error: null, attempts: 2 },
        { position: 1, status: 'uncertain', wamid: null, error: null, attempts: 1 },
        { position: 2, status: 'failed', wamid: null, error: 'invalid parameter', attempts: 1 },
      ]);
      expect(await turns.queuedParts(turnId)).toEqual([]);
      expect(await turns.firstPartFailure(turnId)).toBe('reply part 2: invalid parameter');

      const byTurn = await turns.parts([turnId, randomUUID()]);
      expect([...byTurn.keys()]).toEqual([turnId]);
      expect(byTurn.get(turnId)!.map((p) => p.position)).toEqual([0, 1, 2]);
    });
  });

  describe('get, list and messageIds', () => {
    it('gets a turn with its contact', async () => {
      const { turnId, waId } = await claimed();
      expect(await turns.get(turnId)).toMatchObject({
        id: turnId,
        status: 'calling',
        contact_wa_id: waId,
        contact_user_id: `BR.${waId}`,
        contact_username: null,
        contact_name: 'Maria',
      });
      expect(await turns.get(randomUUID())).toBeNull();
    });

    it('lists newest first, by status, instance and contact key, a page after a cursor', async () => {
      const instance = await insertInstance(context.db);
      const made: string[] = [];
      for (let i = 0; i < 3; i++) made.push((await claimed(randomUUID(), instance)).turnId);
      const first = await turns.get(made[0]);
      await context.db.query(`UPDATE turns SET status = 'failed' WHERE id = $1`, [made[0]]);
      const newestFirst = [...made].reverse();

      const page = await turns.list({ instanceId: instance }, undefined, 2);
      expect(page.turns.map((t) => t.id)).toEqual(newestFirst.slice(0, 2));
      expect(page.hasMore).toBe(true);
      const last = page.turns[1];
      expect(last.contact_wa_id).toEqual(expect.any(String));
      const rest = await turns.list(
        { instanceId: instance },
        { at: isoFromEpochMicros(BigInt(last.cursor.atMicros)), id: last.cursor.id },
        2,
      );
      expect(rest.turns.map((t) => t.id)).toEqual(newestFirst.slice(2));
      expect(rest.hasMore).toBe(false);

      expect(
        (await turns.list({ instanceId: instance, status: 'failed' }, undefined, 10)).turns.map(
          (t) => t.id,
        ),
      ).toEqual([made[0]]);
      for (const key of [first!.contact_wa_id!, first!.contact_user_id!]) {
        expect((await turns.list({ contact: key }, undefined, 10)).turns.map((t) => t.id)).toEqual([
          made[0],
        ]);
      }
    });

    it('gives each turn’s wamids in the order the agent got them', async () => {
      const a = await claimed();
      const b = await claimed();
      const ids = await turns.messageIds([a.turnId, b.turnId, randomUUID()]);
      expect(Object.fromEntries(ids)).toEqual({ [a.turnId]: a.wamids, [b.turnId]: b.wamids });
    });
  });

  describe('reopen', () => {
    it('reopens a failed turn without an answer to call the agent again', async () => {
      const { turnId, owner } = await claimed();
      await turns.finish(turnId, owner, 'failed', 'the agent answered 400');
      const result = await turns.reopen(turnId);
      expect(result).toEqual({
        kind: 'reopened',
        turn: expect.objectContaining({
          id: turnId,
          status: 'claimed',
          last_error: null,
          lease_owner: null,
          agent_deadline: null,
          completed_at: null,
        }),
      });
      expect(await turns.reopen(turnId)).toEqual({ kind: 'not_failed' });
      expect(await turns.reopen(randomUUID())).toEqual({ kind: 'not_failed' });
    });

    it('reopens a failed turn with an answer to send its failed parts again', async () => {
      const { turnId, owner } = await claimed();
      await turns.storeAnswer(turnId, owner, {}, [text('a'), text('b'), text('c')], 60_000);
      await turns.settlePart(turnId, 0, 'sent', { wamid: 'wamid.sent' });
      await turns.settlePart(turnId, 1, 'failed', { error: 'rejected' });
      await turns.settlePart(turnId, 2, 'uncertain', {});
      await turns.finish(turnId, owner, 'failed', 'reply part 1: rejected');

      const result = await turns.reopen(turnId);
      expect(result).toMatchObject({ kind: 'reopened', turn: { status: 'sending' } });
      expect((await partsOf(turnId)).map((p) => [p.status, p.error])).toEqual([
        ['sent', null],
        ['queued', null],
        ['uncertain', null],
      ]);
    });

    it('answers busy when the contact has another open turn', async () => {
      const { turnId, owner, contactId, waId } = await claimed();
      await turns.finish(turnId, owner, 'failed', 'x');
      await receive({ contactId, waId }, [ago(3_600_000)]);
      const next = randomUUID();
      await turns.claim(next, instanceId, contactId, randomUUID(), OPTIONS);
      expect(await turns.reopen(turnId)).toEqual({ kind: 'busy', turnId: next });
      expect((await turnRow(turnId)).status).toBe('failed');
    });
  });

  describe('overdueContacts', () => {
    const first = new Date('2026-04-01T10:00:00.000Z');
    const last = new Date('2026-04-01T10:00:05.000Z');
    const timing = { delayMs: 10_000, maxWaitMs: 60_000 };
    const after = (base: Date, ms: number) => new Date(base.getTime() + ms);

    it('finds contacts whose buffer was due more than the grace before, by the due rule', async () => {
      const contact = await newContact();
      await receive(contact, [first, last]);
      const overdue = async (
        asOf: Date,
        live: boolean,
        own: Array<{ instanceId: string; delayMs: number; maxWaitMs: number }> = [],
        graceMs = 0,
      ) =>
        (await turns.overdueContacts(timing, own, live, graceMs, asOf)).filter(
          (row) => row.contact_id === contact.contactId,
        );
      const mine = [{ instance_id: instanceId, contact_id: contact.contactId }];

      // Live: due 10 s after the last (10:00:15), before the max wait (10:01:00).
      expect(await overdue(after(last, 10_000), true)).toEqual([]);
      expect(await overdue(after(last, 10_001), true)).toEqual(mine);
      expect(await overdue(after(last, 10_001), true, [], 1)).toEqual([]);
      // Behind: only the max wait.
      expect(await overdue(after(first, 60_000), false)).toEqual([]);
      expect(await overdue(after(first, 60_001), false)).toEqual(mine);
      // The instance's own timing comes first.
      const own = [{ instanceId, delayMs: 1000, maxWaitMs: 3000 }];
      expect(await overdue(after(first, 3001), true, own)).toEqual(mine);
      expect(await overdue(after(first, 3000), true, own)).toEqual([]);
      const other = [{ instanceId: randomUUID(), delayMs: 1000, maxWaitMs: 3000 }];
      expect(await overdue(after(first, 3001), true, other)).toEqual([]);
    });

    it('leaves a contact with an open turn', async () => {
      const contact = await newContact();
      await receive(contact, [first]);
      await writeTurn(contact.contactId, { status: 'sending' });
      const found = await turns.overdueContacts(timing, [], true, 0, after(first, 3_600_000));
      expect(found.filter((row) => row.contact_id === contact.contactId)).toEqual([]);
    });
  });

  describe('resumable', () => {
    it('lists open turns whose lease expired and whose retry is not pending', async () => {
      const { contactId: a } = await newContact();
      const { contactId: b } = await newContact();
      const { contactId: c } = await newContact();
      const { contactId: d } = await newContact();
      const expired = await writeTurn(a, {
        status: 'calling',
        owner: 'w',
        leaseUntil: '-1 second',
      });
      const live = await writeTurn(b, { status: 'calling', owner: 'w', leaseUntil: '1 minute' });
      const waiting = await writeTurn(c, {
        status: 'calling',
        owner: null,
        leaseUntil: '-1 second',
      });
      await context.db.query(
        `UPDATE turns SET next_attempt_at = now() + interval '1 hour' WHERE id = $1`,
        [waiting],
      );
      const ended = await writeTurn(d, { status: 'done', owner: null, leaseUntil: '-1 second' });
      const found = await turns.resumable(0);
      expect(found).toContain(expired);
      for (const id of [live, waiting, ended]) expect(found).not.toContain(id);
    });
  });

  describe('countsByState', () => {
    it('counts open and failed turns by state', async () => {
      const counts = async () =>
        Object.fromEntries((await turns.countsByState()).map((row) => [row.status, row.count]));
      const before = await counts();
      const { contactId: a } = await newContact();
      const { contactId: b } = await newContact();
      const { contactId: c } = await newContact();
      await writeTurn(a, { status: 'sending' });
      await writeTurn(b, { status: 'failed' });
      await writeTurn(c, { status: 'done' });
      const now = await counts();
      expect(now.sending).toBe((before.sending ?? 0) + 1);
      expect(now.failed).toBe((before.failed ?? 0) + 1);
      expect(now.done).toBeUndefined();
    });
  });
});

describe('mc_turn_open', () => {
  it('is true for the open states only', async () => {
    const found = await context.db.query<{ status: string; open: boolean }>(
      `SELECT s AS status, mc_turn_open(s) AS open FROM unnest($1::text[]) AS s`,
      [[...TURN_STATES, 'pending']],
    );
    expect(found.filter((row) => row.open).map((row) => row.status)).toEqual([...OPEN_TURN_STATES]);
  });
});

describe('mc_turn_failed', () => {
  const failedEvents = (instance: string) =>
    context.db.query<{ lane: string; data: Record<string, unknown> }>(
      `SELECT lane, data FROM events WHERE type = 'turn.failed' AND instance_id = $1 ORDER BY seq`,
      [instance],
    );

  it('writes one turn.failed event when a turn fails, with its contact', async () => {
    const instance = await insertInstance(context.db);
    await insertSubscription(context.db, instance, ['turn.failed']);
    const { turnId, owner, contactId, waId } = await claimed(randomUUID(), instance);
    await turns.finish(turnId, owner, 'failed', 'the agent answered 400');
    const [row] = await context.db.query<{ created_at: Date }>(
      `SELECT created_at FROM turns WHERE id = $1`,
      [turnId],
    );
    expect(await failedEvents(instance)).toEqual([
      {
        lane: `contact:${contactId}`,
        data: {
          turn_id: turnId,
          error: 'the agent answered 400',
          attempts: 1,
          created_at: row.created_at.toISOString(),
          contact: { wa_id: waId, user_id: `BR.${waId}`, name: 'Maria' },
        },
      },
    ]);
    // Not again for a change of a failed turn, nor for other states.
    await context.db.query(`UPDATE turns SET status = 'failed', last_error = 'x' WHERE id = $1`, [
      turnId,
    ]);
    const done = await claimed(randomUUID(), instance);
    await turns.finish(done.turnId, done.owner, 'done', null);
    expect(await failedEvents(instance)).toHaveLength(1);
  });

  it('writes nothing when no subscription wants turn.failed', async () => {
    const instance = await insertInstance(context.db);
    const { turnId, owner } = await claimed(randomUUID(), instance);
    await turns.finish(turnId, owner, 'failed', 'x');
    expect(await failedEvents(instance)).toEqual([]);
  });
});

describe('mc_turn_live', () => {
  it("tells the live streams of a turn's messages when it fails and when a retry takes it up, not otherwise", async () => {
    const instance = await insertInstance(context.db);
    await context.db.query(
      `INSERT INTO live_listeners (instance_id, process_id, expires_at)
       VALUES ($1, $2, now() + interval '1 minute')`,
      [instance, randomUUID()],
    );
    const listener = await context.client();
    const heard: Array<{ k: string; i: string; ids: string[] }> = [];
    listener.on('notification', (n) => {
      if (n.channel === LIVE_CHANNEL) heard.push(JSON.parse(n.payload!) as (typeof heard)[number]);
    });
    await listener.query(`LISTEN ${LIVE_CHANNEL}`);
    /** Waits for a marker sent now: every notice of an earlier commit has come (they keep commit order). */
    const settled = async () => {
      const marker = randomUUID();
      await context.db.query(`SELECT pg_notify($1, $2)`, [
        LIVE_CHANNEL,
        JSON.stringify({ k: 'marker', i: marker, ids: [] }),
      ]);
      await waitFor(() => heard.some((n) => n.i === marker));
    };
    /** What was heard about `instance` from `act` alone. */
    const heardAfter = async (act: () => Promise<unknown>) => {
      await settled();
      heard.length = 0;
      await act();
      await settled();
      return heard.splice(0).filter((n) => n.i === instance);
    };
    try {
      const { turnId, owner, wamids } = await claimed(randomUUID(), instance);
      const ids = (
        await context.db.query<{ id: string }>(
          'SELECT id FROM messages WHERE wamid = ANY($1::text[]) ORDER BY id',
          [wamids],
        )
      ).map((m) => m.id);
      const told = (notices: typeof heard) => notices.flatMap((n) => n.ids).sort();

      expect(told(await heardAfter(() => turns.finish(turnId, owner, 'failed', 'x')))).toEqual(ids);
      // A change of the failed turn that leaves it failed says nothing.
      expect(
        await heardAfter(() =>
          context.db.query(`UPDATE turns SET last_error = 'y', status = 'failed' WHERE id = $1`, [
            turnId,
          ]),
        ),
      ).toEqual([]);
      // A retry takes it up: the failure is no longer theirs.
      expect(
        told(
          await heardAfter(() =>
            context.db.query(`UPDATE turns SET status = 'claimed' WHERE id = $1`, [turnId]),
          ),
        ),
      ).toEqual(ids);
      // A turn that ends well says nothing here (its answer is a message of its own).
      const done = await claimed(randomUUID(), instance);
      expect(await heardAfter(() => turns.finish(done.turnId, done.owner, 'done', null))).toEqual(
        [],
      );
    } finally {
      await listener.end();
    }
  });
});
