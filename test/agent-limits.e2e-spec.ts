import { randomBytes } from 'node:crypto';
import { FakeAgent } from './support/fake-agent.js';
import {
  FakePlatform,
  deliverSigned,
  envelope,
  type WebhookTarget,
} from './support/fake-platform.js';
import { startServiceProcess } from './support/service-process.js';
import {
  APP_SECRET,
  TestDatabase,
  adminToken,
  createInstance,
  http,
  readUntil,
  startTestApp,
  useTestService,
  waitFor,
} from './support/test-app.js';

const LIMIT = 3;

interface TurnBody {
  id: string;
  status: string;
  attempts: number;
  last_error: string | null;
}

let sequence = 0;

/**
 * Item 11: every agent call has a hard deadline and a size cap, and one
 * instance's slow agent cannot take the workers from the others.
 */
describe('agent calls: a hard deadline and a size cap', () => {
  const context = useTestService({
    agent: true,
    env: {
      AGENT_TIMEOUT_MS: '1000',
      AGENT_MAX_RESPONSE_BYTES: String(1024 * 1024),
      AGENT_RETRY_MAX_S: '4',
      MESSAGE_BUFFER_DELAY: '0.1',
      MESSAGE_BUFFER_MAX_WAIT: '1',
      AGENT_TYPING_INDICATOR: 'false',
    },
  });
  let global: FakeAgent;
  let token: string;
  let numbers = 0;

  beforeAll(async () => {
    global = context.agent;
    token = await adminToken(context.service.url);
  });

  beforeEach(() => {
    global.reset();
    context.platform.reset();
  });

  const newInstance = async (): Promise<string> => {
    const number = `10654035226${String(++numbers).padStart(4, '0')}`;
    await createInstance(context.service.url, token, number);
    return number;
  };
  const inbound = async (number: string, senders: string[], text: string) => {
    const target: WebhookTarget = {
      url: `${context.service.url}/webhooks/messenger`,
      appSecret: APP_SECRET,
      phoneNumberId: number,
    };
    const messages = senders.map((from) => ({
      from,
      id: `wamid.limits${++sequence}`,
      timestamp: String(Math.floor(Date.now() / 1000)),
      type: 'text',
      text: { body: text },
    }));
    expect(await deliverSigned(target, envelope(target, 'messages', { messages }))).toBe(200);
  };
  const turnsOf = async (from: string): Promise<TurnBody[]> =>
    (
      await http<{ data: TurnBody[] }>(context.service.url, 'GET', `/admin/turns?contact=${from}`, {
        token,
      })
    ).body.data;
  const repliesTo = (to: string) =>
    context.platform.sentMessages().filter((m) => m.to === to && m.type === 'text');

  it('cuts off an agent that drips its answer past AGENT_TIMEOUT_MS, retries, and records why', async () => {
    const number = await newInstance();
    const from = '5511966660001';
    // 200 ms a byte: each byte keeps the socket busy, the whole answer takes seconds.
    global.answerAlways(() => ({ body: { reply: 'too slow to matter' }, dripMs: 200 }));
    await inbound(number, [from], 'hi');
    const [turn] = await readUntil(
      () => turnsOf(from),
      (turns) => turns[0]?.status === 'failed',
      20_000,
    );
    expect(turn.status).toBe('failed');
    expect(turn.last_error).toMatch(
      /^agent gave no complete answer within AGENT_TIMEOUT_MS \(1000 ms\) \(gave up after \d+ attempts\)$/,
    );
    // Retried by the usual policy, each attempt cut off before its last byte; nothing sent.
    expect(turn.attempts).toBeGreaterThanOrEqual(2);
    expect(global.callCount).toBe(turn.attempts);
    await waitFor(() => global.cutOff === turn.attempts);
    expect(new Set(global.calls.map((call) => call.body.batch_id))).toEqual(new Set([turn.id]));
    expect(repliesTo(from)).toHaveLength(0);
  });

  it('cuts off an answer over AGENT_MAX_RESPONSE_BYTES: the turn fails with the reason, nothing of it is stored or sent', async () => {
    const number = await newInstance();
    const from = '5511966660002';
    global.answerNext({ body: { reply: 'x'.repeat(10 * 1024 * 1024) } });
    await inbound(number, [from], 'tell me everything');
    const [turn] = await readUntil(
      () => turnsOf(from),
      (turns) => turns[0]?.status === 'failed' || turns[0]?.status === 'done',
      20_000,
    );
    expect(turn).toMatchObject({
      status: 'failed',
      attempts: 1,
      last_error:
        'agent answer is over AGENT_MAX_RESPONSE_BYTES (1048576 bytes): cut off, nothing of it kept',
    });
    const [stored] = await context.db.query<{ answer: unknown }>(
      'SELECT answer FROM turns WHERE id = $1',
      [turn.id],
    );
    expect(stored.answer).toBeNull();
    expect(repliesTo(from)).toHaveLength(0);
  });
});

describe("agent calls: one instance's slow agent does not starve the others", () => {
  const context = useTestService({
    env: {
      AGENT_MODULE_URL: 'http://127.0.0.1:1/agent', // replaced in beforeAll
      // Long enough that the slow agent's calls stay in flight for the whole test.
      AGENT_TIMEOUT_MS: '600000',
      AGENT_MAX_CONCURRENCY_PER_INSTANCE: String(LIMIT),
      MESSAGE_BUFFER_DELAY: '0.1',
      MESSAGE_BUFFER_MAX_WAIT: '1',
      AGENT_TYPING_INDICATOR: 'false',
    },
  });
  let fast: FakeAgent;
  let slow: FakeAgent;

  beforeAll(async () => {
    [fast, slow] = await Promise.all([FakeAgent.start(), FakeAgent.start()]);
    (context.service.config as { AGENT_MODULE_URL?: string }).AGENT_MODULE_URL = fast.url;
  });

  afterAll(async () => {
    await Promise.all([fast?.stop(), slow?.stop()]);
  });

  it("answers another instance's contact while one instance's agent hangs on many contacts, and loses none of the waiting turns", async () => {
    const { service, platform, db } = context;
    const token = await adminToken(service.url);
    const slowNumber = '106540352269001';
    const otherNumber = '106540352269002';
    const slowId = await createInstance(service.url, token, slowNumber);
    await createInstance(service.url, token, otherNumber);
    const patched = await http(service.url, 'PATCH', `/admin/instances/${slowId}`, {
      token,
      body: { agent: { url: slow.url } },
    });
    expect(patched.status).toBe(200);
    slow.answerAlways(() => ({ hang: true }));
    const deliver = async (number: string, senders: string[], text: string) => {
      const target: WebhookTarget = {
        url: `${service.url}/webhooks/messenger`,
        appSecret: APP_SECRET,
        phoneNumberId: number,
      };
      const messages = senders.map((from) => ({
        from,
        id: `wamid.share${++sequence}`,
        timestamp: String(Math.floor(Date.now() / 1000)),
        type: 'text',
        text: { body: text },
      }));
      expect(await deliverSigned(target, envelope(target, 'messages', { messages }))).toBe(200);
    };
    const repliesTo = (to: string) =>
      platform.sentMessages().filter((m) => m.to === to && m.type === 'text');

    try {
      // More contacts than a worker process runs agent calls at once (32).
      const slowContacts = Array.from(
        { length: 40 },
        (_, n) => `55119777${String(n).padStart(5, '0')}`,
      );
      await deliver(slowNumber, slowContacts, 'are you there?');
      // Every one of them has its turn, LIMIT of them in the slow agent's hands.
      await waitFor(async () => {
        const [row] = await db.query<{ turns: number }>(
          'SELECT count(*)::int AS turns FROM turns WHERE instance_id = $1',
          [slowId],
        );
        return row.turns === slowContacts.length && slow.hangingCount === LIMIT;
      }, 20_000);

      const other = '5511966660003';
      await deliver(otherNumber, [other], 'hello');
      await waitFor(() => repliesTo(other).length === 1, 20_000);
      expect(repliesTo(other)[0].text).toEqual({ body: 'echo: hello' });
      // Meanwhile the slow agent still holds its calls, and never got more than the limit.
      expect(slow.hangingCount).toBe(LIMIT);
      expect(slow.callCount).toBe(LIMIT);

      // The slow agent answers at last: every waiting contact gets its answer, once.
      slow.answerAlways((call) => ({ body: { reply: `late: ${call.body.text}` } }));
      slow.releaseHanging();
      await waitFor(() => slowContacts.every((from) => repliesTo(from).length === 1), 60_000);
      expect(slow.callCount).toBe(slowContacts.length);
      // Waiting for a slot is not an attempt: each turn called the agent once.
      const attempts = await readUntil(
        () =>
          db.query<{ attempts: number; status: string }>(
            'SELECT attempts, status FROM turns WHERE instance_id = $1',
            [slowId],
          ),
        (rows) => rows.every((row) => row.status === 'done'),
      );
      expect(attempts).toHaveLength(slowContacts.length);
      expect(new Set(attempts.map((row) => `${row.status}/${row.attempts}`))).toEqual(
        new Set(['done/1']),
      );
      expect(new Set(slow.calls.map((call) => call.body.contact.wa_id))).toEqual(
        new Set(slowContacts),
      );
    } finally {
      slow.releaseHanging();
    }
  });
});

describe('agent calls: the per-instance limit through a worker killed mid-call', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let agent: FakeAgent;
  let env: Record<string, string>;
  const running: Array<{ close(): Promise<unknown> }> = [];
  const number = '106540352269101';

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
    agent = await FakeAgent.start();
    env = {
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      PLATFORM_APP_SECRET: APP_SECRET,
      AGENT_MODULE_URL: agent.url,
      AGENT_TIMEOUT_MS: '600000',
      AGENT_MAX_CONCURRENCY_PER_INSTANCE: String(LIMIT),
      AGENT_TYPING_INDICATOR: 'false',
      MESSAGE_BUFFER_DELAY: '0.1',
      MESSAGE_BUFFER_MAX_WAIT: '1',
      TURN_LEASE_S: '2',
      SWEEP_INTERVAL_S: '1',
      REDIS_PREFIX: `limits${randomBytes(4).toString('hex')}`,
    };
    const setup = await startTestApp({ ...env, APP_ROLE: 'api' });
    await createInstance(setup.url, await adminToken(setup.url), number);
    await setup.close();
  });

  afterAll(async () => {
    for (const service of running.splice(0).reverse()) await service.close();
    await agent.stop();
    await platform.stop();
    await db.drop();
  });

  it("frees the slots of a killed worker's calls: every waiting contact is answered once", async () => {
    const api = await startTestApp({ ...env, APP_ROLE: 'api' });
    running.push(api);
    const first = await startServiceProcess({ ...env, APP_ROLE: 'worker' });
    running.push({ close: () => first.kill() });
    agent.answerAlways(() => ({ hang: true }));
    const contacts = [
      '5511988880001',
      '5511988880002',
      '5511988880003',
      '5511988880004',
      '5511988880005',
    ];
    const target: WebhookTarget = {
      url: `${api.url}/webhooks/messenger`,
      appSecret: APP_SECRET,
      phoneNumberId: number,
    };
    const messages = contacts.map((from) => ({
      from,
      id: `wamid.killed${++sequence}`,
      timestamp: String(Math.floor(Date.now() / 1000)),
      type: 'text',
      text: { body: 'still there?' },
    }));
    expect(await deliverSigned(target, envelope(target, 'messages', { messages }))).toBe(200);
    await waitFor(async () => {
      const [row] = await db.query<{ turns: number }>('SELECT count(*)::int AS turns FROM turns');
      return row.turns === contacts.length && agent.hangingCount === LIMIT;
    }, 20_000);

    // The worker dies holding its instance's every slot; the agent answers from now on.
    await first.kill();
    agent.answerAlways((call) => ({ body: { reply: `echo: ${call.body.text}` } }));
    const second = await startServiceProcess({ ...env, APP_ROLE: 'worker' });
    running.push({ close: () => second.kill() });

    const accepted = (to: string) => platform.accepted.filter((a) => a.message.to === to);
    await waitFor(() => contacts.every((to) => accepted(to).length >= 1), 30_000);
    expect(contacts.map((to) => accepted(to).length)).toEqual(contacts.map(() => 1));
    // The calls cut by the kill were made again with the same batch_id; the others once.
    const batches = new Map<string, number>();
    for (const call of agent.calls) {
      batches.set(call.body.batch_id, (batches.get(call.body.batch_id) ?? 0) + 1);
    }
    expect([...batches.values()].sort()).toEqual([
      ...contacts.slice(LIMIT).map(() => 1),
      ...contacts.slice(0, LIMIT).map(() => 2),
    ]);
  }, 60_000);
});
