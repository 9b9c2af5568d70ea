import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeAgent } from './support/fake-agent.js';
import {
  FakePlatform,
  deliverSigned,
  envelope,
  type WebhookTarget,
} from './support/fake-platform.js';
import {
  APP_SECRET,
  TestDatabase,
  adminToken,
  createInstance,
  startTestApp,
  waitFor,
  type TestApp,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352200402';
const CONTACTS = 40;
const PER_CONTACT = 30;

/**
 * Deliveries acknowledged while no worker was running wait in the stream.
 * When a worker comes back, each user's burst must reach the agent as the
 * user typed it (one turn, as it would have been live), not in the pieces
 * the batches it is read in happen to cut.
 */
describe('webhook backlog: bursts reach the agent whole', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let agent: FakeAgent;
  let env: Record<string, string>;
  const running: TestApp[] = [];

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
      // Live, each user's messages (a few hundred ms apart) would make one turn.
      MESSAGE_BUFFER_DELAY: '1',
      MESSAGE_BUFFER_MAX_WAIT: '30',
      REDIS_PREFIX: `backlog${randomBytes(4).toString('hex')}`,
    };
  });

  afterAll(async () => {
    for (const app of running.splice(0)) await app.close();
    await agent.stop();
    await platform.stop();
    await db.drop();
  });

  it('gives each user one turn with all their messages, in order, after the workers were away', async () => {
    const api = await startTestApp({ ...env, APP_ROLE: 'api' });
    running.push(api);
    await createInstance(api.url, await adminToken(api.url), PHONE_NUMBER_ID);
    const target: WebhookTarget = {
      url: `${api.url}/webhooks/messenger`,
      appSecret: APP_SECRET,
      phoneNumberId: PHONE_NUMBER_ID,
    };
    const run = randomBytes(3).toString('hex');
    const contact = (c: number) => `55119400${String(c).padStart(5, '0')}`;
    const sent = new Map<string, string[]>();
    // Round robin: every batch a worker reads holds a few messages of every user.
    const deliveries = [];
    for (let i = 0; i < PER_CONTACT; i++) {
      for (let c = 0; c < CONTACTS; c++) {
        const id = `wamid.backlog-${run}-${c}-${i}`;
        sent.set(contact(c), [...(sent.get(contact(c)) ?? []), id]);
        deliveries.push({
          from: contact(c),
          id,
          timestamp: String(Math.floor(Date.now() / 1000)),
          type: 'text',
          text: { body: `message ${i}` },
        });
      }
    }
    for (let i = 0; i < deliveries.length; i += 20) {
      const statuses = await Promise.all(
        deliveries
          .slice(i, i + 20)
          .map((message) =>
            deliverSigned(target, envelope(target, 'messages', { messages: [message] })),
          ),
      );
      expect(statuses.every((status) => status === 200)).toBe(true);
    }
    // Older than a second: the workers, when they start, are behind.
    await sleep(1500);

    running.push(await startTestApp({ ...env, APP_ROLE: 'worker' }));
    const given = () => agent.calls.reduce((sum, call) => sum + call.body.messages.length, 0);
    await waitFor(() => given() >= deliveries.length, 30_000);
    await sleep(1500);

    for (const [from, ids] of sent) {
      const calls = agent.callsFor(from);
      expect({ from, turns: calls.length }).toEqual({ from, turns: 1 });
      expect(calls[0].body.messages.map((m) => m.id)).toEqual(ids);
    }
    expect(given()).toBe(deliveries.length);
    expect(platform.accepted).toHaveLength(CONTACTS);
  }, 60_000);
});
