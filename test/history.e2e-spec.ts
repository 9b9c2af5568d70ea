import { EventReceiver } from './support/event-receiver.js';
import {
  simulateHistory,
  simulateMessage,
  type SimulatedHistoryMessage,
  type WebhookTarget,
} from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createApiKey,
  createInstance,
  http,
  useTestService,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352270008';
const CUSTOMERS = ['5511966660001', '5511966660002', '5511966660003'];
const LIVE = '5511966660009';

describe('history of a number shared with the phone app', () => {
  const context = useTestService({
    agent: true,
    env: { MESSAGE_BUFFER_DELAY: '1', MESSAGE_BUFFER_MAX_WAIT: '3' },
  });
  let key: string;
  let admin: string;
  let instanceId: string;
  let receiver: EventReceiver;
  const target = (): WebhookTarget => ({
    url: `${context.service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  });
  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(context.service.url, method, path, { token: key, body });

  beforeAll(async () => {
    receiver = await EventReceiver.start();
    admin = await adminToken(context.service.url);
    instanceId = await createInstance(context.service.url, admin, PHONE_NUMBER_ID, 'History');
    key = await createApiKey(context.service.url, admin, instanceId, 'history');
    const subscribed = await http(context.service.url, 'POST', '/admin/event-subscriptions', {
      token: admin,
      body: {
        url: receiver.url,
        event_types: ['message.received', 'message.sent', 'history.imported'],
      },
    });
    expect(subscribed.status).toBe(201);
  });

  afterAll(async () => {
    await receiver?.stop();
  });

  it('imports 300 messages in 3 chunks, delivered twice, once each, in order; no turn, no window, no message event; a live message meanwhile is answered', async () => {
    // Two months ago, a message a minute, the business answering every other one.
    const start = Math.floor(Date.now() / 1000) - 60 * 86_400;
    const messagesOf = (customer: number): SimulatedHistoryMessage[] =>
      Array.from({ length: 100 }, (_, n) => ({
        id: `wamid.H-${customer}-${n}`,
        text: `mensagem ${n}`,
        timestamp: start + n * 60,
        fromBusiness: n % 2 === 1,
        status: n % 4 === 1 ? 'delivered' : 'READ',
      }));
    const chunks = CUSTOMERS.map((waId, i) => ({
      phase: 1,
      chunkOrder: i + 1,
      progress: Math.round(((i + 1) / CUSTOMERS.length) * 100),
      threads: [{ waId, messages: messagesOf(i) }],
    }));
    // Out of order, and a live customer writing in the middle of it.
    expect(await simulateHistory(target(), chunks[1])).toBe(200);
    expect((await simulateMessage(target(), { waId: LIVE }, 'Oi, vocês abrem hoje?')).status).toBe(
      200,
    );
    expect(await simulateHistory(target(), chunks[0])).toBe(200);
    expect(await simulateHistory(target(), chunks[2])).toBe(200);
    // Delivered again: nothing changes.
    for (const chunk of chunks) expect(await simulateHistory(target(), chunk)).toBe(200);

    const detail = async () =>
      (
        await http<{ history: Record<string, number | null>; coexistence: boolean }>(
          context.service.url,
          'GET',
          `/admin/instances/${instanceId}`,
          { token: admin },
        )
      ).body;
    await waitFor(async () => (await detail()).history.chunks === 3, 20_000);
    expect(await detail()).toMatchObject({
      coexistence: true,
      history: { chunks: 3, messages: 300, phase: 1, progress: 100 },
    });

    // Stored once each, marked imported, in their order.
    const conversation = await api<{
      data: Array<{ wamid: string; direction: string; imported: boolean; sent_by: string | null }>;
    }>('GET', `/contacts/${CUSTOMERS[0]}/messages?limit=100`);
    expect(conversation.body.data).toHaveLength(100);
    expect(conversation.body.data.every((m) => m.imported)).toBe(true);
    const ids = conversation.body.data.map((m) => m.wamid);
    const expected = Array.from({ length: 100 }, (_, n) => `wamid.H-0-${n}`);
    // In the order they were written (the page reads newest first or oldest first).
    expect([ids, [...ids].reverse()]).toContainEqual(expected);
    expect(conversation.body.data.find((m) => m.wamid === 'wamid.H-0-1')).toMatchObject({
      direction: 'outbound',
      sent_by: 'phone_app',
    });
    const [{ n }] = await context.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM messages WHERE wamid LIKE 'wamid.H-%'`,
    );
    expect(n).toBe(300);

    // The live customer is answered; nobody from the history is.
    await waitFor(() => context.agent.calls.length >= 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(context.agent.calls.map((call) => call.body.contact.wa_id)).toEqual([LIVE]);
    // No window opened: a free text to a history customer is refused.
    const text = await api('POST', '/send/text', { to: CUSTOMERS[0], body: 'Oi!' });
    expect(text.status).toBe(422);
    expect(text.body).toMatchObject({ code: 'service_window_closed' });

    // One history.imported per chunk; no message event for the history.
    const imported = await waitFor(
      () => receiver.ofType('history.imported').length === 3,
      20_000,
    ).then(() => receiver.ofType('history.imported'));
    expect(
      imported
        .map((e) => e.event.data as { chunk_order: number; stored: number })
        .sort((a, b) => a.chunk_order - b.chunk_order),
    ).toEqual([
      expect.objectContaining({ chunk_order: 1, messages: 100, phase: 1 }),
      expect.objectContaining({ chunk_order: 2, messages: 100 }),
      expect.objectContaining({ chunk_order: 3, messages: 100, progress: 100 }),
    ]);
    const messageEvents = [
      ...receiver.ofType('message.received'),
      ...receiver.ofType('message.sent'),
    ].map((e) => (e.event.data as { message: { wamid: string } }).message.wamid);
    expect(messageEvents.filter((wamid) => wamid.startsWith('wamid.H-'))).toEqual([]);
    expect(messageEvents.length).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('imports a chunk with a value PostgreSQL cannot hold as given (a NUL, a timestamp far ahead) instead of losing it', async () => {
    const waId = '5511966660020';
    expect(
      await simulateHistory(target(), {
        phase: 0,
        chunkOrder: 9,
        progress: 100,
        threads: [
          {
            waId,
            messages: [
              { id: 'wamid.H-odd-1', text: 'com \u0000 no meio', timestamp: 99_999_999_999_999 },
              {
                id: 'wamid.H-odd-2',
                text: 'normal',
                timestamp: Math.floor(Date.now() / 1000) - 60,
              },
            ],
          },
        ],
      }),
    ).toBe(200);
    await waitFor(async () => {
      const [{ n }] = await context.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM messages WHERE wamid LIKE 'wamid.H-odd-%'`,
      );
      return n === 2;
    }, 20_000);
    const [odd] = await context.db.query<{ body: { text: { body: string } }; created_at: Date }>(
      `SELECT body, created_at FROM messages WHERE wamid = 'wamid.H-odd-1'`,
    );
    expect(odd.body.text.body).toBe('com  no meio');
    expect(odd.created_at.getTime()).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it('imports the thread of a customer who hides the number (named by user id) into their conversation', async () => {
    const userId = 'BR.HISTHIDDEN00001';
    const at = Math.floor(Date.now() / 1000) - 3600;
    expect(
      await simulateHistory(target(), {
        phase: 0,
        chunkOrder: 10,
        progress: 100,
        threads: [
          {
            userId,
            messages: [
              { id: 'wamid.H-user-1', text: 'Oi, é a Ana', timestamp: at },
              { id: 'wamid.H-user-2', text: 'Oi Ana!', timestamp: at + 60, fromBusiness: true },
            ],
          },
        ],
      }),
    ).toBe(200);
    const conversation = async () =>
      (
        await api<{ data?: Array<{ wamid: string; direction: string; sent_by: string | null }> }>(
          'GET',
          `/contacts/${userId}/messages?limit=10`,
        )
      ).body.data ?? [];
    await waitFor(async () => (await conversation()).length === 2, 20_000);
    expect(
      (await conversation()).map(({ wamid, direction, sent_by }) => ({
        wamid,
        direction,
        sent_by,
      })),
    ).toEqual(
      expect.arrayContaining([
        { wamid: 'wamid.H-user-1', direction: 'inbound', sent_by: null },
        { wamid: 'wamid.H-user-2', direction: 'outbound', sent_by: 'phone_app' },
      ]),
    );
  });

  it("gives the agent the conversation before a customer's message: history (imported, by whom) and what came after, oldest first", async () => {
    const waId = CUSTOMERS[0];
    const before = context.agent.calls.length;
    expect((await simulateMessage(target(), { waId }, 'Voltei! Ainda tem?')).status).toBe(200);
    await waitFor(
      () => context.agent.calls.slice(before).some((c) => c.body.contact.wa_id === waId),
      20_000,
    );
    const call = context.agent.calls.slice(before).find((c) => c.body.contact.wa_id === waId)!;
    const body = call.body as unknown as {
      payload_version: number;
      context: Array<{ id: string; from: string; text: string; imported: boolean }>;
      contact_state: { window: { open: boolean }; opted_out: boolean };
    };
    expect(body.payload_version).toBe(2);
    // The last 20 of the 100 imported, in their order: the customer's and the phone app's.
    expect(body.context.map((m) => m.id)).toEqual(
      Array.from({ length: 20 }, (_, n) => `wamid.H-0-${80 + n}`),
    );
    expect(body.context[0]).toEqual({
      id: 'wamid.H-0-80',
      from: 'customer',
      type: 'text',
      text: 'mensagem 80',
      timestamp: expect.any(String),
      imported: true,
    });
    expect(body.context[1]).toMatchObject({ from: 'phone_app', text: 'mensagem 81' });
    expect(body.contact_state).toMatchObject({ window: { open: true }, opted_out: false });
  });
});
