import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeAgent } from './support/fake-agent.js';
import {
  FakePlatform,
  deliverSigned,
  envelope,
  platformError,
  type WebhookTarget,
} from './support/fake-platform.js';
import {
  APP_SECRET,
  TestDatabase,
  adminToken,
  createApiKey,
  createInstance,
  http,
  startTestApp,
  type TestApp,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352200301';

let sequence = 0;
function text(
  from: string,
  body: string,
  timestamp: string | number = Math.floor(Date.now() / 1000),
) {
  return {
    from,
    id: `wamid.turn${Date.now()}-${++sequence}`,
    timestamp: String(timestamp),
    type: 'text',
    text: { body },
  };
}

interface TurnBody {
  id: string;
  instance_id: string;
  contact: { id: string; wa_id: string | null; user_id: string | null; name: string | null };
  status: string;
  attempts: number;
  last_error: string | null;
  message_ids: string[];
  parts: Array<{
    position: number;
    kind: string;
    status: string;
    wamid: string | null;
    error: string | null;
  }>;
}

describe('durable turns: outages of the agent and the platform, poison, order, dead letters', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let agent: FakeAgent;
  let service: TestApp;
  let jwt: string;
  let instanceId: string;
  let target: WebhookTarget;

  const deliver = async (messages: unknown[], contacts: unknown[] = []) => {
    expect(await deliverSigned(target, envelope(target, 'messages', { contacts, messages }))).toBe(
      200,
    );
  };
  /** Messages the platform accepted for a recipient (typing indicators aside). */
  const accepted = (to: string) => platform.accepted.filter((a) => a.message.to === to);
  const sendAttempts = (to: string) =>
    platform.sentMessages().filter((message) => message.to === to && message.type);
  const turnsOf = (contact: string) =>
    db.query<{ id: string; status: string; attempts: number; last_error: string | null }>(
      `SELECT t.id, t.status, t.attempts, t.last_error FROM turns t
       JOIN contacts c ON c.id = t.contact_id WHERE c.wa_id = $1 ORDER BY t.created_at`,
      [contact],
    );

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
    agent = await FakeAgent.start();
    service = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      PLATFORM_APP_SECRET: APP_SECRET,
      AGENT_MODULE_URL: agent.url,
      AGENT_TYPING_INDICATOR: 'false',
      MESSAGE_BUFFER_DELAY: '0.3',
      MESSAGE_BUFFER_MAX_WAIT: '2',
      TURN_LEASE_S: '2',
      SWEEP_INTERVAL_S: '1',
      AGENT_RETRY_MAX_S: '120',
      REPLY_RETRY_MAX_S: '120',
    });
    jwt = await adminToken(service.url);
    instanceId = await createInstance(service.url, jwt, PHONE_NUMBER_ID);
    target = {
      url: `${service.url}/webhooks/messenger`,
      appSecret: APP_SECRET,
      phoneNumberId: PHONE_NUMBER_ID,
    };
  });

  afterAll(async () => {
    await service?.close();
    await agent?.stop();
    await platform?.stop();
    await db?.drop();
  });

  beforeEach(() => {
    agent.reset();
    platform.reset();
  });

  it('waits out an agent that refuses connections for 20 s, then completes the turn', async () => {
    const from = '5511900000001';
    await agent.down();
    await deliver([text(from, 'are you there?')]);
    await sleep(20_000);
    // Still open and retrying; nothing was lost or given up.
    const [waiting] = await turnsOf(from);
    expect(waiting.status).toBe('calling');
    expect(waiting.attempts).toBeGreaterThanOrEqual(4);
    expect(waiting.last_error).toMatch(/ECONNREFUSED/);
    await agent.up();
    await waitFor(() => accepted(from).length === 1, 15_000);
    expect(agent.callsFor(from)).toHaveLength(1);
    expect(agent.callsFor(from)[0].body.batch_id).toBe(waiting.id);
    await sleep(500);
    expect(accepted(from)).toHaveLength(1);
    expect((await turnsOf(from))[0].status).toBe('done');
  }, 60_000);

  it('honours Retry-After when the agent answers 429', async () => {
    const from = '5511900000002';
    agent.answerNext({ status: 429, headers: { 'retry-after': '2' }, body: {} });
    await deliver([text(from, 'slow down')]);
    await waitFor(() => accepted(from).length === 1, 10_000);
    // Called once more, no sooner than the 2 s asked for (measured from the first
    // call's arrival, before its answer), with the same key.
    expect(agent.callsFor(from)).toHaveLength(2);
    const [first, second] = agent.callsFor(from);
    expect(second.at - first.at).toBeGreaterThanOrEqual(1900);
    expect(second.headers['idempotency-key']).toBe(first.headers['idempotency-key']);
  });

  it('sends the reply once, after the platform answered 503 for 15 s', async () => {
    const from = '5511900000003';
    const outageEnds = Date.now() + 15_000;
    platform.on('POST', /\/messages$/, (request) => {
      const message = request.body as { to?: string };
      return message.to === from && Date.now() < outageEnds ? { status: 503, body: {} } : undefined;
    });
    await deliver([text(from, 'hello?')]);
    await waitFor(() => accepted(from).length === 1, 40_000);
    expect(Date.now()).toBeGreaterThanOrEqual(outageEnds);
    // Retried through the outage (each attempt is refused before anything is sent).
    expect(sendAttempts(from).length).toBeGreaterThan(3);
    await sleep(1000);
    expect(accepted(from)).toHaveLength(1);
    const [turn] = await turnsOf(from);
    expect(turn.status).toBe('done');
    const [part] = await db.query<{ status: string; wamid: string }>(
      'SELECT status, wamid FROM turn_parts WHERE turn_id = $1',
      [turn.id],
    );
    expect(part).toEqual({ status: 'sent', wamid: accepted(from)[0].wamid });
    const stored = await http<{ status: string }>(service.url, 'GET', `/messages/${part.wamid}`, {
      token: await apiKey(),
    });
    expect(stored.body.status).toBe('sent');
  }, 60_000);

  it("keeps a contact's new messages for the next turn while its turn retries", async () => {
    const from = '5511900000009';
    agent.answerNext({ status: 503 }, { status: 503 });
    await deliver([text(from, 'first')]);
    await waitFor(() => agent.callsFor(from).length === 1);
    await deliver([text(from, 'second')]);
    await waitFor(() => accepted(from).length === 2, 15_000);
    const calls = agent.callsFor(from);
    // The retried turn keeps its one message; the second waits for the next turn.
    expect(calls.map((call) => call.body.messages.map((m) => m.text))).toEqual([
      ['first'],
      ['first'],
      ['first'],
      ['second'],
    ]);
    expect(new Set(calls.slice(0, 3).map((call) => call.body.batch_id)).size).toBe(1);
    expect(calls[3].body.batch_id).not.toBe(calls[0].body.batch_id);
    expect(accepted(from).map((a) => (a.message.text as { body: string }).body)).toEqual([
      'echo: first',
      'echo: second',
    ]);
  });

  it('marks a reply part uncertain when its POST got no answer, and never repeats it', async () => {
    const from = '5511900000010';
    platform.on('POST', /\/messages$/, (request) =>
      (request.body as { to?: string }).to === from ? { hang: true } : undefined,
    );
    await deliver([text(from, 'no answer from the platform')]);
    await waitFor(async () => (await turnsOf(from))[0]?.status === 'done', 10_000);
    await sleep(1500);
    expect(sendAttempts(from)).toHaveLength(1);
    const detail = await http<TurnBody>(
      service.url,
      'GET',
      `/admin/turns/${(await turnsOf(from))[0].id}`,
      { token: jwt },
    );
    expect(detail.body.parts).toEqual([
      expect.objectContaining({
        status: 'uncertain',
        wamid: null,
        error: expect.stringMatching(/may have been sent/),
      }),
    ]);
  });

  it('stores the good messages of a delivery with a poison one, and they reach the agent', async () => {
    const from = '5511900000004';
    const good1 = text(from, 'first good');
    const badTime = text(from, 'bad time', '99999999999999999');
    const nul = text(from, 'nul\u0000inside');
    const good2 = text(from, 'second good');
    const noSender = {
      id: `wamid.nosender${Date.now()}`,
      timestamp: '1',
      type: 'text',
      text: { body: 'x' },
    };
    const before = Date.now();
    await deliver(
      [good1, noSender, badTime, nul, good2],
      [{ wa_id: from, profile: { name: 'P' } }],
    );
    await waitFor(() => agent.callsFor(from).length === 1);
    const given = agent.callsFor(from)[0].body.messages.map((m) => m.id);
    expect(new Set(given)).toEqual(new Set([good1.id, badTime.id, nul.id, good2.id]));
    expect(agent.callsFor(from)[0].body.messages.find((m) => m.id === nul.id)?.text).toBe(
      'nulinside',
    );
    // The bad timestamp fell back to the time it arrived.
    const [row] = await db.query<{ created_at: Date }>(
      'SELECT created_at FROM messages WHERE wamid = $1',
      [badTime.id],
    );
    expect(row.created_at.getTime()).toBeGreaterThanOrEqual(before);
    expect(row.created_at.getTime()).toBeLessThanOrEqual(Date.now());
    expect(await db.query('SELECT 1 FROM messages WHERE wamid = $1', [noSender.id])).toHaveLength(
      0,
    );
  });

  it('flushes messages an earlier attempt of a delivery stored but never scheduled', async () => {
    const from = '5511900000005';
    const message = text(from, 'stored, then the worker died');
    // As an attempt that stored the message and died before scheduling its flush would leave it.
    await db.query(
      `INSERT INTO messages (instance_id, wamid, direction, contact, contact_id, type, body, status,
         created_at, awaiting_turn)
       VALUES ($1, $2, 'inbound', $3::text, mc_resolve_contact($1, $3::text, NULL, NULL, NULL, NULL, now()),
         'text', $4, 'received', now(), true)`,
      [instanceId, message.id, from, JSON.stringify(message)],
    );
    await deliver([message]);
    await waitFor(() => agent.callsFor(from).length === 1, 5000);
    expect(agent.callsFor(from)[0].body.messages.map((m) => m.id)).toEqual([message.id]);
  });

  it('gives messages that share a timestamp to the agent in the order they arrived', async () => {
    const from = '5511900000006';
    const second = Math.floor(Date.now() / 1000);
    // Wamids that sort the other way round, so only arrival order can put them right.
    const messages = ['one', 'two', 'three', 'four', 'five'].map((body, i) => ({
      ...text(from, body, second),
      id: `wamid.order-${9 - i}-${randomUUID()}`,
    }));
    await deliver(messages.slice(0, 3));
    await deliver([messages[3]]);
    await deliver([messages[4]]);
    await waitFor(() => agent.callsFor(from).length === 1);
    expect(agent.callsFor(from)[0].body.messages.map((m) => m.text)).toEqual([
      'one',
      'two',
      'three',
      'four',
      'five',
    ]);
  });

  it('lists a failed turn as a dead letter and runs it again with the same batch_id', async () => {
    const from = '5511900000007';
    agent.answerNext({ status: 400, body: { error: 'cannot parse' } });
    const message = text(from, 'please answer');
    await deliver([message]);
    await waitFor(async () => (await turnsOf(from))[0]?.status === 'failed');
    expect(agent.callsFor(from)).toHaveLength(1);
    expect(accepted(from)).toHaveLength(0);

    const listed = await http<{ data: TurnBody[]; next_cursor: string | null }>(
      service.url,
      'GET',
      `/admin/turns?status=failed&contact=${from}`,
      { token: jwt },
    );
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    const [failed] = listed.body.data;
    expect(failed).toMatchObject({
      instance_id: instanceId,
      contact: { wa_id: from, user_id: null },
      status: 'failed',
      attempts: 1,
      last_error: 'agent answered HTTP 400',
      message_ids: [message.id],
      parts: [],
    });
    expect(failed.id).toBe(agent.callsFor(from)[0].body.batch_id);

    const retried = await http<TurnBody>(service.url, 'POST', `/admin/turns/${failed.id}/retry`, {
      token: jwt,
    });
    expect(retried.status).toBe(200);
    expect(['claimed', 'calling', 'answered', 'sending', 'done']).toContain(retried.body.status);
    await waitFor(() => accepted(from).length === 1);
    expect(agent.callsFor(from)[1].body.batch_id).toBe(failed.id);
    expect(agent.callsFor(from)[1].body.messages.map((m) => m.id)).toEqual([message.id]);
    await waitFor(async () => (await turnsOf(from))[0].status === 'done');
    const done = await http<TurnBody>(service.url, 'GET', `/admin/turns/${failed.id}`, {
      token: jwt,
    });
    expect(done.body).toMatchObject({ status: 'done', attempts: 2, last_error: null });
    expect(done.body.parts).toEqual([
      expect.objectContaining({ kind: 'text', status: 'sent', wamid: accepted(from)[0].wamid }),
    ]);

    const again = await http(service.url, 'POST', `/admin/turns/${failed.id}/retry`, {
      token: jwt,
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'turn_not_retryable' });
  });

  it('fails a reply part the platform refuses, keeps the turn, and an operator retry sends it', async () => {
    const from = '5511900000008';
    platform.on('POST', /\/messages$/, platformError(131026, 'Message undeliverable'), {
      status: 200,
      body: { messages: [{ id: `wamid.retried-${randomUUID()}` }] },
    });
    agent.answerNext({
      body: {
        replies: [
          { send: 'text', body: 'part one' },
          { send: 'interactive', type: 'buttons', body: 'x', buttons: [] },
        ],
      },
    });
    await deliver([text(from, 'two parts please')]);
    await waitFor(async () => (await turnsOf(from))[0]?.status === 'failed');
    const [turn] = await turnsOf(from);
    expect(turn.last_error).toMatch(/^reply part 0: .*Message undeliverable/);
    const detail = await http<TurnBody>(service.url, 'GET', `/admin/turns/${turn.id}`, {
      token: jwt,
    });
    expect(detail.body.parts).toEqual([
      expect.objectContaining({ position: 0, status: 'failed' }),
      expect.objectContaining({ position: 1, status: 'skipped', error: 'invalid: buttons' }),
    ]);

    expect(
      (await http(service.url, 'POST', `/admin/turns/${turn.id}/retry`, { token: jwt })).status,
    ).toBe(200);
    await waitFor(async () => (await turnsOf(from))[0].status === 'done');
    expect(agent.callsFor(from)).toHaveLength(1);
    expect(sendAttempts(from).map((m) => (m.text as { body: string }).body)).toEqual([
      'part one',
      'part one',
    ]);
  });

  it('pages through turns with a cursor and checks its filters', async () => {
    const page = (query: string) =>
      http<{ data: TurnBody[]; next_cursor: string | null }>(
        service.url,
        'GET',
        `/admin/turns${query}`,
        { token: jwt },
      );
    const all = await page(`?instance_id=${instanceId}&limit=100`);
    expect(all.body.data.length).toBeGreaterThanOrEqual(6);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const next = await page(
        `?instance_id=${instanceId}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(next.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...next.body.data.map((turn) => turn.id));
      cursor = next.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.body.data.map((turn) => turn.id));

    expect((await page('?status=sleeping')).status).toBe(400);
    expect((await page('?cursor=nonsense')).body).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'cursor', message: 'must be a cursor from next_cursor' }],
    });
    expect((await page(`/${randomUUID()}`)).body).toMatchObject({ code: 'turn_not_found' });
    expect((await page('/not-a-uuid')).status).toBe(400);
    expect((await http(service.url, 'GET', '/admin/turns')).status).toBe(401);
  });

  let key: string | undefined;
  async function apiKey(): Promise<string> {
    key ??= await createApiKey(service.url, jwt, instanceId, 'turns');
    return key;
  }
});
