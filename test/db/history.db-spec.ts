import { HistoryStore } from '../../src/history/history.store.js';
import { MessageStore } from '../../src/messages/message.store.js';
import {
  insertContact,
  insertInstance,
  insertSubscription,
  useMigratedDatabase,
} from './support.js';

const context = useMigratedDatabase();
let history: HistoryStore;
let messages: MessageStore;

beforeAll(async () => {
  history = new HistoryStore(context.source);
  messages = new MessageStore(context.source);
  await insertSubscription(context.db, null, [
    'history.imported',
    'message.received',
    'message.sent',
  ]);
});

/** A chunk's messages for one contact: `n` of them, named by `tag`. */
function chunkRows(contactId: string, waId: string, tag: string, n: number) {
  return Array.from({ length: n }, (_, k) => ({
    wamid: `wamid.${tag}-${k}`,
    direction: k % 2 === 0 ? ('inbound' as const) : ('outbound' as const),
    contact: waId,
    contactId,
    type: 'text',
    body: { text: { body: `${tag} ${k}` } },
    status: 'read',
    sentAt: new Date(Date.UTC(2026, 8, 1, 10, 0, k)),
  }));
}

describe('HistoryStore', () => {
  it('importChunk, summary: each chunk once, with what it stored; the furthest phase and its progress', async () => {
    const instanceId = await insertInstance(context.db);
    const contactId = await insertContact(context.db, instanceId, { waId: '5511955550002' });
    expect(await history.summary(instanceId)).toEqual({
      chunks: 0,
      messages: 0,
      phase: null,
      progress: null,
    });
    const importing = (phase: number, chunkOrder: number, progress: number, n: number) => {
      const rows = chunkRows(contactId, '5511955550002', `S${phase}-${chunkOrder}`, n);
      return history.importChunk(
        instanceId,
        { phase, chunkOrder, progress, messages: n },
        (manager) => messages.insertImported(instanceId, rows, manager),
      );
    };
    expect(await importing(0, 1, 100, 10)).toBe(10);
    expect(await importing(0, 1, 100, 10)).toBeNull();
    expect(await importing(1, 1, 30, 5)).toBe(5);
    expect(await importing(1, 2, 60, 5)).toBe(5);
    expect(await history.summary(instanceId)).toEqual({
      chunks: 3,
      messages: 20,
      phase: 1,
      progress: 60,
    });
  });

  it('importChunk: a re-delivery racing the first waits for it, so the chunk is recorded once with all it stored (50 rounds)', async () => {
    const instanceId = await insertInstance(context.db);
    const contactId = await insertContact(context.db, instanceId, { waId: '5511955550003' });
    for (let round = 0; round < 50; round++) {
      const rows = chunkRows(contactId, '5511955550003', `R${round}`, 20);
      const results = await Promise.all(
        [0, 1].map(() =>
          history.importChunk(
            instanceId,
            { phase: 1, chunkOrder: round, progress: 50, messages: 20 },
            (manager) => messages.insertImported(instanceId, rows, manager),
          ),
        ),
      );
      expect(results.sort()).toEqual([20, null]);
      const [chunk] = await context.db.query<{ stored: number }>(
        'SELECT stored FROM history_chunks WHERE instance_id = $1 AND chunk_order = $2',
        [instanceId, round],
      );
      expect(chunk.stored).toBe(20);
    }
  });

  it('importChunk: a chunk whose messages fail is not recorded (its next delivery imports it)', async () => {
    const instanceId = await insertInstance(context.db);
    const failing = history.importChunk(
      instanceId,
      { phase: 0, chunkOrder: 1, progress: 10, messages: 1 },
      () => Promise.reject(new Error('refused')),
    );
    await expect(failing).rejects.toThrow('refused');
    expect((await history.summary(instanceId)).chunks).toBe(0);
  });
});

describe('mc_history_imported', () => {
  it('writes a history.imported event per chunk recorded, none for a re-delivery', async () => {
    const instanceId = await insertInstance(context.db);
    const chunk = { phase: 2, chunkOrder: 7, progress: 90, messages: 3 };
    await history.importChunk(instanceId, chunk, () => Promise.resolve(2));
    await history.importChunk(instanceId, chunk, () => Promise.resolve(0));
    const events = await context.db.query<{ data: Record<string, unknown> }>(
      `SELECT data FROM events WHERE type = 'history.imported' AND instance_id = $1`,
      [instanceId],
    );
    expect(events).toEqual([
      {
        data: {
          phase: 2,
          chunk_order: 7,
          progress: 90,
          messages: 3,
          stored: 2,
          at: expect.any(String),
        },
      },
    ]);
  });
});

describe('MessageStore.insertImported', () => {
  it('stores each message once, imported, waiting for no turn, with no message event', async () => {
    const instanceId = await insertInstance(context.db);
    const contactId = await insertContact(context.db, instanceId, { waId: '5511955550001' });
    const row = (wamid: string, direction: 'inbound' | 'outbound') => ({
      wamid,
      direction,
      contact: '5511955550001',
      contactId,
      type: 'text',
      body: { text: { body: wamid } },
      status: direction === 'inbound' ? 'received' : 'read',
      sentAt: new Date('2026-09-01T10:00:00Z'),
    });
    const rows = [row('wamid.I1', 'inbound'), row('wamid.I2', 'outbound')];
    expect(await messages.insertImported(instanceId, rows)).toBe(2);
    expect(await messages.insertImported(instanceId, rows)).toBe(0);
    const stored = await context.db.query(
      `SELECT wamid, direction, imported, awaiting_turn, sent_by, status FROM messages
       WHERE instance_id = $1 ORDER BY wamid`,
      [instanceId],
    );
    expect(stored).toEqual([
      {
        wamid: 'wamid.I1',
        direction: 'inbound',
        imported: true,
        awaiting_turn: false,
        sent_by: null,
        status: 'received',
      },
      {
        wamid: 'wamid.I2',
        direction: 'outbound',
        imported: true,
        awaiting_turn: false,
        sent_by: 'phone_app',
        status: 'read',
      },
    ]);
    const [{ n }] = await context.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE instance_id = $1 AND type LIKE 'message.%'`,
      [instanceId],
    );
    expect(n).toBe(0);
  });
});
