import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeAgent } from '../test/support/fake-agent.js';
import {
  FakePlatform,
  deliverSigned,
  envelope,
  type WebhookTarget,
} from '../test/support/fake-platform.js';
import { RedisServer } from '../test/support/redis-server.js';
import { startServiceProcess, type ServiceProcess } from '../test/support/service-process.js';
import { TcpProxy } from '../test/support/tcp-proxy.js';
import { TestDatabase, adminToken, createInstance } from '../test/support/test-app.js';
import { waitUntil } from '../test/support/wait.js';

const SECRET = 'bench-app-secret';
const PHONE_NUMBER_ID = '410000000101';
const CONTACTS = 100;

export interface RecoveryResult {
  scenario: string;
  messages: number;
  lost: number;
  /** Messages given to the agent in two different turns. */
  givenTwice: number;
  /** Turns whose reply the platform accepted more than once, or never. */
  repliesTwice: number;
  repliesMissing: number;
  /** From the fault to the first resumed agent call (crashes) or to the last message given. */
  recoverySeconds: number;
  note: string;
}

interface World {
  db: TestDatabase;
  platform: FakePlatform;
  agent: FakeAgent;
  env: Record<string, string>;
  processes: ServiceProcess[];
}

let sequence = 0;

function message(from: string) {
  return {
    from,
    id: `wamid.rec${Date.now()}-${++sequence}`,
    timestamp: String(Math.floor(Date.now() / 1000)),
    type: 'text',
    text: { body: `message ${sequence}` },
  };
}

const contact = (i: number) => `5511940${String(i).padStart(6, '0')}`;

async function deliver(url: string, messages: unknown[]): Promise<number> {
  const target: WebhookTarget = {
    url: `${url}/webhooks/messenger`,
    appSecret: SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  };
  return deliverSigned(target, envelope(target, 'messages', { messages })).catch(() => 0);
}

/**
 * What the agent and the platform saw, against what was acknowledged. The
 * agent echoes each turn's text, so each turn has one expected reply.
 */
function tally(world: World, acknowledged: string[]) {
  const turnsOf = new Map<string, Set<string>>();
  const expected = new Map<string, string>();
  for (const call of world.agent.calls) {
    expected.set(call.body.batch_id, `echo: ${call.body.text}`);
    for (const m of call.body.messages) {
      turnsOf.set(m.id, (turnsOf.get(m.id) ?? new Set()).add(call.body.batch_id));
    }
  }
  const accepted = new Map<string, number>();
  for (const { message } of world.platform.accepted) {
    const body = (message.text as { body?: string } | undefined)?.body ?? '';
    accepted.set(body, (accepted.get(body) ?? 0) + 1);
  }
  return {
    lost: acknowledged.filter((id) => !turnsOf.has(id)).length,
    givenTwice: [...turnsOf.values()].filter((turns) => turns.size > 1).length,
    repliesTwice: [...accepted.values()].filter((count) => count > 1).length,
    repliesMissing: [...expected.values()].filter((reply) => !accepted.has(reply)).length,
  };
}

async function withWorld(
  overrides: Record<string, string>,
  run: (world: World) => Promise<RecoveryResult>,
): Promise<RecoveryResult> {
  const world: World = {
    db: await TestDatabase.create(),
    platform: await FakePlatform.start(),
    agent: await FakeAgent.start(),
    env: {},
    processes: [],
  };
  world.env = {
    DATABASE_URL: world.db.url,
    PLATFORM_API_URL: world.platform.url,
    PLATFORM_APP_SECRET: SECRET,
    AGENT_MODULE_URL: world.agent.url,
    AGENT_TYPING_INDICATOR: 'false',
    SERVICE_WINDOW_ENFORCE: 'false',
    PLATFORM_SEND_RATE: '1000',
    MESSAGE_BUFFER_DELAY: '1',
    MESSAGE_BUFFER_MAX_WAIT: '5',
    // The scenarios hold 32 agent calls of one instance at once (a worker's share).
    AGENT_MAX_CONCURRENCY_PER_INSTANCE: '32',
    REDIS_PREFIX: `rec${randomBytes(4).toString('hex')}`,
    ...overrides,
  };
  try {
    const setup = await startServiceProcess({ ...world.env, APP_ROLE: 'api' });
    await createInstance(setup.url, await adminToken(setup.url), PHONE_NUMBER_ID);
    await setup.stop();
    return await run(world);
  } finally {
    for (const process of world.processes) await process.kill();
    await world.agent.stop();
    await world.platform.stop();
    await world.db.drop();
  }
}

async function start(world: World, overrides: Record<string, string>): Promise<ServiceProcess> {
  const process = await startServiceProcess({ ...world.env, ...overrides });
  world.processes.push(process);
  return process;
}

/** A worker is killed (SIGKILL) while 32 agent calls are in flight; another worker starts. */
async function killDuringAgentCalls(): Promise<RecoveryResult> {
  return withWorld({}, async (world) => {
    const api = await start(world, { APP_ROLE: 'api' });
    const first = await start(world, { APP_ROLE: 'worker' });
    // The first calls never answer: they are in flight when the worker dies.
    world.agent.answerAlways(() => ({ hang: true }));
    const contacts = Array.from({ length: CONTACTS }, (_, i) => contact(i));
    const acknowledged: string[] = [];
    for (const to of contacts) {
      const m = message(to);
      if ((await deliver(api.url, [m])) === 200) acknowledged.push(m.id);
    }
    await waitUntil(() => world.agent.calls.length >= 32, 30_000, 100);
    const inFlight = new Set(world.agent.calls.map((call) => call.body.batch_id));
    await first.kill();
    const killedAt = Date.now();
    world.agent.answerAlways((call) => ({ body: { reply: `echo: ${call.body.text}` } }));
    await start(world, { APP_ROLE: 'worker' });
    await waitUntil(
      () => world.agent.calls.some((c) => inFlight.has(c.body.batch_id) && c.at > killedAt),
      120_000,
      100,
    );
    const resumedAt = Math.min(
      ...world.agent.calls
        .filter((c) => inFlight.has(c.body.batch_id) && c.at > killedAt)
        .map((c) => c.at),
    );
    await waitUntil(
      () => contacts.every((to) => world.platform.accepted.some((a) => a.message.to === to)),
      120_000,
      100,
    );
    const allAt = Date.now();
    await sleep(3000);
    return {
      scenario: 'worker SIGKILLed during 32 agent calls',
      messages: acknowledged.length,
      ...tally(world, acknowledged),
      recoverySeconds: Math.round((resumedAt - killedAt) / 100) / 10,
      note: `all ${CONTACTS} contacts answered ${Math.round((allAt - killedAt) / 1000)} s after the kill`,
    };
  });
}

/** A worker is killed while 32 reply POSTs hang at the platform; another worker starts. */
async function killDuringReplies(): Promise<RecoveryResult> {
  return withWorld({}, async (world) => {
    const api = await start(world, { APP_ROLE: 'api' });
    const first = await start(world, { APP_ROLE: 'worker' });
    let hang = true;
    world.platform.on('POST', /\/messages$/, () => (hang ? { hang: true } : undefined));
    const contacts = Array.from({ length: CONTACTS }, (_, i) => contact(i));
    const acknowledged: string[] = [];
    for (const to of contacts) {
      const m = message(to);
      if ((await deliver(api.url, [m])) === 200) acknowledged.push(m.id);
    }
    await waitUntil(() => world.platform.sentMessages().length >= 32, 30_000, 100);
    const hung = world.platform.sentMessages().length;
    await first.kill();
    const killedAt = Date.now();
    hang = false;
    await start(world, { APP_ROLE: 'worker' });
    await waitUntil(
      () => contacts.every((to) => world.platform.accepted.some((a) => a.message.to === to)),
      120_000,
      100,
    );
    const allAt = Date.now();
    await sleep(3000);
    return {
      scenario: 'worker SIGKILLed during 32 hung reply POSTs',
      messages: acknowledged.length,
      ...tally(world, acknowledged),
      recoverySeconds: Math.round((allAt - killedAt) / 100) / 10,
      note: `${hung} POSTs hung (never answered) were sent again on resume; none accepted twice`,
    };
  });
}

/** Redis is killed and restarted empty while messages wait in PostgreSQL for their flush. */
async function redisRestart(): Promise<RecoveryResult> {
  const redis = await RedisServer.start();
  try {
    return await withWorld({ REDIS_URL: redis.url, MESSAGE_BUFFER_DELAY: '5' }, async (world) => {
      const service = await start(world, { APP_ROLE: 'all' });
      const contacts = Array.from({ length: CONTACTS }, (_, i) => contact(i));
      const acknowledged: string[] = [];
      for (let round = 0; round < 3; round++) {
        for (const to of contacts) {
          const m = message(to);
          if ((await deliver(service.url, [m])) === 200) acknowledged.push(m.id);
        }
      }
      // The scenario is messages waiting in PostgreSQL: a delivery acknowledged
      // but not yet stored lives only in Redis, and goes with a Redis that keeps
      // nothing on disk (run Redis with AOF: see the README).
      await waitUntil(
        async () => {
          const [row] = await world.db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM messages WHERE wamid = ANY($1)',
            [acknowledged],
          );
          return row.n === acknowledged.length;
        },
        30_000,
        100,
      );
      await redis.kill();
      await redis.launch();
      const restartedAt = Date.now();
      await waitUntil(() => acknowledged.every((id) => world.agent.given.has(id)), 120_000, 100);
      const allAt = Date.now();
      await sleep(3000);
      return {
        scenario: 'Redis killed and restarted empty, 300 messages waiting',
        messages: acknowledged.length,
        ...tally(world, acknowledged),
        recoverySeconds: Math.round((allAt - restartedAt) / 100) / 10,
        note: 'recovered by the sweeper from PostgreSQL',
      };
    });
  } finally {
    await redis.kill();
  }
}

/** PostgreSQL cut off for 8 s (TCP proxy) while deliveries keep arriving. */
async function postgresCut(): Promise<RecoveryResult> {
  const proxy = await TcpProxy.start('127.0.0.1', 5432);
  try {
    return await withWorld({}, async (world) => {
      const dbUrl = world.env.DATABASE_URL.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`);
      const service = await start(world, { APP_ROLE: 'all', DATABASE_URL: dbUrl });
      const contacts = Array.from({ length: CONTACTS }, (_, i) => contact(i));
      const acknowledged: string[] = [];
      const send = async (i: number) => {
        const m = message(contacts[i % CONTACTS]);
        if ((await deliver(service.url, [m])) === 200) acknowledged.push(m.id);
      };
      for (let i = 0; i < CONTACTS; i++) await send(i);
      proxy.cutOff();
      const cutEnds = Date.now() + 8000;
      for (let i = 0; Date.now() < cutEnds; i++) {
        await send(i);
        await sleep(20);
      }
      proxy.restore();
      const restoredAt = Date.now();
      await waitUntil(() => acknowledged.every((id) => world.agent.given.has(id)), 120_000, 100);
      const allAt = Date.now();
      await sleep(3000);
      return {
        scenario: 'PostgreSQL cut off for 8 s during deliveries',
        messages: acknowledged.length,
        ...tally(world, acknowledged),
        recoverySeconds: Math.round((allAt - restoredAt) / 100) / 10,
        note: `${acknowledged.length - CONTACTS} deliveries acknowledged during the cut`,
      };
    });
  } finally {
    await proxy.stop();
  }
}

/** `npm run bench -- recovery`: each fault with real processes, and what was lost or doubled. */
export async function benchRecovery(): Promise<RecoveryResult[]> {
  const results: RecoveryResult[] = [];
  for (const scenario of [killDuringAgentCalls, killDuringReplies, redisRestart, postgresCut]) {
    results.push(await scenario());
  }
  return results;
}
