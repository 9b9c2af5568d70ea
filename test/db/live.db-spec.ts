import { randomUUID } from 'node:crypto';
import type { Client, Notification } from 'pg';
import type { AppConfig } from '../../src/config/app-config.js';
import { ContactStore } from '../../src/contacts/contact.store.js';
import { LIVE_CHANNEL, LIVE_IDS_PER_NOTICE } from '../../src/live/live.functions.sql.js';
import { LiveStore, type LiveNotice } from '../../src/live/live.store.js';
import { MessageStore } from '../../src/messages/message.store.js';
import { waitFor, waitUntil } from '../support/wait.js';
import { insertContact, insertInstance, useMigratedDatabase } from './support.js';

const context = useMigratedDatabase();
let store: LiveStore;
let listener: Client;
const heard: Array<{ k: string; i: string; ids: string[] }> = [];

beforeAll(async () => {
  store = new LiveStore(context.source, { DATABASE_URL: context.db.url } as AppConfig);
  listener = await context.client();
  listener.on('notification', (n: Notification) => {
    if (n.channel === LIVE_CHANNEL) heard.push(JSON.parse(n.payload!) as (typeof heard)[number]);
  });
  await listener.query(`LISTEN ${LIVE_CHANNEL}`);
});

beforeEach(async () => {
  await context.db.query('DELETE FROM live_listeners');
  heard.length = 0;
});

/** A live_listeners row for each instance, for a process of its own. */
async function watch(...instanceIds: string[]): Promise<string> {
  const processId = randomUUID();
  await store.renew(processId, instanceIds, 60);
  return processId;
}

/** What was heard once a marker notification sent after `act` arrived (notifications keep commit order). */
async function heardAfter(act: () => Promise<unknown>): Promise<typeof heard> {
  await act();
  const marker = randomUUID();
  await context.db.query(`SELECT pg_notify($1, $2)`, [
    LIVE_CHANNEL,
    JSON.stringify({ k: 'marker', i: marker, ids: [] }),
  ]);
  await waitFor(() => heard.some((n) => n.i === marker));
  return heard.splice(0).filter((n) => n.k !== 'marker');
}

describe('LiveStore', () => {
  describe('renew and release', () => {
    it("keeps a process's rows for the instances it names, and only those; release forgets them", async () => {
      const [a, b] = [await insertInstance(context.db), await insertInstance(context.db)];
      const processId = randomUUID();
      const other = await watch(a);
      await store.renew(processId, [a, b, randomUUID()], 60);
      const rows = async () =>
        (
          await context.db.query<{ instance_id: string; process_id: string }>(
            'SELECT instance_id, process_id FROM live_listeners ORDER BY process_id, instance_id',
          )
        ).map((r) => `${r.process_id}:${r.instance_id}`);
      expect(await rows()).toEqual(
        [`${processId}:${a}`, `${processId}:${b}`, `${other}:${a}`].sort(),
      );
      await store.renew(processId, [b], 60);
      expect(await rows()).toEqual([`${processId}:${b}`, `${other}:${a}`].sort());
      await store.release(processId);
      expect(await rows()).toEqual([`${other}:${a}`]);
    });
  });

  describe('waitForOlderTransactions', () => {
    it('waits for a transaction that began before, not for one that began after', async () => {
      const older = await context.client();
      await older.query('BEGIN');
      await older.query('SELECT 1');
      const at = await store.renew(randomUUID(), [], 60);
      const newer = await context.client();
      await newer.query('BEGIN');
      await newer.query('SELECT 1');
      expect(await store.waitForOlderTransactions(at, 200)).toBe(false);
      await older.query('COMMIT');
      expect(await store.waitForOlderTransactions(at, 5000)).toBe(true);
      await newer.query('COMMIT');
    });
  });

  describe('listen', () => {
    it('hears what commits, and listens again after losing its connection', async () => {
      const instanceId = await insertInstance(context.db);
      const notices: LiveNotice[] = [];
      let connections = 0;
      const listening = store.listen(
        (notice) => notices.push(notice),
        () => connections++,
      );
      try {
        await waitFor(() => connections === 1);
        const id = randomUUID();
        await context.db.query(`SELECT mc_live_notify('contact', $1::uuid[], $2::uuid[])`, [
          [instanceId],
          [id],
        ]);
        // None: nobody watches the instance. Then one that does.
        await watch(instanceId);
        await context.db.query(`SELECT mc_live_notify('contact', $1::uuid[], $2::uuid[])`, [
          [instanceId],
          [id],
        ]);
        await waitFor(() => notices.length === 1);
        expect(notices).toEqual([{ kind: 'contact', instanceId, ids: [id] }]);

        await context.db.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE datname = current_database() AND query = 'LISTEN ${LIVE_CHANNEL}'
             AND pid <> $1`,
          [(listener as unknown as { processID: number }).processID],
        );
        await waitFor(() => connections === 2);
        await context.db.query(`SELECT mc_live_notify('message', $1::uuid[], $2::uuid[])`, [
          [instanceId],
          [id],
        ]);
        await waitFor(() => notices.length === 2);
        expect(notices[1]).toEqual({ kind: 'message', instanceId, ids: [id] });
      } finally {
        await listening.close();
      }
    });
  });
});

describe('mc_live_notify', () => {
  it('notifies per watched instance, in order, in notices of at most LIVE_IDS_PER_NOTICE ids', async () => {
    const [watched, unwatched] = [
      await insertInstance(context.db),
      await insertInstance(context.db),
    ];
    await watch(watched);
    const ids = Array.from({ length: LIVE_IDS_PER_NOTICE * 2 }, () => randomUUID());
    const notices = await heardAfter(() =>
      context.db.query(`SELECT mc_live_notify('message', $1::uuid[], $2::uuid[])`, [
        ids.map((_, n) => (n % 3 === 0 ? unwatched : watched)),
        ids,
      ]),
    );
    const expected = ids.filter((_, n) => n % 3 !== 0);
    expect(expected.length).toBeGreaterThan(LIVE_IDS_PER_NOTICE);
    expect(notices.map((n) => [n.k, n.i])).toEqual([
      ['message', watched],
      ['message', watched],
    ]);
    expect(notices.flatMap((n) => n.ids)).toEqual(expected);
    expect(notices[0].ids).toHaveLength(LIVE_IDS_PER_NOTICE);
  });

  it('says nothing when nobody watches, when a row expired, or when a transaction rolls back', async () => {
    const instanceId = await insertInstance(context.db);
    const call = () =>
      context.db.query(`SELECT mc_live_notify('contact', $1::uuid[], $2::uuid[])`, [
        [instanceId],
        [randomUUID()],
      ]);
    expect(await heardAfter(call)).toEqual([]);
    await context.db.query(
      `INSERT INTO live_listeners (instance_id, process_id, expires_at)
       VALUES ($1, $2, now() - interval '1 second')`,
      [instanceId, randomUUID()],
    );
    expect(await heardAfter(call)).toEqual([]);
    await watch(instanceId);
    const rolledBack = await context.client();
    expect(
      await heardAfter(async () => {
        await rolledBack.query('BEGIN');
        await rolledBack.query(`SELECT mc_live_notify('contact', $1::uuid[], $2::uuid[])`, [
          [instanceId],
          [randomUUID()],
        ]);
        await rolledBack.query('ROLLBACK');
      }),
    ).toEqual([]);
  });
});

describe('mc_messages_inserted (live)', () => {
  it('tells imported history as its contacts, once each, and a live message as itself', async () => {
    const instanceId = await insertInstance(context.db);
    await watch(instanceId);
    const [ana, bia] = [
      await insertContact(context.db, instanceId, { waId: '5511900000311' }),
      await insertContact(context.db, instanceId, { waId: '5511900000312' }),
    ];
    const messages = new MessageStore(context.source);
    const imported = (contactId: string, contact: string, n: number) =>
      Array.from({ length: n }, (_, k) => ({
        wamid: `wamid.${randomUUID()}`,
        direction: k % 2 === 0 ? ('inbound' as const) : ('outbound' as const),
        contact,
        contactId,
        type: 'text',
        body: { text: { body: `old ${k}` } },
        status: 'read',
        sentAt: new Date(Date.now() - 86_400_000 + k * 1000),
      }));
    const history = await heardAfter(() =>
      messages.insertImported(instanceId, [
        ...imported(ana, '5511900000311', 30),
        ...imported(bia, '5511900000312', 30),
      ]),
    );
    expect(history).toEqual([{ k: 'contact', i: instanceId, ids: [ana, bia].sort() }]);
    const live = await heardAfter(() =>
      messages.insertOutbound([
        {
          instanceId,
          address: '5511900000311',
          byNumber: true,
          contactId: ana,
          sentBy: 'api',
          type: 'text',
          body: { text: { body: 'Oi' } },
          wamid: `wamid.${randomUUID()}`,
        },
      ]),
    );
    expect(live).toEqual([{ k: 'message', i: instanceId, ids: [expect.any(String)] }]);
  });
});

describe('mc_contacts_live', () => {
  it('notifies a change the inbox shows (pause, opt-outs, names, read mark), not a new last message time', async () => {
    const instanceId = await insertInstance(context.db);
    await watch(instanceId);
    const contacts = new ContactStore(context.source);
    const id = await insertContact(context.db, instanceId, { waId: '5511900000301' });
    const paused = await heardAfter(() =>
      contacts.startHandoff(id, new Date(Date.now() + 60_000), 'a person', 'api'),
    );
    expect(paused).toEqual([{ k: 'contact', i: instanceId, ids: [id] }]);
    const optedOut = await heardAfter(() =>
      context.db.query('UPDATE contacts SET opted_out_at = now() WHERE id = $1', [id]),
    );
    expect(optedOut).toHaveLength(1);
    const renamed = await heardAfter(() =>
      context.db.query(`UPDATE contacts SET name = 'Rita' WHERE id = $1`, [id]),
    );
    expect(renamed).toHaveLength(1);
    const stoppedMarketing = await heardAfter(() =>
      contacts.setMarketingPreference(instanceId, '5511900000301', true, new Date()),
    );
    expect(stoppedMarketing).toEqual([{ k: 'contact', i: instanceId, ids: [id] }]);
    const inTheBook = await heardAfter(() =>
      contacts.setPhoneNames(instanceId, [
        { waId: '5511900000301', name: 'Rita (agenda)', at: new Date() },
      ]),
    );
    expect(inTheBook).toHaveLength(1);
    const wamid = `wamid.${randomUUID()}`;
    // (its own notice is heard here, not with the read below)
    await heardAfter(() =>
      new MessageStore(context.source).insertOutbound([
        {
          instanceId,
          address: '5511900000301',
          byNumber: true,
          contactId: id,
          sentBy: 'api',
          type: 'text',
          body: { text: { body: 'Oi' } },
          wamid,
        },
      ]),
    );
    const read = await heardAfter(() => contacts.markRead(id, wamid));
    expect(read).toEqual([{ k: 'contact', i: instanceId, ids: [id] }]);
    const quiet = await heardAfter(() =>
      context.db.query('UPDATE contacts SET last_inbound_at = now() WHERE id = $1', [id]),
    );
    expect(quiet).toEqual([]);
  });
});

describe('the live notices of messages (mc_messages_inserted, mc_messages_updated)', () => {
  it('notifies a stored message and a status, not a turn taking the message', async () => {
    const instanceId = await insertInstance(context.db);
    await watch(instanceId);
    const messages = new MessageStore(context.source);
    const contactId = await insertContact(context.db, instanceId, { waId: '5511900000302' });
    const wamid = `wamid.${randomUUID()}`;
    const stored = await heardAfter(() =>
      messages.insertOutbound([
        {
          instanceId,
          address: '5511900000302',
          byNumber: true,
          sentBy: 'api',
          type: 'text',
          body: { text: { body: 'Oi' } },
          wamid,
        },
      ]),
    );
    const [{ id }] = await context.db.query<{ id: string }>(
      'SELECT id FROM messages WHERE wamid = $1',
      [wamid],
    );
    expect(stored).toEqual([{ k: 'message', i: instanceId, ids: [id] }]);
    const delivered = await heardAfter(() =>
      messages.applyStatuses(instanceId, [
        { wamid, recipient: '5511900000302', status: 'delivered', errors: null },
      ]),
    );
    expect(delivered).toEqual([{ k: 'message', i: instanceId, ids: [id] }]);
    const claimed = await heardAfter(() =>
      context.db.query('UPDATE messages SET awaiting_turn = false WHERE contact_id = $1', [
        contactId,
      ]),
    );
    expect(claimed).toEqual([]);
    expect(await waitUntil(() => heard.length > 0, 100)).toBe(false);
  });
});
