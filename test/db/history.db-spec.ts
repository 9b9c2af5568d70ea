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

describe('HistoryStore', () => {
  it('record, summary: each chunk once; the furthest phase and its progress', async () => {
    const instanceId = await insertInstance(context.db);
    expect(await history.summary(instanceId)).toEqual({
      chunks: 0,
      messages: 0,
      phase: null,
      progress: null,
    });
    const chunk = { phase: 0, chunkOrder: 1, progress: 100, messages: 10, stored: 10 };
    expect(await history.record(instanceId, chunk)).toBe(true);
    expect(await history.record(instanceId, { ...chunk, stored: 0 })).toBe(false);
    await history.record(instanceId, {
      phase: 1,
      chunkOrder: 1,
      progress: 30,
      messages: 5,
      stored: 5,
    });
    await history.record(instanceId, {
      phase: 1,
      chunkOrder: 2,
      progress: 60,
      messages: 5,
      stored: 4,
    });
    expect(await history.summary(instanceId)).toEqual({
      chunks: 3,
      messages: 20,
      phase: 1,
      progress: 60,
    });
  });
});

describe('mc_history_imported', () => {
  it('writes a history.imported event per chunk recorded, none for a re-delivery', async () => {
    const instanceId = await insertInstance(context.db);
    const chunk = { phase: 2, chunkOrder: 7, progress: 90, messages: 3, stored: 2 };
    await history.record(instanceId, chunk);
    await history.record(instanceId, chunk);
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
