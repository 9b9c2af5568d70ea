import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeAgent } from './support/fake-agent.js';
import {
  FakePlatform,
  deliverSigned,
  envelope,
  type WebhookTarget,
} from './support/fake-platform.js';
import { Redis } from 'ioredis';
import { RedisServer } from './support/redis-server.js';
import { startServiceProcess, type ServiceProcess } from './support/service-process.js';
import { TcpProxy } from './support/tcp-proxy.js';
import {
  APP_SECRET,
  TestDatabase,
  adminToken,
  createInstance,
  startTestApp,
  type TestApp,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352200401';

let sequence = 0;
function text(from: string, body: string) {
  return {
    from,
    id: `wamid.recovery${Date.now()}-${++sequence}`,
    timestamp: String(Math.floor(Date.now() / 1000)),
    type: 'text',
    text: { body },
  };
}

/**
 * Each scenario runs real processes (workers killed with SIGKILL, a private
 * redis-server killed and restarted empty, PostgreSQL cut by a TCP proxy)
 * and checks what a user needs: no acknowledged message lost, none given to
 * the agent twice, each reply accepted by the platform exactly once.
 */
describe('turns through crashes and outages', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let agent: FakeAgent;
  let env: Record<string, string>;
  const running: Array<{ close(): Promise<unknown> }> = [];

  const target = (service: { url: string }): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  });
  const deliver = async (service: { url: string }, messages: unknown[]) => {
    const to = target(service);
    expect(await deliverSigned(to, envelope(to, 'messages', { messages }))).toBe(200);
  };
  const accepted = (to: string) => platform.accepted.filter((a) => a.message.to === to);
  const worker = async (overrides: Record<string, string> = {}): Promise<ServiceProcess> => {
    const started = await startServiceProcess({ ...env, APP_ROLE: 'worker', ...overrides });
    running.push({ close: () => started.kill() });
    return started;
  };
  const app = async (overrides: Record<string, string>): Promise<TestApp> => {
    const started = await startTestApp({ ...env, ...overrides });
    running.push(started);
    return started;
  };

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
    agent = await FakeAgent.start();
    env = {
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      PLATFORM_APP_SECRET: APP_SECRET,
      AGENT_MODULE_URL: agent.url,
      AGENT_TYPING_INDICATOR: 'false',
      SERVICE_WINDOW_ENFORCE: 'false',
      MESSAGE_BUFFER_DELAY: '0.3',
      MESSAGE_BUFFER_MAX_WAIT: '3',
      TURN_LEASE_S: '2',
      SWEEP_INTERVAL_S: '1',
      DELIVERY_LEASE_S: '2',
      REDIS_PREFIX: `recovery${randomBytes(4).toString('hex')}`,
    };
    const setup = await startTestApp({ ...env, APP_ROLE: 'api' });
    await createInstance(setup.url, await adminToken(setup.url), PHONE_NUMBER_ID);
    await setup.close();
  });

  afterEach(async () => {
    for (const service of running.splice(0).reverse()) await service.close();
    agent.reset();
    platform.reset();
  });

  afterAll(async () => {
    await agent.stop();
    await platform.stop();
    await db.drop();
  });

  it('resumes a turn whose worker was killed during the agent call: same batch_id, one reply', async () => {
    const api = await app({ APP_ROLE: 'api' });
    const first = await worker();
    const from = '5511930000001';
    agent.answerNext({ hang: true });
    await deliver(api, [text(from, 'killed mid-call')]);
    await waitFor(() => agent.callsFor(from).length === 1);
    await first.kill();
    const killedAt = Date.now();

    await worker();
    // Lease (2 s) plus one sweep (1 s); the bound is only there to end the test.
    await waitFor(() => accepted(from).length === 1, 20_000);
    const [lost, resumed] = agent.callsFor(from);
    expect(resumed.body.batch_id).toBe(lost.body.batch_id);
    expect(resumed.headers['idempotency-key']).toBe(lost.body.batch_id);
    // Resumed by the new worker, after the first was gone.
    expect(resumed.at).toBeGreaterThanOrEqual(killedAt);
    await sleep(1500);
    expect(accepted(from)).toHaveLength(1);
    expect(agent.callsFor(from)).toHaveLength(2);
  }, 60_000);

  it('resumes a turn whose worker was killed while the reply POST hung: accepted once', async () => {
    const api = await app({ APP_ROLE: 'api' });
    const first = await worker();
    const from = '5511930000002';
    let hungOnce = false;
    platform.on('POST', /\/messages$/, (request) => {
      const message = request.body as { to?: string; type?: string };
      if (message.to !== from || !message.type || hungOnce) return undefined;
      hungOnce = true;
      return { hang: true };
    });
    await deliver(api, [text(from, 'killed mid-reply')]);
    await waitFor(() => hungOnce);
    await first.kill();

    await worker();
    await waitFor(() => accepted(from).length === 1, 15_000);
    await sleep(1500);
    // The hung POST never got an answer; the resumed worker sent the part again (at least once).
    expect(accepted(from)).toHaveLength(1);
    expect(agent.callsFor(from)).toHaveLength(1);
    const [part] = await db.query<{ status: string; wamid: string }>(
      `SELECT p.status, p.wamid FROM turn_parts p JOIN turns t ON t.id = p.turn_id
       JOIN contacts c ON c.id = t.contact_id WHERE c.wa_id = $1`,
      [from],
    );
    expect(part).toEqual({ status: 'sent', wamid: accepted(from)[0].wamid });
  }, 30_000);

  it('brings waiting messages to the agent once after Redis restarts empty', async () => {
    const redis = await RedisServer.start();
    running.push({ close: () => redis.kill() });
    // A long buffer delay, so the messages are still waiting when Redis goes.
    const service = await app({ REDIS_URL: redis.url, MESSAGE_BUFFER_DELAY: '2' });
    const contacts = ['5511930000003', '5511930000004'];
    const messages = [text(contacts[0], 'a1'), text(contacts[1], 'b1'), text(contacts[0], 'a2')];
    for (const message of messages) await deliver(service, [message]);
    await waitFor(
      async () =>
        (
          await db.query('SELECT 1 FROM messages WHERE awaiting_turn AND contact = ANY($1)', [
            contacts,
          ])
        ).length === 3,
    );
    await redis.kill();
    await redis.launch();

    await waitFor(() => messages.every((m) => agent.given.has(m.id)), 20_000);
    await sleep(2000);
    for (const message of messages) expect(agent.given.get(message.id)).toBe(1);
    for (const contact of contacts) expect(accepted(contact)).toHaveLength(1);
  }, 40_000);

  it('brings every acknowledged message to the agent once after PostgreSQL was cut off for 8 s', async () => {
    const proxy = await TcpProxy.start('127.0.0.1', 5432);
    running.push({ close: () => proxy.stop() });
    const service = await app({
      DATABASE_URL: db.url.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`),
    });
    const from = ['5511930000005', '5511930000006', '5511930000007'];
    const messages: Array<ReturnType<typeof text>> = [];
    const send = async (contact: string, body: string) => {
      const message = text(contact, body);
      messages.push(message);
      await deliver(service, [message]);
    };
    // Stored, and its flush due just as PostgreSQL goes.
    await send(from[0], 'just before');
    await waitFor(
      async () =>
        (await db.query('SELECT 1 FROM messages WHERE contact = $1', [from[0]])).length === 1,
    );
    proxy.cutOff();
    const cutEnds = Date.now() + 8000;
    for (let i = 0; Date.now() < cutEnds; i++) {
      await send(from[i % from.length], `during ${i}`);
      await sleep(400);
    }
    proxy.restore();

    await waitFor(() => messages.every((m) => agent.given.has(m.id)), 40_000);
    await sleep(2000);
    const counts = agent.given;
    expect(messages.filter((m) => counts.get(m.id) !== 1)).toEqual([]);
  }, 70_000);

  it('stores the deliveries a killed worker had taken, once, through another worker', async () => {
    const proxy = await TcpProxy.start('127.0.0.1', 5432);
    running.push({ close: () => proxy.stop() });
    const api = await app({ APP_ROLE: 'api' });
    const first = await worker({
      DATABASE_URL: db.url.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`),
    });
    // The worker takes the deliveries but cannot store them, and is killed holding them.
    proxy.cutOff();
    const from = ['5511930000008', '5511930000009'];
    const messages = [
      text(from[0], 'taken'),
      text(from[1], 'then'),
      text(from[0], 'killed'),
      text(from[1], 'holding'),
      text(from[0], 'these'),
    ];
    for (const message of messages) await deliver(api, [message]);
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      const stream = `${env.REDIS_PREFIX}:webhook:deliveries`;
      const taken = async () => ((await redis.xpending(stream, 'workers')) as [number])[0];
      // Each of its four readers holds one; the fifth waits unread.
      await waitFor(async () => (await taken()) === 4);
      await first.kill();
      proxy.restore();
      expect(await taken()).toBe(4);

      await worker();
      await waitFor(() => messages.every((m) => agent.given.has(m.id)), 20_000);
      await sleep(1500);
      expect(messages.map((m) => agent.given.get(m.id))).toEqual([1, 1, 1, 1, 1]);
      expect(await redis.xlen(stream)).toBe(0);
    } finally {
      redis.disconnect();
    }
  }, 40_000);
});
