import { FakeAgent } from './support/fake-agent.js';
import { FakePlatform, deliverSigned, envelope } from './support/fake-platform.js';
import {
  APP_SECRET,
  TestDatabase,
  adminToken,
  createInstance,
  startTestApp,
  type TestApp,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352200777';

function delivery(from: string, ids: string[], at = Math.floor(Date.now() / 1000)) {
  return envelope({ phoneNumberId: PHONE_NUMBER_ID }, 'messages', {
    messages: ids.map((id, i) => ({
      from,
      id,
      timestamp: String(at + i),
      type: 'text',
      text: { body: id },
    })),
  });
}

describe('the pipeline across processes', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let agent: FakeAgent;
  let env: Record<string, string>;

  const post = (app: TestApp, payload: unknown) =>
    deliverSigned(
      {
        url: `${app.url}/webhooks/messenger`,
        appSecret: APP_SECRET,
        phoneNumberId: PHONE_NUMBER_ID,
      },
      payload,
    );

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
    agent = await FakeAgent.start();
    env = {
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      PLATFORM_APP_SECRET: APP_SECRET,
      AGENT_MODULE_URL: agent.url,
      MESSAGE_BUFFER_DELAY: '0.5',
      MESSAGE_BUFFER_MAX_WAIT: '5',
      SERVICE_WINDOW_ENFORCE: 'false',
      REDIS_PREFIX: `procs${Date.now()}`,
    };
    const setup = await startTestApp(env);
    await createInstance(setup.url, await adminToken(setup.url), PHONE_NUMBER_ID);
    await setup.close();
  });

  afterAll(async () => {
    await agent.stop();
    await platform.stop();
    await db.drop();
  });

  it('two processes receiving the same deliveries give each message to the agent exactly once', async () => {
    const [first, second] = await Promise.all([startTestApp(env), startTestApp(env)]);
    try {
      const contacts = Array.from({ length: 8 }, (_, i) => `55119222200${i}`);
      const deliveries = contacts.flatMap((from) => [
        delivery(from, [`wamid.p-${from}-1`, `wamid.p-${from}-2`]),
        delivery(from, [`wamid.p-${from}-3`]),
      ]);
      // Every delivery reaches both processes, twice, at the same time.
      const answers = await Promise.all(
        deliveries.flatMap((payload) => [
          post(first, payload),
          post(second, payload),
          post(first, payload),
          post(second, payload),
        ]),
      );
      expect(answers.every((status) => status === 200)).toBe(true);
      await waitFor(
        () => new Set(agent.calls.flatMap((c) => c.body.messages.map((m) => m.id))).size === 24,
      );
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const given = agent.calls.flatMap((c) => c.body.messages.map((m) => m.id));
      expect(given).toHaveLength(24);
      expect(new Set(given).size).toBe(24);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('keeps a buffer through a restart: the next process flushes it', async () => {
    agent.reset();
    const before = await startTestApp(env);
    await post(before, delivery('5511933330000', ['wamid.restart-1', 'wamid.restart-2']));
    // Stored, buffered, and the process goes away before the buffer delay ends.
    await new Promise((resolve) => setTimeout(resolve, 150));
    await before.close();
    expect(agent.calls).toHaveLength(0);

    const after = await startTestApp(env);
    try {
      await waitFor(() => agent.calls.length === 1);
      expect(agent.calls[0].body.messages.map((m) => m.id)).toEqual([
        'wamid.restart-1',
        'wamid.restart-2',
      ]);
    } finally {
      await after.close();
    }
  });
});
