import { EventReceiver } from './support/event-receiver.js';
import { simulateMessage, type WebhookTarget } from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createApiKey,
  createInstance,
  http,
  useTestService,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352288401';

interface Overview {
  health: Record<string, string>;
  instances: { total: number; active: number; token_rejected: number };
  messages_waiting: { count: number; oldest_age_s: number };
  events_undelivered: { count: number; oldest_age_s: number };
  sends_last_hour: number;
  failed_turns: number;
}

describe('GET /admin/overview: the health of the dependencies and what is waiting', () => {
  // A long buffer: the customers' messages wait for the agent while the test looks.
  const context = useTestService({
    agent: true,
    env: { MESSAGE_BUFFER_DELAY: '600', MESSAGE_BUFFER_MAX_WAIT: '600' },
  });
  let receiver: EventReceiver;

  afterAll(async () => {
    await receiver?.stop();
  });

  it('counts the messages waiting, the sends of the last hour and the undelivered events; admins only', async () => {
    const { service } = context;
    receiver = await EventReceiver.start();
    receiver.answer(() => ({ status: 500 }));
    const admin = await adminToken(service.url);
    const overview = async () =>
      (await http<Overview>(service.url, 'GET', '/admin/overview', { token: admin })).body;

    expect(await overview()).toEqual({
      health: { database: 'healthy', cache: 'healthy', platform_api: 'healthy' },
      instances: { total: 0, active: 0, token_rejected: 0 },
      messages_waiting: { count: 0, oldest_age_s: 0 },
      events_undelivered: { count: 0, oldest_age_s: 0 },
      sends_last_hour: 0,
      failed_turns: 0,
    });

    const instanceId = await createInstance(service.url, admin, PHONE_NUMBER_ID, 'Overview store');
    const key = await createApiKey(service.url, admin, instanceId, 'overview');
    const subscribed = await http(service.url, 'POST', '/admin/event-subscriptions', {
      token: admin,
      body: { url: receiver.url, event_types: ['message.sent'] },
    });
    expect(subscribed.status).toBe(201);

    const target: WebhookTarget = {
      url: `${service.url}/webhooks/messenger`,
      appSecret: APP_SECRET,
      phoneNumberId: PHONE_NUMBER_ID,
    };
    for (const text of ['one', 'two']) {
      expect((await simulateMessage(target, { waId: '5511977770001' }, text)).status).toBe(200);
    }
    await waitFor(async () => (await overview()).messages_waiting.count === 2, 20_000);
    expect((await overview()).messages_waiting.oldest_age_s).toBeGreaterThan(0);

    // Sends through the API take the contact over: its messages no longer wait for the agent.
    for (const body of ['first', 'second', 'third']) {
      const sent = await http(service.url, 'POST', '/send/text', {
        token: key,
        body: { to: '5511977770001', body },
      });
      expect(sent.status).toBe(200);
    }
    // The receiver answers 500: the first is retried later, the two behind it in its lane wait.
    await waitFor(() => receiver.count >= 1, 20_000);
    const now = await overview();
    expect(now).toMatchObject({
      instances: { total: 1, active: 1, token_rejected: 0 },
      messages_waiting: { count: 0, oldest_age_s: 0 },
      events_undelivered: { count: 3 },
      sends_last_hour: 3,
      failed_turns: 0,
    });
    expect(now.events_undelivered.oldest_age_s).toBeGreaterThan(0);

    // An operator, and nobody, get no overview.
    const operator = await http(service.url, 'POST', '/admin/accounts', {
      token: admin,
      body: {
        username: 'olga',
        display_name: 'Olga',
        role: 'operator',
        password: 'correct horse battery staple',
        instance_ids: [instanceId],
      },
    });
    expect(operator.status).toBe(201);
    const login = await http<{ token: string }>(service.url, 'POST', '/admin/auth/login', {
      body: { username: 'olga', password: 'correct horse battery staple' },
    });
    const refused = await http(service.url, 'GET', '/admin/overview', { token: login.body.token });
    expect(refused.status).toBe(403);
    expect((await http(service.url, 'GET', '/admin/overview')).status).toBe(401);
  });
});
