import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { isoFromEpochMicros } from '../../src/common/epoch-micros.js';
import { identityKey, type IdentityRow } from '../../src/contacts/contact-identity.js';
import { ContactStore, PHONE_APP_REASON } from '../../src/contacts/contact.store.js';
import { MessageStore } from '../../src/messages/message.store.js';
import type { Contact, ContactState } from '../../src/contacts/contact.types.js';
import { sqlState } from '../../src/database/sql.js';
import {
  insertInstance,
  insertSubscription,
  useMigratedDatabase,
  insertContact,
  type ContactFields,
} from './support.js';

/** PostgreSQL's code for a row lock NOWAIT could not take. */
const LOCK_NOT_AVAILABLE = '55P03';

/** Times well clear of the clock: a pause until FUTURE runs, one until PAST has ended. */
const FUTURE = new Date('2100-01-01T00:00:00.000Z');
const PAST = new Date('2001-01-01T00:00:00.000Z');

/** An identity as a delivery names it; `key` as the inbound path makes it. */
function identity(fields: Partial<IdentityRow>): IdentityRow {
  const waId = fields.waId ?? null;
  const userId = fields.userId ?? null;
  return {
    parentUserId: null,
    username: null,
    name: null,
    lastInboundAt: null,
    ...fields,
    key: fields.key ?? identityKey({ waId, userId }),
    waId,
    userId,
  };
}

const context = useMigratedDatabase();
let store: ContactStore;

beforeAll(() => {
  store = new ContactStore(context.source);
});

async function contact(id: string): Promise<Contact | undefined> {
  const [row] = await context.db.query<Contact>('SELECT * FROM contacts WHERE id = $1', [id]);
  return row;
}

async function contactsOf(instanceId: string): Promise<Contact[]> {
  return context.db.query<Contact>(
    'SELECT * FROM contacts WHERE instance_id = $1 ORDER BY created_at, id',
    [instanceId],
  );
}

/** Creates a contact through mc_resolve_contact (a number, a user id, or both). */
const newContact = (instanceId: string, fields?: ContactFields): Promise<string> =>
  insertContact(context.db, instanceId, fields);

/** A message row of a contact (inbound text by default), stored as the store would. */
async function insertMessage(
  instanceId: string,
  contactId: string,
  fields: {
    awaiting?: boolean;
    receivedAt?: Date;
    type?: string;
    text?: string;
    direction?: 'inbound' | 'outbound';
    turnId?: string;
  } = {},
): Promise<string> {
  const [row] = await context.db.query<{ id: string }>(
    `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body, status,
       received_at, awaiting_turn, turn_id)
     SELECT $1, $2, $3, c.wa_id, c.id, $4, $5, 'received', COALESCE($6, now()), $7, $8
     FROM contacts c WHERE c.id = $9
     RETURNING id`,
    [
      instanceId,
      `wamid.${randomUUID()}`,
      fields.direction ?? 'inbound',
      fields.type ?? 'text',
      JSON.stringify({ text: { body: fields.text ?? 'Oi' } }),
      fields.receivedAt ?? null,
      fields.awaiting ?? false,
      fields.turnId ?? null,
      contactId,
    ],
  );
  return row.id;
}

async function awaiting(messageIds: string[]): Promise<Record<string, boolean>> {
  const found = await context.db.query<{ id: string; awaiting_turn: boolean }>(
    'SELECT id, awaiting_turn FROM messages WHERE id = ANY($1::uuid[])',
    [messageIds],
  );
  return Object.fromEntries(found.map((m) => [m.id, m.awaiting_turn]));
}

async function openTurn(instanceId: string, contactId: string): Promise<string> {
  const id = randomUUID();
  await context.db.query(
    `INSERT INTO turns (id, instance_id, contact_id, status) VALUES ($1, $2, $3, 'calling')`,
    [id, instanceId, contactId],
  );
  return id;
}

async function eventsOf(
  instanceId: string,
  type: string,
): Promise<Array<{ lane: string; data: Record<string, unknown> }>> {
  return context.db.query(
    'SELECT lane, data FROM events WHERE instance_id = $1 AND type = $2 ORDER BY seq',
    [instanceId, type],
  );
}

/** The database's clock (what now() will be read against). */
async function databaseNow(): Promise<Date> {
  const [row] = await context.db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
  return row.now;
}

describe('ContactStore', () => {
  describe('resolveContacts', () => {
    it('creates a contact by number alone, then finds it and brings its profile forward, never its last inbound back', async () => {
      const instanceId = await insertInstance(context.db);
      const first = new Date('2026-03-01T10:00:00.000Z');
      const created = await store.resolveContacts(instanceId, [
        identity({ waId: '5511900000001', name: 'Ana', lastInboundAt: first }),
      ]);
      const id = created.get('5511900000001|')!;
      expect(await contact(id)).toMatchObject({
        wa_id: '5511900000001',
        user_id: null,
        name: 'Ana',
        last_inbound_at: first,
      });

      // Known number: an older message and no name change nothing.
      const again = await store.resolveContacts(instanceId, [
        identity({ waId: '5511900000001', lastInboundAt: new Date('2026-02-01T00:00:00Z') }),
      ]);
      expect(again.get('5511900000001|')).toBe(id);
      expect(await contact(id)).toMatchObject({ name: 'Ana', last_inbound_at: first });

      const later = new Date('2026-03-02T10:00:00.000Z');
      await store.resolveContacts(instanceId, [
        identity({ waId: '5511900000001', name: 'Ana B', username: '@ana', lastInboundAt: later }),
      ]);
      expect(await contact(id)).toMatchObject({
        name: 'Ana B',
        username: '@ana',
        last_inbound_at: later,
      });
      expect(await contactsOf(instanceId)).toHaveLength(1);
    });

    it('creates a contact by user id alone (no number) and finds it again by that id', async () => {
      const instanceId = await insertInstance(context.db);
      const first = await store.resolveContacts(instanceId, [
        identity({ userId: 'BR.100', parentUserId: 'BR.P1', username: '@bia' }),
      ]);
      const id = first.get('|BR.100')!;
      expect(await contact(id)).toMatchObject({
        wa_id: null,
        user_id: 'BR.100',
        parent_user_id: 'BR.P1',
        username: '@bia',
      });
      const again = await store.resolveContacts(instanceId, [identity({ userId: 'BR.100' })]);
      expect(again.get('|BR.100')).toBe(id);
      expect(await contactsOf(instanceId)).toHaveLength(1);
    });

    it('links a user id to the contact known by its number, and a number to the one known by its user id', async () => {
      const instanceId = await insertInstance(context.db);
      const byNumber = await newContact(instanceId, { waId: '5511900000002' });
      const byUser = await newContact(instanceId, { userId: 'BR.200' });

      const resolved = await store.resolveContacts(instanceId, [
        identity({ waId: '5511900000002', userId: 'BR.201' }),
        identity({ waId: '5511900000003', userId: 'BR.200' }),
      ]);
      expect(resolved.get('5511900000002|BR.201')).toBe(byNumber);
      expect(resolved.get('5511900000003|BR.200')).toBe(byUser);
      expect(await contact(byNumber)).toMatchObject({ wa_id: '5511900000002', user_id: 'BR.201' });
      expect(await contact(byUser)).toMatchObject({ wa_id: '5511900000003', user_id: 'BR.200' });
      expect(await contactsOf(instanceId)).toHaveLength(2);
    });

    it('merges the contact known by the number into the one known by the user id when a message names both', async () => {
      const instanceId = await insertInstance(context.db);
      const byNumber = await newContact(instanceId, { waId: '5511900000004', name: 'Caio' });
      const byUser = await newContact(instanceId, { userId: 'BR.300' });
      const message = await insertMessage(instanceId, byNumber);

      const resolved = await store.resolveContacts(instanceId, [
        identity({ waId: '5511900000004', userId: 'BR.300' }),
      ]);
      expect(resolved.get('5511900000004|BR.300')).toBe(byUser);
      expect(await contact(byNumber)).toBeUndefined();
      expect(await contact(byUser)).toMatchObject({
        wa_id: '5511900000004',
        user_id: 'BR.300',
        name: 'Caio',
      });
      const [moved] = await context.db.query<{ contact_id: string }>(
        'SELECT contact_id FROM messages WHERE id = $1',
        [message],
      );
      expect(moved.contact_id).toBe(byUser);
    });

    it('gives a number that changed hands to a new contact, the old one keeping it among its previous numbers', async () => {
      const instanceId = await insertInstance(context.db);
      const before = await newContact(instanceId, { waId: '5511900000005', userId: 'BR.400' });

      const resolved = await store.resolveContacts(instanceId, [
        identity({ waId: '5511900000005', userId: 'BR.401', name: 'New owner' }),
      ]);
      const now = resolved.get('5511900000005|BR.401')!;
      expect(now).not.toBe(before);
      expect(await contact(now)).toMatchObject({
        wa_id: '5511900000005',
        user_id: 'BR.401',
        name: 'New owner',
      });
      expect(await contact(before)).toMatchObject({
        wa_id: null,
        user_id: 'BR.400',
        previous_wa_ids: ['5511900000005'],
      });
    });

    it('resolves a batch mixing known numbers and new identities, each by its key', async () => {
      const instanceId = await insertInstance(context.db);
      const known = await newContact(instanceId, { waId: '5511900000006' });
      const resolved = await store.resolveContacts(instanceId, [
        identity({ waId: '5511900000007', key: 'b' }),
        identity({ waId: '5511900000006', key: 'a' }),
        identity({ userId: 'BR.500', key: 'c' }),
      ]);
      expect(resolved.get('a')).toBe(known);
      const all = await contactsOf(instanceId);
      expect(new Set(resolved.values())).toEqual(new Set(all.map((c) => c.id)));
      expect(all.find((c) => c.id === resolved.get('b'))?.wa_id).toBe('5511900000007');
      expect(all.find((c) => c.id === resolved.get('c'))?.user_id).toBe('BR.500');
    });
  });

  describe('setPhoneNames', () => {
    it("keeps the phone book's name apart, and shows it only while the name is none or the book's own", async () => {
      const instanceId = await insertInstance(context.db);
      const at = (seconds: number) => new Date(Date.UTC(2026, 10, 1, 0, 0, seconds));
      const [profiled, unnamed] = [
        await newContact(instanceId, { waId: '5511900000501', name: 'Maria (perfil)' }),
        await newContact(instanceId, { waId: '5511900000502' }),
      ];
      expect(
        await store.setPhoneNames(instanceId, [
          { waId: '5511900000501', name: 'Maria Souza', at: at(1) },
          { waId: '5511900000502', name: 'João Lima', at: at(1) },
          { waId: '5511900000502', name: 'João Silva', at: at(2) },
          { waId: '5511900000599', name: 'Nobody', at: at(1) },
        ]),
      ).toBe(2);
      expect(await contact(profiled)).toMatchObject({
        name: 'Maria (perfil)',
        phone_name: 'Maria Souza',
      });
      // The latest entry for a number wins.
      expect(await contact(unnamed)).toMatchObject({
        name: 'João Silva',
        phone_name: 'João Silva',
        phone_name_at: at(2),
      });
      // The same again changes nothing, nor does an older entry delivered again.
      expect(
        await store.setPhoneNames(instanceId, [
          { waId: '5511900000502', name: 'João Silva', at: at(2) },
        ]),
      ).toBe(0);
      expect(
        await store.setPhoneNames(instanceId, [
          { waId: '5511900000502', name: 'João Lima', at: at(1) },
        ]),
      ).toBe(0);
      expect(await contact(unnamed)).toMatchObject({ name: 'João Silva' });
      // Removed from the book later: the name stays.
      await store.setPhoneNames(instanceId, [{ waId: '5511900000502', name: null, at: at(3) }]);
      expect(await contact(unnamed)).toMatchObject({ name: 'João Silva', phone_name: null });
    });
  });

  describe('rekeyContact', () => {
    it('moves the contact known by the old number to the new one, keeping the old among its previous numbers', async () => {
      const instanceId = await insertInstance(context.db);
      const id = await newContact(instanceId, { waId: '5511900000010', userId: 'BR.600' });
      const rekeyed = await store.rekeyContact(instanceId, {
        old: { waId: '5511900000010', userId: 'BR.600' },
        new: { waId: '5511900000011', userId: null, parentUserId: null },
      });
      expect(rekeyed).toBe(id);
      expect(await contact(id)).toMatchObject({
        wa_id: '5511900000011',
        user_id: 'BR.600',
        previous_wa_ids: ['5511900000010'],
        previous_user_ids: [],
      });
    });

    it('is null when no contact has the old keys', async () => {
      const instanceId = await insertInstance(context.db);
      await newContact(instanceId, { waId: '5511900000012' });
      expect(
        await store.rekeyContact(instanceId, {
          old: { waId: '5511900000013', userId: null },
          new: { waId: '5511900000014', userId: null, parentUserId: null },
        }),
      ).toBeNull();
      expect((await contactsOf(instanceId)).map((c) => c.wa_id)).toEqual(['5511900000012']);
    });
  });

  describe('contactKeys', () => {
    it("is a contact's keys and profile, null when it is gone", async () => {
      const instanceId = await insertInstance(context.db);
      const id = await newContact(instanceId, {
        waId: '5511900000020',
        userId: 'BR.700',
        parentUserId: 'BR.P7',
        name: 'Dora',
      });
      expect(await store.contactKeys(id)).toEqual({
        wa_id: '5511900000020',
        user_id: 'BR.700',
        parent_user_id: 'BR.P7',
        username: null,
        name: 'Dora',
      });
      expect(await store.contactKeys(randomUUID())).toBeNull();
    });
  });

  describe('lastInbound', () => {
    it('is the last inbound time of the contact by number, and whether it opted out', async () => {
      const instanceId = await insertInstance(context.db);
      const at = new Date('2026-04-01T12:00:00.000Z');
      const ids = await store.resolveContacts(instanceId, [
        identity({ waId: '5511900000030', lastInboundAt: at }),
      ]);
      expect(await store.lastInbound(instanceId, '5511900000030', true)).toEqual({
        last: at,
        optedOut: false,
      });
      await store.setOptOut([ids.get('5511900000030|')!], true);
      expect(await store.lastInbound(instanceId, '5511900000030', true)).toEqual({
        last: at,
        optedOut: true,
      });
    });

    it('by user id is the latest of the contacts sharing it as user or parent id; unknown is never', async () => {
      const instanceId = await insertInstance(context.db);
      const early = new Date('2026-04-01T12:00:00.000Z');
      const late = new Date('2026-04-02T12:00:00.000Z');
      const ids = await store.resolveContacts(instanceId, [
        identity({ userId: 'BR.801', parentUserId: 'BR.P8', lastInboundAt: early, key: 'a' }),
        identity({ userId: 'BR.802', parentUserId: 'BR.P8', lastInboundAt: late, key: 'b' }),
      ]);
      await store.setOptOut([ids.get('a')!], true);
      expect(await store.lastInbound(instanceId, 'BR.P8', false)).toEqual({
        last: late,
        optedOut: true,
      });
      expect(await store.lastInbound(instanceId, 'BR.801', false)).toEqual({
        last: early,
        optedOut: true,
      });
      expect(await store.lastInbound(instanceId, 'BR.802', false)).toEqual({
        last: late,
        optedOut: false,
      });
      expect(await store.lastInbound(instanceId, '5511900000031', true)).toEqual({
        last: null,
        optedOut: false,
      });
      expect(await store.lastInbound(instanceId, 'BR.899', false)).toEqual({
        last: null,
        optedOut: false,
      });
    });
  });

  describe('contactsByIds', () => {
    it('reads contacts by id, leaving out ids of none', async () => {
      const instanceId = await insertInstance(context.db);
      const a = await newContact(instanceId, { waId: '5511900000310' });
      const b = await newContact(instanceId, { userId: 'BR.310' });
      const found = await store.contactsByIds([a, b, randomUUID()]);
      expect(found.map((c) => c.id).sort()).toEqual([a, b].sort());
      expect(found.find((c) => c.id === b)).toMatchObject({ user_id: 'BR.310', wa_id: null });
    });
  });

  describe('contactByKey', () => {
    it('finds by number when the key is digits, by user id otherwise, within the instance', async () => {
      const instanceId = await insertInstance(context.db);
      const other = await insertInstance(context.db);
      const id = await newContact(instanceId, { waId: '5511900000040', userId: 'BR.900' });
      expect((await store.contactByKey(instanceId, '5511900000040'))?.id).toBe(id);
      expect((await store.contactByKey(instanceId, 'BR.900'))?.id).toBe(id);
      expect(await store.contactByKey(instanceId, '5511900000041')).toBeNull();
      expect(await store.contactByKey(other, '5511900000040')).toBeNull();
    });
  });

  describe('listContacts', () => {
    it('pages newest activity first with the [activity, id] position, and searches by number or name prefix', async () => {
      const instanceId = await insertInstance(context.db);
      const people = [
        { waId: '5511911110001', name: 'Maria', day: 1 },
        { waId: '5511911110002', name: 'marcos', day: 2 },
        { waId: '5521922220003', name: 'Joana', day: 3 },
        { waId: '5521922220004', name: 'M_x', day: 4 },
        { waId: '5531933330005', name: 'Mxy', day: 5 },
      ];
      const ids = await store.resolveContacts(
        instanceId,
        people.map((p) =>
          identity({
            waId: p.waId,
            name: p.name,
            lastInboundAt: new Date(`2026-05-0${p.day}T00:00:00.000Z`),
          }),
        ),
      );
      const newestFirst = [...people].reverse().map((p) => ids.get(`${p.waId}|`));

      const seen: string[] = [];
      let after: { at: string; id: string } | null = null;
      for (let page = 0; page < 10; page++) {
        const found = await store.listContacts(instanceId, undefined, after, 2);
        if (found.length === 0) break;
        expect(found.length).toBeLessThanOrEqual(2);
        seen.push(...found.map((c) => c.id));
        const last = found[found.length - 1];
        expect(BigInt(last.activity)).toBe(BigInt(last.last_activity_at.getTime()) * 1000n);
        after = { at: isoFromEpochMicros(BigInt(last.activity)), id: last.id };
      }
      expect(seen).toEqual(newestFirst);

      const names = async (search: string) =>
        (await store.listContacts(instanceId, search, null, 10)).map((c) => c.name);
      expect(await names('55219')).toEqual(['M_x', 'Joana']);
      expect(await names('ma')).toEqual(['marcos', 'Maria']);
      expect(await names('M_')).toEqual(['M_x']); // _ is a character, not a wildcard
      expect(await names('%')).toEqual([]);
      expect(await names('5541')).toEqual([]);
    });

    it('filters by state: waiting, paused, agent, window open, opted out', async () => {
      const instanceId = await insertInstance(context.db);
      const recently = new Date(Date.now() - 3_600_000);
      const longAgo = new Date(Date.now() - 3 * 86_400_000);
      const people = ['waiting', 'paused', 'open', 'closed', 'optedOut', 'pauseEnded'];
      const ids = await store.resolveContacts(
        instanceId,
        people.map((name, n) =>
          identity({
            waId: `55119444400${n}`,
            name,
            lastInboundAt: name === 'closed' || name === 'pauseEnded' ? longAgo : recently,
          }),
        ),
      );
      const id = (n: number) => ids.get(`55119444400${n}|`)!;
      const set = (n: number, assignments: string) =>
        context.db.query(`UPDATE contacts SET ${assignments} WHERE id = $1`, [id(n)]);
      await set(0, `handoff_until = now() + interval '1 hour', handoff_by = 'agent'`);
      await set(1, `handoff_until = now() + interval '1 hour', handoff_by = 'person'`);
      await set(4, `opted_out_at = now()`);
      await set(5, `handoff_until = now() - interval '1 hour', handoff_by = 'agent'`);

      const named = async (state: ContactState) =>
        (await store.listContacts(instanceId, undefined, null, 10, state))
          .map((c) => c.name)
          .sort();
      expect(await named('waiting')).toEqual(['waiting']);
      expect(await named('paused')).toEqual(['paused', 'waiting']);
      expect(await named('agent')).toEqual(['closed', 'open', 'pauseEnded']);
      expect(await named('window_open')).toEqual(['optedOut', 'paused', 'waiting', 'open'].sort());
      expect(await named('opted_out')).toEqual(['optedOut']);
    });
  });

  describe('markRead', () => {
    it('moves the mark to a message of the contact (its stored position), never back', async () => {
      const instanceId = await insertInstance(context.db);
      const id = await newContact(instanceId, { waId: '5511900000090' });
      const other = await newContact(instanceId, { waId: '5511900000091' });
      const messages = new MessageStore(context.source);
      const send = async (contactId: string, address: string) => {
        const wamid = `wamid.${randomUUID()}`;
        await messages.insertOutbound([
          {
            instanceId,
            address,
            byNumber: true,
            contactId,
            sentBy: 'api',
            type: 'text',
            body: { body: 'Oi' },
            wamid,
          },
        ]);
        const [row] = await context.db.query<{ stored_tx: string; seq: string }>(
          'SELECT stored_tx::text, seq::text FROM messages WHERE wamid = $1',
          [wamid],
        );
        return { wamid, ...row };
      };
      const first = await send(id, '5511900000090');
      const second = await send(id, '5511900000090');
      const elsewhere = await send(other, '5511900000091');

      const read = await store.markRead(id, second.wamid);
      expect([read?.read_tx, read?.read_seq]).toEqual([second.stored_tx, second.seq]);
      // An older message: the mark stays where it is.
      const back = await store.markRead(id, first.wamid);
      expect([back?.read_tx, back?.read_seq]).toEqual([second.stored_tx, second.seq]);
      // A message stored after the one on screen but arriving before it (the customer's clock
      // is behind) is on screen too: marking the arrival-last moves the mark past it.
      const late = `wamid.${randomUUID()}`;
      await messages.insertInbound(instanceId, false, [
        {
          wamid: late,
          address: '5511900000090',
          contactId: id,
          type: 'text',
          body: JSON.stringify({ from: '5511900000090', type: 'text', text: { body: 'ok' } }),
          sentAt: new Date('2000-01-01T00:00:00.000Z'),
          receivedAt: new Date(),
        },
      ]);
      const [lateRow] = await context.db.query<{ seq: string }>(
        'SELECT seq::text FROM messages WHERE wamid = $1',
        [late],
      );
      const past = await store.markRead(id, second.wamid);
      expect(past?.read_seq).toBe(lateRow.seq);
      // Another contact's message, or none: nothing.
      expect(await store.markRead(id, elsewhere.wamid)).toBeNull();
      expect(await store.markRead(id, 'wamid.unknown')).toBeNull();
      expect(await store.markRead(randomUUID(), second.wamid)).toBeNull();
    });
  });

  describe('startHandoff', () => {
    it('pauses from the first waiting message, which waits no more', async () => {
      const instanceId = await insertInstance(context.db);
      const id = await newContact(instanceId, { waId: '5511900000050' });
      const firstWaiting = new Date('2026-06-01T10:00:00.000Z');
      const messages = [
        await insertMessage(instanceId, id, { awaiting: true, receivedAt: firstWaiting }),
        await insertMessage(instanceId, id, {
          awaiting: true,
          receivedAt: new Date('2026-06-01T10:00:05.000Z'),
        }),
      ];
      const paused = await store.startHandoff(id, FUTURE, 'a person', 'api');
      expect(paused).toMatchObject({
        id,
        handoff_until: FUTURE,
        handoff_since: firstWaiting,
        handoff_reason: 'a person',
        handoff_by: 'api',
      });
      expect(await contact(id)).toMatchObject({ handoff_until: FUTURE, handoff_by: 'api' });
      expect(Object.values(await awaiting(messages))).toEqual([false, false]);

      // A pause already running keeps its start.
      const later = new Date('2099-01-01T00:00:00.000Z');
      const again = await store.startHandoff(id, later, 'still a person', 'admin');
      expect(again).toMatchObject({
        handoff_until: later,
        handoff_since: firstWaiting,
        handoff_reason: 'still a person',
        handoff_by: 'admin',
      });
    });

    it('starts now when nothing waits', async () => {
      const instanceId = await insertInstance(context.db);
      const id = await newContact(instanceId, { waId: '5511900000051' });
      const before = await databaseNow();
      const paused = await store.startHandoff(id, FUTURE, null, 'api');
      const after = await databaseNow();
      expect(paused!.handoff_since!.getTime()).toBeGreaterThanOrEqual(before.getTime());
      expect(paused!.handoff_since!.getTime()).toBeLessThanOrEqual(after.getTime());
    });

    it("does not let the agent replace a person's running pause; the agent's own, or an ended one, it may", async () => {
      const instanceId = await insertInstance(context.db);
      const id = await newContact(instanceId, { waId: '5511900000052' });
      await store.startHandoff(id, FUTURE, 'a person', 'api');
      expect(await store.startHandoff(id, FUTURE, 'the agent', 'agent')).toBeNull();
      expect(await contact(id)).toMatchObject({ handoff_by: 'api', handoff_reason: 'a person' });

      const other = await newContact(instanceId, { waId: '5511900000053' });
      expect(await store.startHandoff(other, FUTURE, 'the agent', 'agent')).toMatchObject({
        handoff_by: 'agent',
      });
      expect(await store.startHandoff(other, FUTURE, 'the agent again', 'agent')).toMatchObject({
        handoff_reason: 'the agent again',
      });
      // A person takes over from the agent.
      expect(await store.startHandoff(other, FUTURE, 'a person', 'admin')).toMatchObject({
        handoff_by: 'admin',
      });

      const ended = await newContact(instanceId, { waId: '5511900000054' });
      await store.startHandoff(ended, PAST, 'a person', 'api');
      expect(await store.startHandoff(ended, FUTURE, 'the agent', 'agent')).toMatchObject({
        handoff_by: 'agent',
        handoff_until: FUTURE,
      });
    });

    it('is null for an unknown contact', async () => {
      expect(await store.startHandoff(randomUUID(), FUTURE, null, 'api')).toBeNull();
    });
  });

  describe('endHandoff', () => {
    it('gives the agent what came during the pause, never history imported meanwhile', async () => {
      const instanceId = await insertInstance(context.db);
      const id = await newContact(instanceId, { waId: '5511900000095' });
      await store.startHandoff(id, FUTURE, 'a person', 'api');
      const live = await insertMessage(instanceId, id);
      await new MessageStore(context.source).insertImported(instanceId, [
        {
          wamid: 'wamid.pause-imported',
          direction: 'inbound',
          contact: '5511900000095',
          contactId: id,
          type: 'text',
          body: { text: { body: 'months ago' } },
          status: 'received',
          sentAt: new Date('2026-05-01T00:00:00Z'),
        },
      ]);
      const { pending } = await store.endHandoff(id, 'api', true, []);
      expect(pending).toBe(1);
      expect(await awaiting([live])).toEqual({ [live]: true });
    });

    async function pausedWithMessages(waId: string) {
      const instanceId = await insertInstance(context.db);
      const id = await newContact(instanceId, { waId });
      const before = await insertMessage(instanceId, id, { receivedAt: PAST });
      const paused = await store.startHandoff(id, FUTURE, 'a person', 'api');
      // Stored during the pause (received now, after its start).
      const question = await insertMessage(instanceId, id, { text: 'Can you help?' });
      const stop = await insertMessage(instanceId, id, { text: ' stop ' });
      const system = await insertMessage(instanceId, id, { type: 'system' });
      const sent = await insertMessage(instanceId, id, { direction: 'outbound' });
      const answered = await insertMessage(instanceId, id, { turnId: randomUUID() });
      expect(paused!.handoff_since!.getTime()).toBeGreaterThan(PAST.getTime());
      return { id, before, question, stop, system, sent, answered };
    }

    it('with includePending, puts back the inbound questions that came during the pause', async () => {
      const { id, before, question, stop, system, sent, answered } =
        await pausedWithMessages('5511900000060');
      const { contact: resumed, pending } = await store.endHandoff(id, 'admin', true, ['STOP']);
      expect(pending).toBe(1);
      expect(resumed).toMatchObject({
        id,
        handoff_until: null,
        handoff_by: 'admin',
        handoff_reason: null,
      });
      expect(await awaiting([before, question, stop, system, sent, answered])).toEqual({
        [before]: false,
        [question]: true,
        [stop]: false,
        [system]: false,
        [sent]: false,
        [answered]: false,
      });
    });

    it('without includePending, or for an opted-out contact, puts back nothing', async () => {
      const first = await pausedWithMessages('5511900000061');
      expect((await store.endHandoff(first.id, 'api', false, [])).pending).toBe(0);
      expect((await awaiting([first.question]))[first.question]).toBe(false);
      expect(await contact(first.id)).toMatchObject({ handoff_until: null, handoff_by: 'api' });

      const second = await pausedWithMessages('5511900000062');
      await store.setOptOut([second.id], true);
      expect((await store.endHandoff(second.id, 'api', true, [])).pending).toBe(0);
      expect((await awaiting([second.question]))[second.question]).toBe(false);
    });

    it('is no contact and nothing pending for an unknown one', async () => {
      expect(await store.endHandoff(randomUUID(), 'api', true, [])).toEqual({
        contact: null,
        pending: 0,
      });
    });
  });

  describe('liftEchoPauses', () => {
    it("ends the phone app's pause an echo of this service's own send began, and what waited waits again; never a pause with another send since", async () => {
      const instanceId = await insertInstance(context.db);
      const messages = new MessageStore(context.source);
      const raced = await newContact(instanceId, { waId: '5511900000090' });
      const answered = await newContact(instanceId, { waId: '5511900000091' });
      const waiting = await insertMessage(instanceId, raced, { awaiting: true });
      const echo = (address: string, wamid: string) =>
        messages.insertOutbound(
          [
            {
              instanceId,
              address,
              byNumber: true,
              sentBy: 'phone_app',
              type: 'text',
              body: { text: { body: 'Oi' } },
              wamid,
            },
          ],
          { placeholdersOnly: true },
        );
      const ours = (address: string, wamid: string) =>
        messages.insertOutbound([
          {
            instanceId,
            address,
            byNumber: true,
            sentBy: 'agent',
            type: 'text',
            body: { text: { body: 'Oi' } },
            wamid,
          },
        ]);
      for (const [address, wamid] of [
        ['5511900000090', 'wamid.lift-raced'],
        ['5511900000091', 'wamid.lift-answered'],
      ]) {
        await echo(address, wamid);
        await store.pauseForPeople(
          [{ instanceId, address, byNumber: true, phoneApp: true }],
          600,
          60,
        );
      }
      expect(await contact(raced)).toMatchObject({
        handoff_by: 'auto',
        handoff_reason: PHONE_APP_REASON,
      });
      expect(await awaiting([waiting])).toEqual({ [waiting]: false });
      // The owner really answered the second customer from the phone as well.
      await echo('5511900000091', 'wamid.lift-phone');

      const recorded = await ours('5511900000090', 'wamid.lift-raced');
      expect(recorded.completed).toEqual([{ wamid: 'wamid.lift-raced', contact_id: raced }]);
      const second = await ours('5511900000091', 'wamid.lift-answered');
      expect(
        await store.liftEchoPauses(
          [raced, answered],
          [...recorded.completed, ...second.completed].map((e) => e.wamid),
          [],
        ),
      ).toEqual([raced]);
      expect(await contact(raced)).toMatchObject({ handoff_until: null, handoff_by: 'auto' });
      expect(await awaiting([waiting])).toEqual({ [waiting]: true });
      // No person stepped in: the handoff history keeps no trace of the mistaken pause.
      expect(await store.handoffHistory(raced, 5)).toEqual([]);
      expect(await store.handoffHistory(answered, 5)).toHaveLength(1);

      // A status's placeholder stored before the owner's real echo, completed by a
      // campaign's record later, lifts nothing: the owner wrote after it.
      const owner = await newContact(instanceId, { waId: '5511900000092' });
      await messages.applyStatuses(instanceId, [
        {
          wamid: 'wamid.lift-placeholder',
          recipient: '5511900000092',
          status: 'delivered',
          errors: null,
        },
      ]);
      await echo('5511900000092', 'wamid.lift-owner');
      await store.pauseForPeople(
        [{ instanceId, address: '5511900000092', byNumber: true, phoneApp: true }],
        600,
        60,
      );
      const placeholder = await ours('5511900000092', 'wamid.lift-placeholder');
      expect(placeholder.completed).toEqual([
        { wamid: 'wamid.lift-placeholder', contact_id: owner },
      ]);
      expect(await store.liftEchoPauses([owner], ['wamid.lift-placeholder'], [])).toEqual([]);
      expect((await contact(owner))!.handoff_until!.getTime()).toBeGreaterThan(Date.now());
      expect((await contact(answered))!.handoff_until!.getTime()).toBeGreaterThan(Date.now());
    });
  });

  describe('pauseForPeople', () => {
    it("pauses for the send's seconds plus the slack, by number or user id, and what waited waits no more", async () => {
      const instanceId = await insertInstance(context.db);
      const byNumber = await newContact(instanceId, { waId: '5511900000070' });
      const byUser = await newContact(instanceId, { userId: 'BR.1000' });
      const untouched = await newContact(instanceId, { waId: '5511900000071' });
      const waiting = await insertMessage(instanceId, byNumber, { awaiting: true });
      const otherWaiting = await insertMessage(instanceId, untouched, { awaiting: true });

      const before = await databaseNow();
      await store.pauseForPeople(
        [
          { instanceId, address: '5511900000070', byNumber: true },
          { instanceId, address: 'BR.1000', byNumber: false },
        ],
        600,
        60,
      );
      const after = await databaseNow();
      for (const id of [byNumber, byUser]) {
        const paused = (await contact(id))!;
        expect(paused).toMatchObject({
          handoff_by: 'auto',
          handoff_reason: 'a person replied through the API',
        });
        expect(paused.handoff_until!.getTime()).toBeGreaterThanOrEqual(before.getTime() + 660_000);
        expect(paused.handoff_until!.getTime()).toBeLessThanOrEqual(after.getTime() + 660_000);
        expect(paused.handoff_since!.getTime()).toBeGreaterThanOrEqual(before.getTime());
      }
      expect((await contact(untouched))!.handoff_until).toBeNull();
      expect(await awaiting([waiting, otherWaiting])).toEqual({
        [waiting]: false,
        [otherWaiting]: true,
      });
    });

    it('never shortens a longer pause, and leaves one that lasts long enough as it is (no event)', async () => {
      const instanceId = await insertInstance(context.db);
      await insertSubscription(context.db, instanceId, ['contact.handoff']);
      const long = await newContact(instanceId, { waId: '5511900000072' });
      await store.startHandoff(long, FUTURE, 'a client', 'api');
      const recent = await newContact(instanceId, { waId: '5511900000073' });
      const send = (address: string) => [{ instanceId, address, byNumber: true }];

      await store.pauseForPeople(send('5511900000072'), 600, 60);
      expect(await contact(long)).toMatchObject({
        handoff_until: FUTURE,
        handoff_by: 'api',
        handoff_reason: 'a client',
      });

      await store.pauseForPeople(send('5511900000073'), 600, 60);
      const first = (await contact(recent))!;
      await store.pauseForPeople(send('5511900000073'), 600, 60);
      expect((await contact(recent))!.handoff_until).toEqual(first.handoff_until);
      // One event per pause written: the api pause, then the first send's only.
      expect(await eventsOf(instanceId, 'contact.handoff')).toHaveLength(2);
    });

    it("extends a shorter pause of a client, which stays theirs; the agent's becomes the person's", async () => {
      const instanceId = await insertInstance(context.db);
      const client = await newContact(instanceId, { waId: '5511900000074' });
      const agent = await newContact(instanceId, { waId: '5511900000075' });
      const soon = new Date((await databaseNow()).getTime() + 3_600_000);
      const clientPause = await store.startHandoff(client, soon, 'a client', 'api');
      const agentPause = await store.startHandoff(agent, FUTURE, 'the agent', 'agent');

      await store.pauseForPeople(
        [
          { instanceId, address: '5511900000074', byNumber: true },
          { instanceId, address: '5511900000075', byNumber: true },
        ],
        86_400,
        60,
      );
      const extended = (await contact(client))!;
      expect(extended).toMatchObject({
        handoff_by: 'api',
        handoff_reason: 'a client',
        handoff_since: clientPause!.handoff_since,
      });
      expect(extended.handoff_until!.getTime()).toBeGreaterThan(soon.getTime() + 82_800_000);
      expect(await contact(agent)).toMatchObject({
        handoff_until: FUTURE,
        handoff_by: 'auto',
        handoff_reason: 'a person replied through the API',
        handoff_since: agentPause!.handoff_since,
      });
    });
    it("names the person who sent; a person's running pause stays theirs; the timer forgets them", async () => {
      const instanceId = await insertInstance(context.db);
      const sentTo = await newContact(instanceId, { waId: '5511900000076' });
      const taken = await newContact(instanceId, { waId: '5511900000077' });
      const ana = { accountId: randomUUID(), displayName: 'Ana Souza' };
      const bruno = { accountId: randomUUID(), displayName: 'Bruno' };
      const soon = new Date((await databaseNow()).getTime() + 60_000);
      await store.startHandoff(taken, soon, 'Bruno answers', 'person', bruno);

      await store.pauseForPeople(
        [
          { instanceId, address: '5511900000076', byNumber: true, person: ana },
          { instanceId, address: '5511900000077', byNumber: true, person: ana },
        ],
        600,
        60,
      );
      expect(await contact(sentTo)).toMatchObject({
        handoff_by: 'auto',
        handoff_reason: 'Ana Souza replied',
        handoff_account_id: ana.accountId,
        handoff_account_name: 'Ana Souza',
      });
      const kept = (await contact(taken))!;
      expect(kept).toMatchObject({
        handoff_by: 'person',
        handoff_reason: 'Bruno answers',
        handoff_account_id: bruno.accountId,
        handoff_account_name: 'Bruno',
      });
      expect(kept.handoff_until!.getTime()).toBeGreaterThan(soon.getTime());

      await context.db.query(
        `UPDATE contacts SET handoff_until = now() - interval '1 second' WHERE id = $1`,
        [sentTo],
      );
      await store.endExpiredHandoffs();
      expect(await contact(sentTo)).toMatchObject({
        handoff_by: 'timer',
        handoff_account_id: null,
        handoff_account_name: null,
      });
    });
  });

  describe('replyTarget', () => {
    it("is the turn's contact with its keys now, paused while a person has it or it opted out, not for the agent's own pause", async () => {
      const instanceId = await insertInstance(context.db);
      const id = await newContact(instanceId, { waId: '5511900000080', userId: 'BR.1100' });
      const turnId = await openTurn(instanceId, id);
      expect(await store.replyTarget(turnId)).toEqual({
        id,
        wa_id: '5511900000080',
        user_id: 'BR.1100',
        parent_user_id: null,
        username: null,
        name: null,
        paused: false,
      });
      await store.rekeyContact(instanceId, {
        old: { waId: '5511900000080', userId: 'BR.1100' },
        new: { waId: '5511900000081', userId: null, parentUserId: null },
      });
      expect((await store.replyTarget(turnId))?.wa_id).toBe('5511900000081');

      await store.startHandoff(id, FUTURE, null, 'agent');
      expect((await store.replyTarget(turnId))?.paused).toBe(false);
      await store.startHandoff(id, FUTURE, null, 'api');
      expect((await store.replyTarget(turnId))?.paused).toBe(true);
      await store.endHandoff(id, 'api', false, []);
      expect((await store.replyTarget(turnId))?.paused).toBe(false);
      await store.setOptOut([id], true);
      expect((await store.replyTarget(turnId))?.paused).toBe(true);

      expect(await store.replyTarget(randomUUID())).toBeNull();
    });
  });

  describe('movedKeys', () => {
    it('is the keys now of the contact that had the address, null while one holds it or none ever did', async () => {
      const instanceId = await insertInstance(context.db);
      await newContact(instanceId, { waId: '5511900000090', userId: 'BR.1200' });
      await store.rekeyContact(instanceId, {
        old: { waId: '5511900000090', userId: 'BR.1200' },
        new: { waId: '5511900000091', userId: 'BR.1201', parentUserId: null },
      });
      const now = { wa_id: '5511900000091', user_id: 'BR.1201' };
      expect(await store.movedKeys(instanceId, '5511900000090', true)).toEqual(now);
      expect(await store.movedKeys(instanceId, 'BR.1200', false)).toEqual(now);
      expect(await store.movedKeys(instanceId, '5511900000091', true)).toBeNull();
      expect(await store.movedKeys(instanceId, 'BR.1201', false)).toBeNull();
      expect(await store.movedKeys(instanceId, '5511900000092', true)).toBeNull();

      // A number some contact holds again is good again.
      await newContact(instanceId, { waId: '5511900000090' });
      expect(await store.movedKeys(instanceId, '5511900000090', true)).toBeNull();
    });
  });

  describe('endExpiredHandoffs', () => {
    it('ends the pauses whose time is up (the timer), and only those', async () => {
      await store.endExpiredHandoffs(); // what earlier cases left
      const instanceId = await insertInstance(context.db);
      const expired = [
        await newContact(instanceId, { waId: '5511900000100' }),
        await newContact(instanceId, { waId: '5511900000101' }),
      ];
      const running = await newContact(instanceId, { waId: '5511900000102' });
      for (const id of expired) await store.startHandoff(id, PAST, 'a person', 'api');
      await store.startHandoff(running, FUTURE, 'a person', 'api');

      expect(await store.endExpiredHandoffs()).toBe(2);
      for (const id of expired) {
        expect(await contact(id)).toMatchObject({
          handoff_until: null,
          handoff_by: 'timer',
          handoff_reason: 'the pause ended',
        });
      }
      expect(await contact(running)).toMatchObject({ handoff_until: FUTURE, handoff_by: 'api' });
      expect(await store.endExpiredHandoffs()).toBe(0);
    });
  });

  describe('setOptOut', () => {
    it('opts out (waiting messages wait no more) and back in, answering the keys of those that changed', async () => {
      const instanceId = await insertInstance(context.db);
      const a = await newContact(instanceId, { waId: '5511900000110' });
      const b = await newContact(instanceId, { userId: 'BR.1300' });
      const waiting = await insertMessage(instanceId, a, { awaiting: true });

      const before = await databaseNow();
      const out = await store.setOptOut([a, b], true);
      expect(out).toEqual(
        expect.arrayContaining([
          { instance_id: instanceId, wa_id: '5511900000110', user_id: null },
          { instance_id: instanceId, wa_id: null, user_id: 'BR.1300' },
        ]),
      );
      expect(out).toHaveLength(2);
      expect((await contact(a))!.opted_out_at!.getTime()).toBeGreaterThanOrEqual(before.getTime());
      expect((await awaiting([waiting]))[waiting]).toBe(false);

      // Already out: nothing changes.
      expect(await store.setOptOut([a], true)).toEqual([]);

      await insertMessage(instanceId, a, { awaiting: false });
      expect(await store.setOptOut([a], false)).toEqual([
        { instance_id: instanceId, wa_id: '5511900000110', user_id: null },
      ]);
      expect((await contact(a))!.opted_out_at).toBeNull();
      expect((await awaiting([waiting]))[waiting]).toBe(false);
      expect(await store.setOptOut([], true)).toEqual([]);
    });
  });
});

describe('mc_lock_contacts', () => {
  /** Waits until `pid` waits for a lock another session holds. */
  async function blocked(observer: Client, pid: number): Promise<void> {
    for (;;) {
      const { rows } = await observer.query<{ waiting: boolean }>(
        'SELECT cardinality(pg_blocking_pids($1)) > 0 AS waiting',
        [pid],
      );
      if (rows[0].waiting) return;
    }
  }

  async function tryLock(client: Client, id: string, mode: string): Promise<string | undefined> {
    try {
      await client.query(`SELECT 1 FROM contacts WHERE id = $1 FOR ${mode} NOWAIT`, [id]);
      return undefined;
    } catch (error) {
      return sqlState(error);
    }
  }

  it('locks the contacts it is given (no key update) until the transaction ends, and no others', async () => {
    const instanceId = await insertInstance(context.db);
    const [a, b, c] = [
      await newContact(instanceId, { waId: '5511900000120' }),
      await newContact(instanceId, { waId: '5511900000121' }),
      await newContact(instanceId, { waId: '5511900000122' }),
    ];
    const holder = await context.client();
    const other = await context.client();
    await holder.query('BEGIN');
    await holder.query('SELECT mc_lock_contacts($1::uuid[])', [[b, a]]);

    await other.query('BEGIN');
    expect(await tryLock(other, a, 'NO KEY UPDATE')).toBe(LOCK_NOT_AVAILABLE);
    await other.query('ROLLBACK');
    await other.query('BEGIN');
    expect(await tryLock(other, b, 'NO KEY UPDATE')).toBe(LOCK_NOT_AVAILABLE);
    await other.query('ROLLBACK');
    await other.query('BEGIN');
    // A message insert's foreign-key check (key share) does not wait for it.
    expect(await tryLock(other, a, 'KEY SHARE')).toBeUndefined();
    expect(await tryLock(other, c, 'NO KEY UPDATE')).toBeUndefined();
    await other.query('ROLLBACK');

    await holder.query('COMMIT');
    await other.query('BEGIN');
    expect(await tryLock(other, a, 'NO KEY UPDATE')).toBeUndefined();
    await other.query('ROLLBACK');
  });

  it('takes them in id order, whatever the order given', async () => {
    const instanceId = await insertInstance(context.db);
    const ids = [
      await newContact(instanceId, { waId: '5511900000123' }),
      await newContact(instanceId, { waId: '5511900000124' }),
    ].sort();
    const [low, high] = ids;
    const holder = await context.client();
    const locker = await context.client();
    const probe = await context.client();

    // Another session holds the higher id: the locker takes the lower, then waits.
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM contacts WHERE id = $1 FOR NO KEY UPDATE', [high]);
    await locker.query('BEGIN');
    const [{ pid }] = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    const locking = locker.query('SELECT mc_lock_contacts($1::uuid[])', [[high, low]]);
    await blocked(probe, pid);

    await probe.query('BEGIN');
    expect(await tryLock(probe, low, 'NO KEY UPDATE')).toBe(LOCK_NOT_AVAILABLE);
    await probe.query('ROLLBACK');

    await holder.query('COMMIT');
    await locking;
    await locker.query('COMMIT');
  });
});

describe('mc_resolve_contact', () => {
  const resolve = async (
    instanceId: string,
    waId: string | null,
    userId: string | null,
    profile: { parent?: string; username?: string; name?: string; at?: Date } = {},
  ): Promise<string | null> => {
    const [row] = await context.db.query<{ id: string | null }>(
      'SELECT mc_resolve_contact($1, $2, $3, $4, $5, $6, $7) AS id',
      [
        instanceId,
        waId,
        userId,
        profile.parent ?? null,
        profile.username ?? null,
        profile.name ?? null,
        profile.at ?? null,
      ],
    );
    return row.id;
  };

  it('is null without a key, and creates a contact with the profile given', async () => {
    const instanceId = await insertInstance(context.db);
    expect(await resolve(instanceId, null, null, { name: 'Nobody' })).toBeNull();
    expect(await contactsOf(instanceId)).toEqual([]);

    const at = new Date('2026-07-01T00:00:00.000Z');
    const id = await resolve(instanceId, '5511900000130', 'BR.1400', {
      parent: 'BR.P14',
      username: '@eva',
      name: 'Eva',
      at,
    });
    expect(await contact(id!)).toMatchObject({
      instance_id: instanceId,
      wa_id: '5511900000130',
      user_id: 'BR.1400',
      parent_user_id: 'BR.P14',
      username: '@eva',
      name: 'Eva',
      last_inbound_at: at,
    });
  });

  it('finds by user id first, moving the contact to a new number it brings', async () => {
    const instanceId = await insertInstance(context.db);
    const id = await resolve(instanceId, '5511900000131', 'BR.1401');
    expect(await resolve(instanceId, null, 'BR.1401')).toBe(id);
    expect(await resolve(instanceId, '5511900000131', null)).toBe(id);
    expect(await resolve(instanceId, '5511900000132', 'BR.1401')).toBe(id);
    expect(await contact(id!)).toMatchObject({
      wa_id: '5511900000132',
      previous_wa_ids: ['5511900000131'],
    });
  });

  it('takes a number from a contact of another user id for a known user id', async () => {
    const instanceId = await insertInstance(context.db);
    const holder = await resolve(instanceId, '5511900000133', 'BR.1402');
    const user = await resolve(instanceId, null, 'BR.1403');
    expect(await resolve(instanceId, '5511900000133', 'BR.1403')).toBe(user);
    expect(await contact(user!)).toMatchObject({ wa_id: '5511900000133', user_id: 'BR.1403' });
    expect(await contact(holder!)).toMatchObject({
      wa_id: null,
      user_id: 'BR.1402',
      previous_wa_ids: ['5511900000133'],
    });
  });

  it('merges the number-only contact into the user-id one, but not while both have an open turn', async () => {
    const instanceId = await insertInstance(context.db);
    const byNumber = await resolve(instanceId, '5511900000134', null);
    const byUser = await resolve(instanceId, null, 'BR.1404');
    await openTurn(instanceId, byNumber!);
    await openTurn(instanceId, byUser!);

    // Both busy: the user-id contact answers, the keys are linked on a later message.
    expect(await resolve(instanceId, '5511900000134', 'BR.1404')).toBe(byUser);
    expect(await contact(byNumber!)).toMatchObject({ wa_id: '5511900000134' });
    expect(await contact(byUser!)).toMatchObject({ wa_id: null, user_id: 'BR.1404' });

    await context.db.query(`UPDATE turns SET status = 'done' WHERE contact_id = $1`, [byUser]);
    expect(await resolve(instanceId, '5511900000134', 'BR.1404')).toBe(byUser);
    expect(await contact(byNumber!)).toBeUndefined();
    expect(await contact(byUser!)).toMatchObject({ wa_id: '5511900000134', user_id: 'BR.1404' });
  });
});

describe('mc_rekey_contact', () => {
  const rekey = async (
    instanceId: string,
    old: [string | null, string | null],
    next: [string | null, string | null, string | null],
  ): Promise<string | null> => {
    const [row] = await context.db.query<{ id: string | null }>(
      'SELECT mc_rekey_contact($1, $2, $3, $4, $5, $6) AS id',
      [instanceId, ...old, ...next],
    );
    return row.id;
  };

  it('gives the contact of the old user id the new one, keeping the old among its previous ids', async () => {
    const instanceId = await insertInstance(context.db);
    const id = await newContact(instanceId, { waId: '5511900000140', userId: 'BR.1500' });
    expect(await rekey(instanceId, [null, 'BR.1500'], [null, 'BR.1501', 'BR.P15'])).toBe(id);
    expect(await contact(id)).toMatchObject({
      wa_id: '5511900000140',
      user_id: 'BR.1501',
      parent_user_id: 'BR.P15',
      previous_user_ids: ['BR.1500'],
      previous_wa_ids: [],
    });
    expect(await rekey(instanceId, [null, 'BR.1500'], [null, 'BR.1502', null])).toBeNull();
  });

  it('merges the contact that already held the new number into the one rekeyed', async () => {
    const instanceId = await insertInstance(context.db);
    const id = await newContact(instanceId, { waId: '5511900000141', userId: 'BR.1503' });
    const holder = await newContact(instanceId, { waId: '5511900000142', name: 'Held' });
    const message = await insertMessage(instanceId, holder);

    expect(await rekey(instanceId, ['5511900000141', null], ['5511900000142', null, null])).toBe(
      id,
    );
    expect(await contact(holder)).toBeUndefined();
    expect(await contact(id)).toMatchObject({
      wa_id: '5511900000142',
      user_id: 'BR.1503',
      name: 'Held',
      previous_wa_ids: ['5511900000141'],
    });
    const [moved] = await context.db.query<{ contact_id: string }>(
      'SELECT contact_id FROM messages WHERE id = $1',
      [message],
    );
    expect(moved.contact_id).toBe(id);
  });

  it('changes nothing while both have an open turn (applied on a later message)', async () => {
    const instanceId = await insertInstance(context.db);
    const id = await newContact(instanceId, { waId: '5511900000143' });
    const holder = await newContact(instanceId, { waId: '5511900000144' });
    await openTurn(instanceId, id);
    await openTurn(instanceId, holder);
    expect(await rekey(instanceId, ['5511900000143', null], ['5511900000144', null, null])).toBe(
      id,
    );
    expect(await contact(id)).toMatchObject({ wa_id: '5511900000143', previous_wa_ids: [] });
    expect(await contact(holder)).toMatchObject({ wa_id: '5511900000144' });
  });
});

describe('mc_merge_contacts', () => {
  const merge = async (loser: string, survivor: string): Promise<boolean> => {
    const [row] = await context.db.query<{ merged: boolean }>(
      'SELECT mc_merge_contacts($1, $2) AS merged',
      [loser, survivor],
    );
    return row.merged;
  };

  it('keeps what either knew: opt-outs, the latest marketing preference and phone-book name, the handoff history', async () => {
    const instanceId = await insertInstance(context.db);
    const loser = await newContact(instanceId, { waId: '5511900000170' });
    const survivor = await newContact(instanceId, { userId: 'BR.1800' });
    const at = (day: number) => new Date(Date.UTC(2026, 10, day));
    // The number stopped marketing later than the user id's resume; the phone book named the number.
    await store.setMarketingPreference(instanceId, 'BR.1800', false, at(1), false);
    await store.setMarketingPreference(instanceId, '5511900000170', true, at(2));
    await store.setPhoneNames(instanceId, [{ waId: '5511900000170', name: 'Rosa', at: at(3) }]);
    await context.db.query(`UPDATE contacts SET opted_out_at = $2 WHERE id = $1`, [loser, at(4)]);
    await store.startHandoff(loser, FUTURE, 'a complaint', 'api');
    await store.endHandoff(loser, 'api', false, []);

    expect(await merge(loser, survivor)).toBe(true);
    expect(await contact(survivor)).toMatchObject({
      wa_id: '5511900000170',
      user_id: 'BR.1800',
      opted_out_at: at(4),
      marketing_opted_out_at: at(2),
      marketing_pref_at: at(2),
      phone_name: 'Rosa',
      phone_name_at: at(3),
    });
    expect(await store.handoffHistory(survivor, 5)).toEqual([
      expect.objectContaining({ reason: 'a complaint', ended_by: 'api' }),
    ]);
  });

  it("moves the loser's messages and turns to the survivor, whose keys and profile it completes", async () => {
    const instanceId = await insertInstance(context.db);
    const loser = await newContact(instanceId, {
      waId: '5511900000150',
      parentUserId: 'BR.P16',
      name: 'Loser',
    });
    const survivor = await newContact(instanceId, { userId: 'BR.1600', name: 'Survivor' });
    await context.db.query(
      `UPDATE contacts SET last_inbound_at = $2, previous_wa_ids = '{5511900000159}',
         created_at = '2020-01-01T00:00:00Z' WHERE id = $1`,
      [loser, new Date('2026-08-02T00:00:00.000Z')],
    );
    await context.db.query(
      `UPDATE contacts SET last_inbound_at = $2, previous_user_ids = '{BR.1699}' WHERE id = $1`,
      [survivor, new Date('2026-08-01T00:00:00.000Z')],
    );
    const message = await insertMessage(instanceId, loser);
    const turn = await openTurn(instanceId, loser);

    expect(await merge(loser, survivor)).toBe(true);
    expect(await contact(loser)).toBeUndefined();
    expect(await contact(survivor)).toMatchObject({
      wa_id: '5511900000150',
      user_id: 'BR.1600',
      parent_user_id: 'BR.P16',
      name: 'Survivor',
      last_inbound_at: new Date('2026-08-02T00:00:00.000Z'),
      previous_wa_ids: ['5511900000159'],
      previous_user_ids: ['BR.1699'],
      created_at: new Date('2020-01-01T00:00:00.000Z'),
    });
    const [moved] = await context.db.query<{ contact_id: string }>(
      'SELECT contact_id FROM messages WHERE id = $1',
      [message],
    );
    expect(moved.contact_id).toBe(survivor);
    const [turnRow] = await context.db.query<{ contact_id: string }>(
      'SELECT contact_id FROM turns WHERE id = $1',
      [turn],
    );
    expect(turnRow.contact_id).toBe(survivor);
  });

  it('refuses, changing nothing, while both have an open turn', async () => {
    const instanceId = await insertInstance(context.db);
    const loser = await newContact(instanceId, { waId: '5511900000151' });
    const survivor = await newContact(instanceId, { userId: 'BR.1601' });
    const message = await insertMessage(instanceId, loser);
    await openTurn(instanceId, loser);
    await openTurn(instanceId, survivor);

    expect(await merge(loser, survivor)).toBe(false);
    expect(await contact(loser)).toMatchObject({ wa_id: '5511900000151' });
    expect(await contact(survivor)).toMatchObject({ wa_id: null });
    const [kept] = await context.db.query<{ contact_id: string }>(
      'SELECT contact_id FROM messages WHERE id = $1',
      [message],
    );
    expect(kept.contact_id).toBe(loser);
  });
});

describe('mc_contacts_handoff', () => {
  it("keeps each pause in the contact's history (ContactStore.handoffHistory): extended in place, ended by whom", async () => {
    const instanceId = await insertInstance(context.db);
    const id = await newContact(instanceId, { waId: '5511900000161' });
    const first = (await store.startHandoff(id, FUTURE, 'a complaint', 'api'))!;
    // The same pause changed: still one row.
    await store.startHandoff(id, new Date(FUTURE.getTime() + 1000), 'a complaint', 'api');
    await store.endHandoff(id, 'admin', false, []);
    const second = (await store.startHandoff(id, FUTURE, 'a refund', 'admin'))!;
    expect(second.handoff_since!.getTime()).toBeGreaterThan(first.handoff_since!.getTime());

    expect(await store.handoffHistory(id, 5)).toEqual([
      {
        since: second.handoff_since,
        until: FUTURE,
        by: 'admin',
        reason: 'a refund',
        account_name: null,
        ended_at: null,
        ended_by: null,
      },
      {
        since: first.handoff_since,
        until: new Date(FUTURE.getTime() + 1000),
        by: 'api',
        reason: 'a complaint',
        account_name: null,
        ended_at: expect.any(Date),
        ended_by: 'admin',
      },
    ]);
    expect(await store.handoffHistory(id, 1)).toHaveLength(1);
  });

  it('writes a contact.handoff event on the contact lane as a pause starts and ends', async () => {
    const instanceId = await insertInstance(context.db);
    await insertSubscription(context.db, instanceId, ['contact.handoff']);
    const id = await newContact(instanceId, {
      waId: '5511900000160',
      userId: 'BR.1700',
      name: 'Fia',
    });
    const paused = (await store.startHandoff(id, FUTURE, 'a person', 'api'))!;
    await store.endHandoff(id, 'admin', false, []);

    const contactShape = { wa_id: '5511900000160', user_id: 'BR.1700', name: 'Fia' };
    expect(await eventsOf(instanceId, 'contact.handoff')).toEqual([
      {
        lane: `contact:${id}`,
        data: {
          paused: true,
          until: '2100-01-01T00:00:00.000Z',
          since: paused.handoff_since!.toISOString(),
          reason: 'a person',
          by: 'api',
          account: null,
          contact: contactShape,
        },
      },
      {
        lane: `contact:${id}`,
        data: {
          paused: false,
          until: null,
          since: paused.handoff_since!.toISOString(),
          reason: null,
          by: 'admin',
          account: null,
          contact: contactShape,
        },
      },
    ]);
  });

  it('names the person who paused or resumed, and writes an event when only the person changes', async () => {
    const instanceId = await insertInstance(context.db);
    await insertSubscription(context.db, instanceId, ['contact.handoff']);
    const id = await newContact(instanceId, { waId: '5511900000162' });
    const ana = { accountId: randomUUID(), displayName: 'Ana Souza' };
    await store.startHandoff(id, FUTURE, 'Ana answers', 'person', ana);
    // Another person takes the same pause over: same until, same kind of author.
    await context.db.query(
      `UPDATE contacts SET handoff_account_id = NULL, handoff_account_name = 'admin' WHERE id = $1`,
      [id],
    );
    await store.endHandoff(id, 'person', false, [], ana);

    const written = await eventsOf(instanceId, 'contact.handoff');
    expect(written.map((event) => [event.data.by, event.data.paused, event.data.account])).toEqual([
      ['person', true, { id: ana.accountId, display_name: 'Ana Souza' }],
      ['person', true, { id: null, display_name: 'admin' }],
      ['person', false, { id: ana.accountId, display_name: 'Ana Souza' }],
    ]);
  });

  it('writes the events of a statement that changes several pauses at once in contact order', async () => {
    const instanceId = await insertInstance(context.db);
    await insertSubscription(context.db, instanceId, ['contact.handoff']);
    const ids = [
      await newContact(instanceId, { waId: '5511900000163' }),
      await newContact(instanceId, { waId: '5511900000164' }),
      await newContact(instanceId, { waId: '5511900000165' }),
    ];
    await context.db.query(
      `UPDATE contacts SET handoff_until = now() + interval '1 hour', handoff_by = 'admin'
       WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    const written = await eventsOf(instanceId, 'contact.handoff');
    expect(written.map((event) => event.lane)).toEqual(
      [...ids].sort().map((id) => `contact:${id}`),
    );
  });

  it('writes nothing for other changes of the contact, nor for an instance no subscription wants it of', async () => {
    const instanceId = await insertInstance(context.db);
    await insertSubscription(context.db, instanceId, ['contact.handoff']);
    const id = await newContact(instanceId, { waId: '5511900000161' });
    await context.db.query(
      `UPDATE contacts SET name = 'Renamed', handoff_reason = 'x' WHERE id = $1`,
      [id],
    );
    expect(await eventsOf(instanceId, 'contact.handoff')).toEqual([]);

    const unwatched = await insertInstance(context.db);
    await insertSubscription(context.db, unwatched, ['message.received']);
    const other = await newContact(unwatched, { waId: '5511900000162' });
    await store.startHandoff(other, FUTURE, 'a person', 'api');
    expect(await eventsOf(unwatched, 'contact.handoff')).toEqual([]);
    expect(await contact(other)).toMatchObject({ handoff_until: FUTURE });
  });
});

describe('mc_contact_activity', () => {
  it('dates a contact by its last message either way or its imported history; one with none lists last', async () => {
    const instanceId = await insertInstance(context.db);
    const messages = new MessageStore(context.source);
    const [talked, imported, booked] = [
      await newContact(instanceId, { waId: '5511900000401' }),
      await newContact(instanceId, { waId: '5511900000402' }),
      await newContact(instanceId, { waId: '5511900000403' }),
    ];
    await context.db.query(
      `UPDATE contacts SET last_inbound_at = '2026-11-20T10:00:00Z' WHERE id = $1`,
      [talked],
    );
    await messages.insertImported(instanceId, [
      {
        wamid: `wamid.${randomUUID()}`,
        direction: 'inbound',
        contact: '5511900000402',
        contactId: imported,
        type: 'text',
        body: { text: { body: 'from the phone' } },
        status: 'received',
        sentAt: new Date('2026-10-01T10:00:00Z'),
      },
    ]);
    const listed = async () =>
      (await store.listContacts(instanceId, undefined, null, 10)).map((c) => c.id);
    // The phone book's contact, created last, with nothing said: last.
    expect(await listed()).toEqual([talked, imported, booked]);
    expect(await contact(imported)).toMatchObject({
      last_imported_at: new Date('2026-10-01T10:00:00Z'),
      last_inbound_at: null,
      last_activity_at: new Date('2026-10-01T10:00:00Z'),
    });
    expect((await contact(booked))!.last_activity_at).toEqual(new Date(0));
    // A send to the phone book's contact: now it is the latest.
    await messages.insertOutbound([
      {
        instanceId,
        address: '5511900000403',
        byNumber: true,
        sentBy: 'api',
        type: 'text',
        body: { text: { body: 'Oi' } },
        wamid: `wamid.${randomUUID()}`,
      },
    ]);
    expect(await listed()).toEqual([booked, talked, imported]);
  });
});
