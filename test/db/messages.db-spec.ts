import { randomUUID } from 'node:crypto';
import { ContactStore } from '../../src/contacts/contact.store.js';
import type { Contact } from '../../src/contacts/contact.types.js';
import {
  MessageStore,
  type ArrivalPosition,
  type ConversationMessage,
  type InboundRow,
  type OutboundRow,
} from '../../src/messages/message.store.js';
import type { Message } from '../../src/messages/message.types.js';
import { MessagesService } from '../../src/messages/messages.service.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { CacheInvalidationService } from '../../src/redis/cache-invalidation.service.js';
import { UNREAD_CAP } from '../../src/contacts/contact-summaries.js';
import {
  insertInstance,
  insertSubscription,
  useMigratedDatabase,
  insertContact,
  type ContactFields,
} from './support.js';

const MESSAGE_EVENTS = ['message.received', 'message.sent', 'message.status'];
const FUTURE = new Date('2100-01-01T00:00:00.000Z');
const PAST = new Date('2001-01-01T00:00:00.000Z');

const context = useMigratedDatabase();
let store: MessageStore;
let contacts: ContactStore;

beforeAll(() => {
  store = new MessageStore(context.source);
  contacts = new ContactStore(context.source);
});

/** An instance whose message events a subscription wants. */
async function watchedInstance(types: string[] = MESSAGE_EVENTS): Promise<string> {
  const instanceId = await insertInstance(context.db);
  await insertSubscription(context.db, instanceId, types);
  return instanceId;
}

/** Creates a contact through mc_resolve_contact (a number, a user id, or both). */
const newContact = (instanceId: string, fields?: ContactFields): Promise<string> =>
  insertContact(context.db, instanceId, fields);

async function contact(id: string): Promise<Contact> {
  const [row] = await context.db.query<Contact>('SELECT * FROM contacts WHERE id = $1', [id]);
  return row;
}

async function message(wamid: string): Promise<Message> {
  const [row] = await context.db.query<Message>('SELECT * FROM messages WHERE wamid = $1', [wamid]);
  return row;
}

function wamid(): string {
  return `wamid.${randomUUID()}`;
}

/** A text from `address` to store for `contactId`. */
function inbound(address: string, contactId: string, fields: Partial<InboundRow> = {}): InboundRow {
  const text = fields.type === 'system' ? {} : { text: { body: 'Oi' } };
  return {
    wamid: wamid(),
    address,
    contactId,
    type: 'text',
    body: JSON.stringify({ from: address, type: fields.type ?? 'text', ...text }),
    sentAt: new Date('2026-09-01T10:00:00.000Z'),
    receivedAt: new Date('2026-09-01T10:00:01.000Z'),
    ...fields,
  };
}

function outbound(instanceId: string, address: string, fields: Partial<OutboundRow> = {}) {
  return {
    instanceId,
    address,
    byNumber: /^\d+$/.test(address),
    sentBy: 'api' as const,
    type: 'text',
    body: { text: { body: 'Olá' } },
    wamid: wamid(),
    ...fields,
  };
}

async function eventsOf(
  instanceId: string,
): Promise<Array<{ type: string; lane: string; data: Record<string, unknown> }>> {
  return context.db.query(
    'SELECT type, lane, data FROM events WHERE instance_id = $1 ORDER BY seq',
    [instanceId],
  );
}

async function databaseNow(): Promise<Date> {
  const [row] = await context.db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  return row.now;
}

/** A conversation message's arrival position, as a client's cursor carries it. */
function positionOf(m: ConversationMessage): ArrivalPosition {
  return {
    second: BigInt(m.created_us) / 1_000_000n,
    receivedUs: BigInt(m.received_us),
    seq: BigInt(m.seq),
  };
}

describe('MessageStore', () => {
  describe('ping', () => {
    it('answers while the database does', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });

  describe('insertInbound', () => {
    it('stores new messages waiting for a turn, skips a wamid already stored, and tells whether some waited before', async () => {
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000001' });
      const first = inbound('5511900000001', contactId, {
        sentAt: new Date('2026-09-01T10:00:00.000Z'),
        receivedAt: new Date('2026-09-01T10:00:02.000Z'),
      });
      const second = inbound('5511900000001', contactId, {
        receivedAt: new Date('2026-09-01T10:00:03.000Z'),
      });
      expect(await store.insertInbound(instanceId, true, [first, second])).toEqual([
        {
          contact_id: contactId,
          stored: 2,
          first: first.receivedAt,
          last: second.receivedAt,
          waited: false,
          words: null,
        },
      ]);
      expect(await message(first.wamid)).toMatchObject({
        instance_id: instanceId,
        direction: 'inbound',
        contact: '5511900000001',
        contact_id: contactId,
        type: 'text',
        body: JSON.parse(first.body) as unknown,
        status: 'received',
        awaiting_turn: true,
        turn_id: null,
        created_at: first.sentAt,
        received_at: first.receivedAt,
      });

      // Delivered again with a new one: only the new one is stored; the others still wait.
      const third = inbound('5511900000001', contactId, {
        receivedAt: new Date('2026-09-01T10:00:04.000Z'),
      });
      expect(
        await store.insertInbound(instanceId, true, [
          { ...first, body: '{"changed":true}' },
          third,
        ]),
      ).toEqual([
        {
          contact_id: contactId,
          stored: 1,
          first: third.receivedAt,
          last: third.receivedAt,
          waited: true,
          words: null,
        },
      ]);
      expect((await message(first.wamid)).body).toEqual(JSON.parse(first.body));
      expect(await store.insertInbound(instanceId, true, [second])).toEqual([]);
      const [{ count }] = await context.db.query<{ count: number }>(
        'SELECT count(*)::int AS count FROM messages WHERE contact_id = $1',
        [contactId],
      );
      expect(count).toBe(3);
    });

    it('stores without waiting: without an agent, a system message, a word not to answer, a paused or opted-out contact', async () => {
      const instanceId = await insertInstance(context.db);
      const free = await newContact(instanceId, { waId: '5511900000002' });
      const paused = await newContact(instanceId, { waId: '5511900000003' });
      const optedOut = await newContact(instanceId, { waId: '5511900000004' });
      const pauseEnded = await newContact(instanceId, { waId: '5511900000005' });
      await contacts.startHandoff(paused, FUTURE, 'a person', 'api');
      await contacts.setOptOut([optedOut], true);
      await contacts.startHandoff(pauseEnded, PAST, 'a person', 'api');

      const noAgent = inbound('5511900000002', free);
      expect(await store.insertInbound(instanceId, false, [noAgent])).toEqual([
        expect.objectContaining({ stored: 1, first: null, last: null, waited: false }),
      ]);

      const system = inbound('5511900000002', free, { type: 'system' });
      const stop = inbound('5511900000002', free, { answer: false });
      const whilePaused = inbound('5511900000003', paused);
      const whileOut = inbound('5511900000004', optedOut);
      const afterPause = inbound('5511900000005', pauseEnded);
      const stored = await store.insertInbound(instanceId, true, [
        system,
        stop,
        whilePaused,
        whileOut,
        afterPause,
      ]);
      expect(stored).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            contact_id: free,
            stored: 2,
            first: null,
            words: [stop.wamid],
          }),
          expect.objectContaining({ contact_id: paused, stored: 1, first: null, words: null }),
          expect.objectContaining({ contact_id: optedOut, stored: 1, first: null }),
          expect.objectContaining({
            contact_id: pauseEnded,
            stored: 1,
            first: afterPause.receivedAt,
          }),
        ]),
      );
      expect(stored).toHaveLength(4);
      const waiting = await context.db.query<{ wamid: string; awaiting_turn: boolean }>(
        'SELECT wamid, awaiting_turn FROM messages WHERE instance_id = $1',
        [instanceId],
      );
      expect(Object.fromEntries(waiting.map((m) => [m.wamid, m.awaiting_turn]))).toEqual({
        [noAgent.wamid]: false,
        [system.wamid]: false,
        [stop.wamid]: false,
        [whilePaused.wamid]: false,
        [whileOut.wamid]: false,
        [afterPause.wamid]: true,
      });
    });
  });

  describe('insertOutbound', () => {
    it("placeholdersOnly (echoes): completes a status's placeholder, never a message already sent; answers what it stored", async () => {
      const instanceId = await insertInstance(context.db);
      const ours = outbound(instanceId, '5511900000012');
      expect((await store.insertOutbound([ours])).wamids).toEqual([ours.wamid]);
      const echo = (wamid: string) =>
        outbound(instanceId, '5511900000012', {
          wamid,
          sentBy: 'phone_app',
          body: { text: { body: 'Do telefone' } },
        });
      // The echo of our own send changes nothing.
      expect(
        (await store.insertOutbound([echo(ours.wamid)], { placeholdersOnly: true })).wamids,
      ).toEqual([]);
      const [kept] = await context.db.query<{ sent_by: string }>(
        'SELECT sent_by FROM messages WHERE wamid = $1',
        [ours.wamid],
      );
      expect(kept.sent_by).toBe('api');
      // A status that came first left a placeholder: the echo completes it.
      await store.applyStatuses(instanceId, [
        {
          wamid: 'wamid.echo-early',
          recipient: '5511900000012',
          status: 'delivered',
          errors: null,
        },
      ]);
      expect(
        (await store.insertOutbound([echo('wamid.echo-early')], { placeholdersOnly: true })).wamids,
      ).toEqual(['wamid.echo-early']);
      const [completed] = await context.db.query<{ sent_by: string; status: string }>(
        'SELECT sent_by, status FROM messages WHERE wamid = $1',
        ['wamid.echo-early'],
      );
      expect(completed).toEqual({ sent_by: 'phone_app', status: 'delivered' });
    });

    it('records a send to a new number as a send to a new contact, and to a known one as its', async () => {
      const instanceId = await insertInstance(context.db);
      const known = await newContact(instanceId, { waId: '5511900000010' });
      const toNew = outbound(instanceId, '5511900000011', { sentBy: 'agent' });
      const toKnown = outbound(instanceId, '5511900000010');
      await store.insertOutbound([toNew, toKnown]);

      const created = await message(toNew.wamid);
      expect(created).toMatchObject({
        instance_id: instanceId,
        direction: 'outbound',
        contact: '5511900000011',
        type: 'text',
        body: { text: { body: 'Olá' } },
        status: 'sent',
        sent_by: 'agent',
        awaiting_turn: false,
      });
      expect(await contact(created.contact_id!)).toMatchObject({
        instance_id: instanceId,
        wa_id: '5511900000011',
        user_id: null,
      });
      expect((await message(toKnown.wamid)).contact_id).toBe(known);
    });

    it('finds a user id as the user id of a contact first, then as a parent id; keeps a contact given', async () => {
      const instanceId = await insertInstance(context.db);
      const child = await newContact(instanceId, { userId: 'BR.2', parentUserId: 'BR.1' });
      const parent = await newContact(instanceId, { userId: 'BR.1' });
      const other = await newContact(instanceId, { userId: 'BR.3', parentUserId: 'BR.9' });
      const sends = [
        outbound(instanceId, 'BR.1'),
        outbound(instanceId, 'BR.2'),
        outbound(instanceId, 'BR.9'),
        outbound(instanceId, 'BR.404'),
        outbound(instanceId, '5511900000012', { contactId: child }),
      ];
      await store.insertOutbound(sends);
      const contactOf = async (send: OutboundRow) => (await message(send.wamid)).contact_id;
      expect(await contactOf(sends[0])).toBe(parent);
      expect(await contactOf(sends[1])).toBe(child);
      expect(await contactOf(sends[2])).toBe(other);
      expect(await contactOf(sends[3])).toBeNull();
      expect(await contactOf(sends[4])).toBe(child);
      // A contact given is not resolved by its address: no contact was made for that number.
      expect(await contacts.contactByKey(instanceId, '5511900000012')).toBeNull();
    });

    it('completes the placeholder of a status that came first, keeping its status', async () => {
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000013' });
      const send = outbound(instanceId, '5511900000013', { sentBy: 'agent' });
      await store.applyStatuses(instanceId, [
        { wamid: send.wamid, recipient: '5511900000013', status: 'delivered', errors: null },
      ]);
      expect(await message(send.wamid)).toMatchObject({
        type: 'unknown',
        contact_id: null,
        status: 'delivered',
        sent_by: null,
      });

      await store.insertOutbound([send]);
      expect(await message(send.wamid)).toMatchObject({
        direction: 'outbound',
        contact_id: contactId,
        type: 'text',
        body: send.body,
        status: 'delivered',
        sent_by: 'agent',
      });
      const [{ count }] = await context.db.query<{ count: number }>(
        'SELECT count(*)::int AS count FROM messages WHERE wamid = $1',
        [send.wamid],
      );
      expect(count).toBe(1);
    });
  });

  describe('conversationMessages', () => {
    it('reads messages by id as a conversation does, with their arrival times', async () => {
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000311' });
      const received = inbound('5511900000311', contactId);
      await store.insertInbound(instanceId, true, [received]);
      const stored = await message(received.wamid);
      const [read] = await store.conversationMessages([stored.id, randomUUID()]);
      expect(read).toMatchObject({ wamid: received.wamid, contact_id: contactId });
      expect(BigInt(read.created_us)).toBe(BigInt(received.sentAt.getTime()) * 1000n);
      expect(BigInt(read.received_us)).toBe(BigInt(received.receivedAt.getTime()) * 1000n);
      expect(read).toMatchObject({ turn_status: null, quoted: null });
    });

    it('gives the message a reply quotes, both ways, when the conversation has it', async () => {
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000312' });
      const otherId = await newContact(instanceId, { waId: '5511900000313' });
      const offer = outbound(instanceId, '5511900000312', {
        contactId,
        sentBy: 'agent',
        body: { body: 'Blue or red?' },
      });
      await store.insertOutbound([offer]);
      const elsewhere = inbound('5511900000313', otherId);
      await store.insertInbound(instanceId, false, [elsewhere]);
      const answer = inbound('5511900000312', contactId, {
        body: JSON.stringify({
          from: '5511900000312',
          type: 'text',
          text: { body: 'Blue' },
          context: { from: '15550100', id: offer.wamid },
        }),
      });
      const stray = inbound('5511900000312', contactId, {
        body: JSON.stringify({
          from: '5511900000312',
          type: 'text',
          text: { body: 'that one' },
          context: { id: elsewhere.wamid },
        }),
      });
      await store.insertInbound(instanceId, false, [answer, stray]);
      const confirm = outbound(instanceId, '5511900000312', {
        contactId,
        body: { body: 'Blue it is', reply_to: answer.wamid },
      });
      await store.insertOutbound([confirm]);

      const ids = await Promise.all(
        [answer, stray, confirm].map(async (m) => (await message(m.wamid)).id),
      );
      const read = new Map((await store.conversationMessages(ids)).map((m) => [m.wamid, m.quoted]));
      expect(read.get(answer.wamid)).toEqual({
        wamid: offer.wamid,
        direction: 'outbound',
        type: 'text',
        text: 'Blue or red?',
        sent_by: 'agent',
      });
      expect(read.get(confirm.wamid)).toEqual({
        wamid: answer.wamid,
        direction: 'inbound',
        type: 'text',
        text: 'Blue',
        sent_by: null,
      });
      // Another contact's message is not this conversation's to show.
      expect(read.get(stray.wamid)).toBeNull();
    });
  });

  describe('applyStatuses', () => {
    it('moves a status forward only, failed last with its errors', async () => {
      const instanceId = await insertInstance(context.db);
      await newContact(instanceId, { waId: '5511900000020' });
      const send = outbound(instanceId, '5511900000020');
      await store.insertOutbound([send]);
      const status = (value: string, errors: string | null = null) =>
        store.applyStatuses(instanceId, [
          { wamid: send.wamid, recipient: '5511900000020', status: value, errors },
        ]);

      await status('read');
      expect((await message(send.wamid)).status).toBe('read');
      await status('delivered');
      await status('sent');
      expect((await message(send.wamid)).status).toBe('read');
      const errors = [{ code: 131047, title: 'Re-engagement message' }];
      await status('failed', JSON.stringify(errors));
      expect(await message(send.wamid)).toMatchObject({ status: 'failed', errors });
      await status('read');
      expect(await message(send.wamid)).toMatchObject({ status: 'failed', errors });
    });

    it('keeps a status of an unknown wamid on a placeholder of the recipient', async () => {
      const instanceId = await insertInstance(context.db);
      const early = wamid();
      await store.applyStatuses(instanceId, [
        { wamid: early, recipient: 'BR.77', status: 'sent', errors: null },
      ]);
      expect(await message(early)).toMatchObject({
        instance_id: instanceId,
        direction: 'outbound',
        contact: 'BR.77',
        contact_id: null,
        type: 'unknown',
        body: {},
        status: 'sent',
      });
    });
  });

  describe('find', () => {
    it("is the instance's message by wamid with its contact's keys", async () => {
      const instanceId = await insertInstance(context.db);
      const other = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000030', userId: 'BR.30' });
      const received = inbound('5511900000030', contactId);
      await store.insertInbound(instanceId, true, [received]);
      const early = wamid();
      await store.applyStatuses(instanceId, [
        { wamid: early, recipient: '5511900000031', status: 'sent', errors: null },
      ]);

      expect(await store.find(instanceId, received.wamid)).toMatchObject({
        wamid: received.wamid,
        contact_id: contactId,
        contact_wa_id: '5511900000030',
        contact_user_id: 'BR.30',
      });
      expect(await store.find(instanceId, early)).toMatchObject({
        contact_id: null,
        contact_wa_id: null,
        contact_user_id: null,
      });
      expect(await store.find(other, received.wamid)).toBeNull();
      expect(await store.find(instanceId, wamid())).toBeNull();
    });
  });

  describe('ofTurn', () => {
    it("is the turn's messages by platform time, then arrival", async () => {
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000040' });
      const at = (s: string) => new Date(`2026-09-01T10:00:${s}Z`);
      const late = inbound('5511900000040', contactId, { sentAt: at('01'), receivedAt: at('05') });
      const early = inbound('5511900000040', contactId, { sentAt: at('00'), receivedAt: at('09') });
      const sameSecond = inbound('5511900000040', contactId, {
        sentAt: at('01'),
        receivedAt: at('03'),
      });
      const notInTurn = inbound('5511900000040', contactId, {
        sentAt: at('00'),
        receivedAt: at('00'),
      });
      const messages = [late, early, sameSecond, notInTurn];
      await store.insertInbound(instanceId, true, messages);
      const turnId = randomUUID();
      await context.db.query('UPDATE messages SET turn_id = $1 WHERE wamid = ANY($2::text[])', [
        turnId,
        [late.wamid, early.wamid, sameSecond.wamid],
      ]);

      expect(await store.ofTurn(turnId)).toEqual(
        [early, sameSecond, late].map((m) => JSON.parse(m.body) as unknown),
      );
      expect(await store.ofTurn(randomUUID())).toEqual([]);
    });
  });

  describe('contextBefore', () => {
    it("is the contact's last messages before the turn's first, both directions, oldest first", async () => {
      const instanceId = await insertInstance(context.db);
      const number = '5511900000047';
      const contactId = await newContact(instanceId, { waId: number });
      const at = (s: number) => new Date(Date.UTC(2026, 10, 20, 12, 0, s));
      const said = [0, 1, 2, 3].map((n) =>
        inbound(number, contactId, { sentAt: at(n * 10), receivedAt: at(n * 10 + 1) }),
      );
      await store.insertInbound(instanceId, true, said.slice(0, 3));
      const answer = outbound(instanceId, number);
      await store.insertOutbound([answer]);
      await context.db.query('UPDATE messages SET created_at = $2 WHERE wamid = $1', [
        answer.wamid,
        at(25),
      ]);
      await store.insertInbound(instanceId, true, [said[3]]);
      const turnId = randomUUID();
      await context.db.query('UPDATE messages SET turn_id = $1 WHERE wamid = $2', [
        turnId,
        said[3].wamid,
      ]);
      const found = await store.contextBefore(contactId, turnId, 3);
      expect(found.map((m) => [m.wamid, m.direction])).toEqual([
        [said[1].wamid, 'inbound'],
        [said[2].wamid, 'inbound'],
        [answer.wamid, 'outbound'],
      ]);
      expect(found[2]).toMatchObject({ sent_by: 'api', imported: false, text: 'Olá' });
      expect(await store.contextBefore(contactId, turnId, 0)).toEqual([]);
    });
  });

  describe('templateBefore', () => {
    it("is the template a message quotes, else the contact's last one up to the turn's first message, within 24 hours", async () => {
      const instanceId = await insertInstance(context.db);
      const number = '5511900000045';
      const contactId = await newContact(instanceId, { waId: number });
      const template = (name: string) =>
        outbound(instanceId, number, {
          type: 'template',
          body: { template_name: name, language: 'pt_BR' },
        });
      const older = template('older_offer');
      const answered = template('shipping_update');
      const later = template('sent_after');
      await store.insertOutbound([older]);
      await store.insertOutbound([answered]);
      await store.insertOutbound([outbound(instanceId, number)]);
      await store.insertOutbound([later]);
      // The customer wrote at 12:00:10 (the platform's time); the answer's turn was
      // stored after all three, as a backlog would store it.
      const question = inbound(number, contactId, {
        sentAt: new Date('2026-11-20T12:00:10Z'),
        receivedAt: new Date('2026-11-20T12:00:30Z'),
      });
      await store.insertInbound(instanceId, true, [question]);
      const at = async (wamid: string, iso: string) =>
        context.db.query('UPDATE messages SET created_at = $2 WHERE wamid = $1', [wamid, iso]);
      await at(older.wamid, '2026-11-20T09:00:00Z');
      await at(answered.wamid, '2026-11-20T11:59:00Z');
      // Sent 5 s after the customer wrote: not what they answer.
      await at(later.wamid, '2026-11-20T12:00:15Z');
      const turnId = randomUUID();
      await context.db.query('UPDATE messages SET turn_id = $1 WHERE wamid = $2', [
        turnId,
        question.wamid,
      ]);

      expect(await store.templateBefore(contactId, turnId)).toEqual({
        wamid: answered.wamid,
        template_name: 'shipping_update',
        language: 'pt_BR',
        sent_at: new Date('2026-11-20T11:59:00Z'),
      });
      // A button's reply quotes its template: that one, whenever it was sent.
      expect((await store.templateBefore(contactId, turnId, [older.wamid]))?.wamid).toBe(
        older.wamid,
      );
      // A quoted message that is no template of this contact's is passed over.
      expect((await store.templateBefore(contactId, turnId, ['wamid.none']))?.wamid).toBe(
        answered.wamid,
      );
      // Sent more than a day before the customer wrote: answered no longer.
      await at(answered.wamid, '2026-11-19T11:00:00Z');
      await at(older.wamid, '2026-11-19T09:00:00Z');
      expect(await store.templateBefore(contactId, turnId)).toBeNull();
      const other = await newContact(instanceId, { waId: '5511900000046' });
      expect(await store.templateBefore(other, turnId)).toBeNull();
    });
  });

  describe('awaitingSpans', () => {
    it('is the first and last arrival of each contact with waiting messages, others left out', async () => {
      const instanceId = await insertInstance(context.db);
      const a = await newContact(instanceId, { waId: '5511900000050' });
      const b = await newContact(instanceId, { waId: '5511900000051' });
      const idle = await newContact(instanceId, { waId: '5511900000052' });
      const at = (s: string) => new Date(`2026-09-02T10:00:${s}Z`);
      await store.insertInbound(instanceId, true, [
        inbound('5511900000050', a, { receivedAt: at('05') }),
        inbound('5511900000050', a, { receivedAt: at('01') }),
        inbound('5511900000051', b, { receivedAt: at('07') }),
      ]);
      await store.insertInbound(instanceId, false, [
        inbound('5511900000052', idle, { receivedAt: at('00') }),
      ]);
      const spans = await store.awaitingSpans([a, b, idle]);
      expect(spans).toEqual(
        new Map([
          [a, { first: at('01'), last: at('05') }],
          [b, { first: at('07'), last: at('07') }],
        ]),
      );
    });
  });

  describe('awaitingBuffers', () => {
    it('pages the contacts with waiting messages by contact id, with their spans', async () => {
      const instanceId = await insertInstance(context.db);
      const ids = [
        await newContact(instanceId, { waId: '5511900000060' }),
        await newContact(instanceId, { waId: '5511900000061' }),
        await newContact(instanceId, { waId: '5511900000062' }),
      ];
      const idle = await newContact(instanceId, { waId: '5511900000063' });
      const at = new Date('2026-09-03T10:00:00.000Z');
      await store.insertInbound(
        instanceId,
        true,
        ids.map((id, k) => inbound(`551190000006${k}`, id, { receivedAt: at })),
      );
      await store.insertInbound(instanceId, false, [inbound('5511900000063', idle)]);

      const pages: Array<Awaited<ReturnType<MessageStore['awaitingBuffers']>>> = [];
      let after: string | null = null;
      for (;;) {
        const page = await store.awaitingBuffers(after, 2);
        if (page.length === 0) break;
        expect(page.length).toBeLessThanOrEqual(2);
        pages.push(page);
        after = page[page.length - 1].contact_id;
      }
      const all = pages.flat();
      expect(all.map((b) => b.contact_id)).toEqual(all.map((b) => b.contact_id).sort());
      expect(all.filter((b) => b.instance_id === instanceId)).toEqual(
        [...ids]
          .sort()
          .map((id) => ({ instance_id: instanceId, contact_id: id, first: at, last: at })),
      );
    });
  });

  describe('contactSummaries', () => {
    it('counts the inbound messages stored since the read mark (at most UNREAD_CAP) and gives the last message', async () => {
      const instanceId = await insertInstance(context.db);
      const talkative = await newContact(instanceId, { waId: '5511900000077' });
      const silent = await newContact(instanceId, { waId: '5511900000078' });
      const at = (minute: number) => new Date(Date.UTC(2026, 8, 2, 10, minute));
      const said = (minute: number, body: string) =>
        inbound('5511900000077', talkative, {
          body: JSON.stringify({ from: '5511900000077', type: 'text', text: { body } }),
          sentAt: at(minute),
          receivedAt: at(minute),
        });
      const two = said(2, 'two');
      await store.insertInbound(instanceId, false, [said(1, 'one'), two]);
      await contacts.markRead(talkative, two.wamid);
      // Stored after the read, though the customer's clock says earlier: unread.
      await store.insertInbound(instanceId, false, [said(0, 'three'), said(5, 'four')]);
      const reply = outbound(instanceId, '5511900000077', {
        contactId: talkative,
        sentBy: 'agent',
        body: { body: 'an answer' },
      });
      await store.insertOutbound([reply]);
      await context.db.query(`UPDATE messages SET created_at = $2 WHERE wamid = $1`, [
        reply.wamid,
        at(6),
      ]);

      const summaries = await store.contactSummaries([talkative, silent, randomUUID()]);
      expect(summaries.get(talkative)).toEqual({
        unread: 2,
        last_message: {
          wamid: reply.wamid,
          direction: 'outbound',
          type: 'text',
          text: 'an answer',
          sent_by: 'agent',
          created_at: at(6).toISOString(),
        },
      });
      expect(summaries.get(silent)).toEqual({ unread: 0, last_message: null });
      expect(summaries.size).toBe(2);

      // Never read: every inbound message counts, up to the cap.
      const many = await newContact(instanceId, { waId: '5511900000079' });
      await store.insertInbound(
        instanceId,
        false,
        Array.from({ length: UNREAD_CAP + 5 }, () => inbound('5511900000079', many)),
      );
      expect((await store.contactSummaries([many])).get(many)!.unread).toBe(UNREAD_CAP);
    });
  });

  describe('awaitingSummary', () => {
    it('counts the messages waiting for a turn, with the age of the oldest', async () => {
      const before = await store.awaitingSummary();
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000075' });
      const oldest = new Date('1999-01-01T00:00:00.000Z');
      const first = inbound('5511900000075', contactId, { receivedAt: oldest });
      const second = inbound('5511900000075', contactId);
      await store.insertInbound(instanceId, true, [first, second]);
      await store.insertInbound(instanceId, false, [inbound('5511900000075', contactId)]);

      const after = await store.awaitingSummary();
      expect(after.count).toBe(before.count + 2);
      const now = await databaseNow();
      expect(after.oldestAgeSeconds).toBeGreaterThanOrEqual(
        (now.getTime() - oldest.getTime()) / 1000 - 1,
      );
      await context.db.query(
        'UPDATE messages SET awaiting_turn = false WHERE wamid = ANY($1::text[])',
        [[first.wamid, second.wamid]],
      );
      expect((await store.awaitingSummary()).count).toBe(before.count);
    });
  });

  describe('sentWithin', () => {
    it('counts the outbound messages recorded within the last seconds, none inbound', async () => {
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000076' });
      const before = await store.sentWithin(3600);
      const old = outbound(instanceId, '5511900000076');
      await store.insertOutbound([old, outbound(instanceId, '5511900000076')]);
      await store.insertInbound(instanceId, false, [inbound('5511900000076', contactId)]);
      expect(await store.sentWithin(3600)).toBe(before + 2);

      await context.db.query(
        `UPDATE messages SET created_at = now() - interval '2 hours' WHERE wamid = $1`,
        [old.wamid],
      );
      expect(await store.sentWithin(3600)).toBe(before + 1);
      expect(await store.sentWithin(3 * 3600)).toBeGreaterThanOrEqual(before + 2);
    });
  });

  describe('oldestAwaitingAgeSeconds', () => {
    it('is the age of the oldest waiting message, 0 when none waits', async () => {
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000070' });
      const oldest = new Date('2000-01-01T00:00:00.000Z');
      const received = inbound('5511900000070', contactId, { receivedAt: oldest });
      await store.insertInbound(instanceId, true, [received]);

      const before = await databaseNow();
      const age = await store.oldestAwaitingAgeSeconds();
      const after = await databaseNow();
      expect(age).toBeGreaterThanOrEqual((before.getTime() - oldest.getTime()) / 1000);
      // (+1 ms: a Date drops the microseconds PostgreSQL's clock has)
      expect(age).toBeLessThanOrEqual((after.getTime() + 1 - oldest.getTime()) / 1000);

      // With nothing waiting (what earlier cases left waits again afterwards).
      const waiting = await context.db.query<{ id: string }>(
        'UPDATE messages SET awaiting_turn = false WHERE awaiting_turn RETURNING id',
      );
      try {
        expect(await store.oldestAwaitingAgeSeconds()).toBe(0);
      } finally {
        await context.db.query(
          'UPDATE messages SET awaiting_turn = true WHERE id = ANY($1::uuid[]) AND wamid <> $2',
          [waiting.map((m) => m.id), received.wamid],
        );
      }
    });
  });

  describe('conversation', () => {
    it('pages a conversation newest first in arrival order (second, arrival, seq) from a position', async () => {
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000080' });
      const otherId = await newContact(instanceId, { waId: '5511900000081' });
      const at = (s: string) => new Date(`2026-09-04T10:${s}Z`);
      const from = (sent: string, received: string) =>
        inbound('5511900000080', contactId, { sentAt: at(sent), receivedAt: at(received) });
      const a = from('00:00.000', '00:02.000');
      const b = from('00:00.900', '00:01.000'); // same second as a, arrived before it
      const c = from('00:01.000', '00:01.500');
      const e = from('00:01.000', '00:01.500'); // c's twin: stored after it (seq)
      const d = inbound('5511900000080', contactId, {
        sentAt: new Date('2026-09-04T09:59:59.000Z'), // the second before all, arrived last
        receivedAt: at('00:10.000'),
      });
      await store.insertInbound(instanceId, true, [a, b, c, e, d]);
      await store.insertInbound(instanceId, true, [inbound('5511900000081', otherId)]);
      const newestFirst = [e, c, a, b, d].map((m) => m.wamid);

      const seen: string[] = [];
      let before: ArrivalPosition | null = null;
      for (let page = 0; page < 10; page++) {
        const read = await store.conversation(contactId, before, 2);
        if (read.messages.length === 0) break;
        expect(read.messages.length).toBeLessThanOrEqual(2);
        seen.push(...read.messages.map((m) => m.wamid));
        const last = read.messages[read.messages.length - 1];
        before = positionOf(last);
        expect(await store.arrivalOfSeq(contactId, BigInt(last.seq))).toEqual(before);
      }
      expect(seen).toEqual(newestFirst);

      // Nothing in flight: the horizon is past every message stored.
      const read = await store.conversation(contactId, null, 10);
      const stored = read.messages.map((m) => BigInt(m.stored_tx));
      expect(stored.every((tx) => tx < read.horizon)).toBe(true);
    });
  });

  describe('arrivalOfSeq', () => {
    it("is the arrival position of the contact's message by seq, null for another contact's", async () => {
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000085' });
      const otherId = await newContact(instanceId, { waId: '5511900000086' });
      const received = inbound('5511900000085', contactId, {
        sentAt: new Date('2026-09-05T10:00:07.000Z'),
        receivedAt: new Date('2026-09-05T10:00:08.123Z'),
      });
      await store.insertInbound(instanceId, true, [received]);
      const seq = BigInt((await message(received.wamid)).seq);
      expect(await store.arrivalOfSeq(contactId, seq)).toEqual({
        second: BigInt(Date.parse('2026-09-05T10:00:07.000Z') / 1000),
        receivedUs: BigInt(Date.parse('2026-09-05T10:00:08.123Z')) * 1000n,
        seq,
      });
      expect(await store.arrivalOfSeq(otherId, seq)).toBeNull();
    });
  });

  describe('follow', () => {
    it('answers the messages stored after a position, in the order stored, only below the horizon', async () => {
      const instanceId = await insertInstance(context.db);
      const contactId = await newContact(instanceId, { waId: '5511900000090' });
      const first = inbound('5511900000090', contactId);
      await store.insertInbound(instanceId, true, [first]);

      // A transaction that stored a message and has not committed yet.
      const open = await context.client();
      await open.query('BEGIN');
      const inFlight = wamid();
      await open.query(
        `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body, status)
         VALUES ($1, $2, 'inbound', '5511900000090', $3, 'text', '{}', 'received')`,
        [instanceId, inFlight, contactId],
      );
      const [{ xid }] = (
        await open.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')
      ).rows;
      const last = inbound('5511900000090', contactId);
      await store.insertInbound(instanceId, true, [last]);

      const start = { tx: 0n, seq: 0n };
      const held = await store.follow(contactId, start, 10);
      expect(held.horizon).toBe(BigInt(xid));
      expect(held.messages.map((m) => m.wamid)).toEqual([first.wamid]);

      await open.query('COMMIT');
      const all = await store.follow(contactId, start, 10);
      expect(all.messages.map((m) => m.wamid)).toEqual([first.wamid, inFlight, last.wamid]);
      expect(all.horizon).toBeGreaterThan(BigInt(all.messages[2].stored_tx));

      const [m1] = all.messages;
      const next = await store.follow(
        contactId,
        { tx: BigInt(m1.stored_tx), seq: BigInt(m1.seq) },
        1,
      );
      expect(next.messages.map((m) => m.wamid)).toEqual([inFlight]);
    });
  });
});

describe('mc_message_event', () => {
  it("is a message's event data: the message and its contact", async () => {
    const instanceId = await insertInstance(context.db);
    const contactId = await newContact(instanceId, {
      waId: '5511900000100',
      userId: 'BR.100',
      name: 'Gil',
    });
    await context.db.query(`UPDATE contacts SET username = '@gil' WHERE id = $1`, [contactId]);
    const received = inbound('5511900000100', contactId);
    await store.insertInbound(instanceId, true, [received]);

    const [row] = await context.db.query<{ data: unknown; updated: string }>(
      `SELECT mc_message_event(m, c) AS data, mc_iso(m.updated_at) AS updated
       FROM messages m LEFT JOIN contacts c ON c.id = m.contact_id WHERE m.wamid = $1`,
      [received.wamid],
    );
    expect(row.data).toEqual({
      message: {
        wamid: received.wamid,
        instance_id: instanceId,
        direction: 'inbound',
        contact: '5511900000100',
        wa_id: '5511900000100',
        user_id: 'BR.100',
        type: 'text',
        status: 'received',
        errors: null,
        content: JSON.parse(received.body) as unknown,
        created_at: received.sentAt.toISOString(),
        updated_at: row.updated,
      },
      contact: { wa_id: '5511900000100', user_id: 'BR.100', name: 'Gil', username: '@gil' },
    });
  });

  it('without a contact, takes the number from the address (a user id is no number)', async () => {
    const instanceId = await insertInstance(context.db);
    const byNumber = wamid();
    const byUser = wamid();
    await store.applyStatuses(instanceId, [
      { wamid: byNumber, recipient: '5511900000101', status: 'sent', errors: null },
      { wamid: byUser, recipient: 'BR.101', status: 'sent', errors: null },
    ]);
    const data = await context.db.query<{ wamid: string; data: Record<string, unknown> }>(
      `SELECT m.wamid, mc_message_event(m, c) AS data
       FROM messages m LEFT JOIN contacts c ON c.id = m.contact_id WHERE m.wamid = ANY($1::text[])`,
      [[byNumber, byUser]],
    );
    const of = (w: string) => data.find((d) => d.wamid === w)!.data;
    const noContact = { user_id: null, name: null, username: null };
    expect(of(byNumber).contact).toEqual({ wa_id: '5511900000101', ...noContact });
    expect(of(byUser).contact).toEqual({ wa_id: null, ...noContact });
    expect(of(byUser).message).toMatchObject({ contact: 'BR.101', wa_id: null, type: 'unknown' });
  });
});

describe('mc_sent_by', () => {
  it('says who sent a message: a client (api, also when unset), the agent, or a person with their account', async () => {
    const instanceId = await insertInstance(context.db);
    await newContact(instanceId, { waId: '5511900000105' });
    const ana = { accountId: randomUUID(), displayName: 'Ana Souza' };
    const sends = [
      outbound(instanceId, '5511900000105', { sentBy: 'api' }),
      outbound(instanceId, '5511900000105', { sentBy: 'agent' }),
      outbound(instanceId, '5511900000105', { sentBy: 'person', person: ana }),
      outbound(instanceId, '5511900000105', {
        sentBy: 'person',
        person: { accountId: null, displayName: 'admin' },
      }),
    ];
    await store.insertOutbound(sends);
    await context.db.query('UPDATE messages SET sent_by = NULL WHERE wamid = $1', [sends[0].wamid]);
    const rows = await context.db.query<{ wamid: string; by: unknown }>(
      'SELECT m.wamid, mc_sent_by(m) AS by FROM messages m WHERE m.wamid = ANY($1::text[])',
      [sends.map((s) => s.wamid)],
    );
    const of = (w: string) => rows.find((r) => r.wamid === w)!.by;
    expect(of(sends[0].wamid)).toEqual({ sent_by: 'api', sent_by_account: null });
    expect(of(sends[1].wamid)).toEqual({ sent_by: 'agent', sent_by_account: null });
    expect(of(sends[2].wamid)).toEqual({
      sent_by: 'person',
      sent_by_account: { id: ana.accountId, display_name: 'Ana Souza' },
    });
    expect(of(sends[3].wamid)).toEqual({
      sent_by: 'person',
      sent_by_account: { id: null, display_name: 'admin' },
    });
  });
});

describe('mc_message_lane', () => {
  it("is the contact's lane, or the instance's address while the message has no contact", async () => {
    const instanceId = await insertInstance(context.db);
    const contactId = await newContact(instanceId, { waId: '5511900000110' });
    const send = outbound(instanceId, '5511900000110');
    await store.insertOutbound([send]);
    const early = wamid();
    await store.applyStatuses(instanceId, [
      { wamid: early, recipient: 'BR.110', status: 'sent', errors: null },
    ]);
    const lanes = await context.db.query<{ wamid: string; lane: string }>(
      'SELECT m.wamid, mc_message_lane(m) AS lane FROM messages m WHERE m.wamid = ANY($1::text[])',
      [[send.wamid, early]],
    );
    expect(Object.fromEntries(lanes.map((l) => [l.wamid, l.lane]))).toEqual({
      [send.wamid]: `contact:${contactId}`,
      [early]: `contact:${instanceId}:BR.110`,
    });
  });
});

describe('mc_messages_inserted', () => {
  it('writes message.received per inbound message, in seq order, on the contact lane', async () => {
    const instanceId = await watchedInstance();
    const contactId = await newContact(instanceId, { waId: '5511900000120' });
    const batch = [inbound('5511900000120', contactId), inbound('5511900000120', contactId)];
    await store.insertInbound(instanceId, true, batch);

    const events = await eventsOf(instanceId);
    expect(events.map((e) => [e.type, e.lane])).toEqual([
      ['message.received', `contact:${contactId}`],
      ['message.received', `contact:${contactId}`],
    ]);
    expect(events.map((e) => (e.data.message as { wamid: string }).wamid)).toEqual(
      batch.map((m) => m.wamid),
    );
    // The message's data and nothing more.
    expect(Object.keys(events[0].data).sort()).toEqual(['contact', 'message']);
  });

  it("writes message.sent with who sent it, and moves the contact's last send (never back)", async () => {
    const instanceId = await watchedInstance();
    const contactId = await newContact(instanceId, { waId: '5511900000121' });
    const send = outbound(instanceId, '5511900000121', { sentBy: 'agent' });
    await store.insertOutbound([send]);

    const sent = await message(send.wamid);
    expect((await contact(contactId)).last_outbound_at).toEqual(sent.created_at);
    expect(await eventsOf(instanceId)).toEqual([
      {
        type: 'message.sent',
        lane: `contact:${contactId}`,
        data: expect.objectContaining({
          sent_by: 'agent',
          message: expect.objectContaining({ wamid: send.wamid, status: 'sent' }) as unknown,
        }) as unknown,
      },
    ]);

    await context.db.query('UPDATE contacts SET last_outbound_at = $2 WHERE id = $1', [
      contactId,
      FUTURE,
    ]);
    await store.insertOutbound([outbound(instanceId, '5511900000121')]);
    expect((await contact(contactId)).last_outbound_at).toEqual(FUTURE);
  });

  it("writes a placeholder's status as message.status (no previous), without moving a last send", async () => {
    const instanceId = await watchedInstance();
    const contactId = await newContact(instanceId, { waId: '5511900000122' });
    const early = wamid();
    await store.applyStatuses(instanceId, [
      { wamid: early, recipient: '5511900000122', status: 'delivered', errors: null },
    ]);
    const events = await eventsOf(instanceId);
    expect(events).toEqual([
      {
        type: 'message.status',
        lane: `contact:${instanceId}:5511900000122`,
        data: expect.objectContaining({ status: 'delivered', previous_status: null }) as unknown,
      },
    ]);
    expect(events[0].data).not.toHaveProperty('sent_by');
    expect((await contact(contactId)).last_outbound_at).toBeNull();
  });

  it('writes only the types a subscription of the instance wants, none without one', async () => {
    const onlyReceived = await watchedInstance(['message.received']);
    const a = await newContact(onlyReceived, { waId: '5511900000123' });
    await store.insertInbound(onlyReceived, true, [inbound('5511900000123', a)]);
    await store.insertOutbound([outbound(onlyReceived, '5511900000123')]);
    expect((await eventsOf(onlyReceived)).map((e) => e.type)).toEqual(['message.received']);

    const unwatched = await insertInstance(context.db);
    const b = await newContact(unwatched, { waId: '5511900000124' });
    await store.insertInbound(unwatched, true, [inbound('5511900000124', b)]);
    await store.insertOutbound([outbound(unwatched, '5511900000124')]);
    expect(await eventsOf(unwatched)).toEqual([]);
    expect((await contact(b)).last_outbound_at).not.toBeNull();
  });

  it('writes nothing when no subscription exists at all, and still moves the last send', async () => {
    const instanceId = await insertInstance(context.db);
    const contactId = await newContact(instanceId, { waId: '5511900000125' });
    const client = await context.client();
    await client.query('BEGIN');
    try {
      await client.query('DELETE FROM event_subscriptions');
      await client.query(
        `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body,
           status, sent_by)
         VALUES ($1, $2, 'outbound', '5511900000125', $3, 'text', '{}', 'sent', 'api')`,
        [instanceId, wamid(), contactId],
      );
      const { rows: events } = await client.query('SELECT 1 FROM events WHERE instance_id = $1', [
        instanceId,
      ]);
      expect(events).toEqual([]);
      const { rows: moved } = await client.query<{ last_outbound_at: Date | null }>(
        'SELECT last_outbound_at FROM contacts WHERE id = $1',
        [contactId],
      );
      expect(moved[0].last_outbound_at).not.toBeNull();
    } finally {
      await client.query('ROLLBACK');
    }
  });
});

describe('mc_messages_updated', () => {
  it("writes message.sent as a send completes its placeholder, and moves the contact's last send", async () => {
    const instanceId = await watchedInstance();
    const contactId = await newContact(instanceId, { waId: '5511900000130' });
    const send = outbound(instanceId, '5511900000130', { sentBy: 'agent' });
    await store.applyStatuses(instanceId, [
      { wamid: send.wamid, recipient: '5511900000130', status: 'read', errors: null },
    ]);
    expect((await contact(contactId)).last_outbound_at).toBeNull();

    await store.insertOutbound([send]);
    const completed = await message(send.wamid);
    expect((await contact(contactId)).last_outbound_at).toEqual(completed.created_at);
    const events = await eventsOf(instanceId);
    expect(events.map((e) => [e.type, e.lane])).toEqual([
      ['message.status', `contact:${instanceId}:5511900000130`],
      ['message.sent', `contact:${contactId}`],
    ]);
    expect(events[1].data).toMatchObject({
      sent_by: 'agent',
      message: { wamid: send.wamid, type: 'text', status: 'read', wa_id: '5511900000130' },
    });
  });

  it('writes message.status with the previous status as a status moves', async () => {
    const instanceId = await watchedInstance();
    const contactId = await newContact(instanceId, { waId: '5511900000131' });
    const send = outbound(instanceId, '5511900000131');
    await store.insertOutbound([send]);
    await store.applyStatuses(instanceId, [
      { wamid: send.wamid, recipient: '5511900000131', status: 'delivered', errors: null },
    ]);
    await store.applyStatuses(instanceId, [
      { wamid: send.wamid, recipient: '5511900000131', status: 'sent', errors: null },
    ]);
    const events = await eventsOf(instanceId);
    expect(events.map((e) => e.type)).toEqual(['message.sent', 'message.status']);
    expect(events[1]).toMatchObject({
      lane: `contact:${contactId}`,
      data: { status: 'delivered', previous_status: 'sent', message: { status: 'delivered' } },
    });
  });

  it('writes both, sent first, when one statement completes a placeholder and moves its status', async () => {
    const instanceId = await watchedInstance();
    const contactId = await newContact(instanceId, { waId: '5511900000132' });
    const early = wamid();
    await store.applyStatuses(instanceId, [
      { wamid: early, recipient: '5511900000132', status: 'sent', errors: null },
    ]);
    await context.db.query(
      `UPDATE messages SET type = 'text', contact_id = $2, sent_by = 'api', status = 'delivered'
       WHERE wamid = $1`,
      [early, contactId],
    );
    expect((await eventsOf(instanceId)).map((e) => [e.type, e.data.previous_status])).toEqual([
      ['message.status', null],
      ['message.sent', undefined],
      ['message.status', 'sent'],
    ]);
  });

  it('writes nothing for an update that neither completes a send nor changes a status', async () => {
    const instanceId = await watchedInstance();
    const contactId = await newContact(instanceId, { waId: '5511900000133' });
    const received = inbound('5511900000133', contactId);
    await store.insertInbound(instanceId, true, [received]);
    const send = outbound(instanceId, '5511900000133');
    await store.insertOutbound([send]);
    const before = await eventsOf(instanceId);

    await context.db.query(
      'UPDATE messages SET awaiting_turn = false, turn_id = $2 WHERE wamid = $1',
      [received.wamid, randomUUID()],
    );
    await store.insertOutbound([send]); // the same send recorded again
    await store.applyStatuses(instanceId, [
      { wamid: send.wamid, recipient: '5511900000133', status: 'sent', errors: null },
    ]);
    expect(await eventsOf(instanceId)).toEqual(before);
  });

  it('writes nothing for an instance no subscription wants it of', async () => {
    const instanceId = await insertInstance(context.db);
    const contactId = await newContact(instanceId, { waId: '5511900000134' });
    const send = outbound(instanceId, '5511900000134');
    await store.applyStatuses(instanceId, [
      { wamid: send.wamid, recipient: '5511900000134', status: 'sent', errors: null },
    ]);
    await store.insertOutbound([send]);
    await store.applyStatuses(instanceId, [
      { wamid: send.wamid, recipient: '5511900000134', status: 'read', errors: null },
    ]);
    expect(await eventsOf(instanceId)).toEqual([]);
    expect((await contact(contactId)).last_outbound_at).not.toBeNull();
  });
});

describe('mc_message_moved', () => {
  async function storedTx(w: string): Promise<bigint> {
    return BigInt((await message(w)).stored_tx);
  }

  it('moves a message to the position of the transaction that changes its contact, only then', async () => {
    const instanceId = await insertInstance(context.db);
    const from = await newContact(instanceId, { waId: '5511900000140' });
    const to = await newContact(instanceId, { userId: 'BR.140' });
    const received = inbound('5511900000140', from);
    await store.insertInbound(instanceId, true, [received]);
    const stored = await storedTx(received.wamid);

    // Other changes, or the same contact again, keep its position.
    await context.db.query(
      `UPDATE messages SET status = 'read', contact_id = contact_id WHERE wamid = $1`,
      [received.wamid],
    );
    expect(await storedTx(received.wamid)).toBe(stored);

    const client = await context.client();
    await client.query('BEGIN');
    await client.query('UPDATE messages SET contact_id = $2 WHERE wamid = $1', [
      received.wamid,
      to,
    ]);
    const [{ xid }] = (
      await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')
    ).rows;
    await client.query('COMMIT');
    expect(BigInt(xid)).toBeGreaterThan(stored);
    expect(await storedTx(received.wamid)).toBe(BigInt(xid));
  });

  it('moves a placeholder as its send completes it, and messages merged into another contact', async () => {
    const instanceId = await insertInstance(context.db);
    await newContact(instanceId, { waId: '5511900000141' });
    const send = outbound(instanceId, '5511900000141');
    await store.applyStatuses(instanceId, [
      { wamid: send.wamid, recipient: '5511900000141', status: 'sent', errors: null },
    ]);
    const placeholder = await storedTx(send.wamid);
    await store.insertOutbound([send]);
    expect(await storedTx(send.wamid)).toBeGreaterThan(placeholder);

    const loser = await newContact(instanceId, { waId: '5511900000142' });
    const survivor = await newContact(instanceId, { userId: 'BR.141' });
    const received = inbound('5511900000142', loser);
    await store.insertInbound(instanceId, true, [received]);
    const before = await storedTx(received.wamid);
    await context.db.query('SELECT mc_merge_contacts($1, $2)', [loser, survivor]);
    expect(await message(received.wamid)).toMatchObject({ contact_id: survivor });
    expect(await storedTx(received.wamid)).toBeGreaterThan(before);
  });

  it('keeps the position of a message whose contact is cleared', async () => {
    const instanceId = await insertInstance(context.db);
    const contactId = await newContact(instanceId, { waId: '5511900000143' });
    const send = outbound(instanceId, '5511900000143', { contactId });
    await store.insertOutbound([send]);
    const stored = await storedTx(send.wamid);
    await context.db.query('UPDATE messages SET contact_id = NULL WHERE wamid = $1', [send.wamid]);
    expect(await storedTx(send.wamid)).toBe(stored);
  });
});

describe('MessagesService.storeEchoes (with its stores)', () => {
  it("ends its own pause when this service's send was recorded over the echo while it paused", async () => {
    const instanceId = await insertInstance(context.db);
    const contacts = new ContactStore(context.source);
    const contactId = await insertContact(context.db, instanceId, { waId: '5511900000700' });
    const { config } = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      HANDOFF_AUTO_PAUSE_S: '3600',
    });
    // The send's record lands after the echo path looked at its echo, before it paused.
    class Racing extends MessageStore {
      override async phoneAppEchoes(id: string, wamids: string[]): Promise<string[]> {
        const found = await super.phoneAppEchoes(id, wamids);
        if (!raced) {
          raced = true;
          await service.storeOutbound([
            {
              instanceId,
              recipient: { to: '5511900000700' },
              sentBy: 'agent',
              type: 'text',
              body: { text: { body: 'Olá' } },
              wamid: 'wamid.echo-race',
            },
          ]);
        }
        return found;
      }
    }
    let raced = false;
    const service = new MessagesService(new Racing(context.source), contacts, config, {
      on: () => undefined,
    } as unknown as CacheInvalidationService);
    await service.storeEchoes(instanceId, [
      {
        to: { to: '5511900000700' },
        contactId,
        wamid: 'wamid.echo-race',
        type: 'text',
        body: { text: { body: 'Olá' } },
        sentAt: new Date(),
      },
    ]);
    expect(raced).toBe(true);
    const [row] = await context.db.query<{ sent_by: string }>(
      `SELECT sent_by FROM messages WHERE wamid = 'wamid.echo-race'`,
    );
    expect(row.sent_by).toBe('agent');
    // Paused by the echo, then lifted: not never paused.
    const [contact] = await context.db.query<{
      handoff_until: Date | null;
      handoff_reason: string | null;
    }>('SELECT handoff_until, handoff_reason FROM contacts WHERE id = $1', [contactId]);
    expect(contact).toEqual({
      handoff_until: null,
      handoff_reason: "an echo of this service's own send",
    });
  });
});
