import { EventReceiver } from './support/event-receiver.js';
import { FakePlatform, deliverSigned, envelope } from './support/fake-platform.js';
import { startServiceProcess, type ServiceProcess } from './support/service-process.js';
import {
  APP_SECRET,
  TestDatabase,
  adminToken,
  createInstance,
  http,
  readUntil,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352277801';

describe('event forwarding across a worker killed mid-delivery', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let receiver: EventReceiver;
  let env: Record<string, string>;
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
    receiver = await EventReceiver.start();
    env = {
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      PLATFORM_APP_SECRET: APP_SECRET,
      REDIS_PREFIX: `evkill${Date.now()}`,
      EVENT_POLL_MS: '50',
      EVENT_LEASE_S: '2',
      EVENT_TIMEOUT_MS: '5000',
    };
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await receiver.stop();
    await platform.stop();
    await db.drop();
  });

  it('does not lose the event: another worker sends it once the lease runs out, then the rest in order', async () => {
    const api = await startServiceProcess({ ...env, APP_ROLE: 'api' });
    processes.push(api);
    const token = await adminToken(api.url);
    const instanceId = await createInstance(api.url, token, PHONE_NUMBER_ID);
    const subscription = await http<{ id: string }>(api.url, 'POST', '/admin/event-subscriptions', {
      token,
      body: { url: receiver.url, event_types: ['message.received'], instance_id: instanceId },
    });
    expect(subscription.status).toBe(201);

    // The first POST never gets an answer: the worker is killed while it waits.
    let posts = 0;
    receiver.answer(() => (++posts === 1 ? { hang: true } : { status: 204 }));
    const first = await startServiceProcess({ ...env, APP_ROLE: 'worker' });
    processes.push(first);
    const ids = ['wamid.kill-1', 'wamid.kill-2', 'wamid.kill-3'];
    const target = {
      url: `${api.url}/webhooks/messenger`,
      appSecret: APP_SECRET,
      phoneNumberId: PHONE_NUMBER_ID,
    };
    const status = await deliverSigned(
      target,
      envelope(target, 'messages', {
        messages: ids.map((id) => ({
          from: '5511900078001',
          id,
          timestamp: String(Math.floor(Date.now() / 1000)),
          type: 'text',
          text: { body: id },
        })),
      }),
    );
    expect(status).toBe(200);
    await readUntil(
      () => receiver.count,
      (count) => count >= 1,
    );
    await first.kill();

    const second = await startServiceProcess({ ...env, APP_ROLE: 'worker' });
    processes.push(second);
    const received = await readUntil(
      () => receiver.received,
      (events) => events.length >= 4,
      15_000,
    );
    const wamids = received.map((r) => (r.event.data.message as { wamid: string }).wamid);
    // The hung attempt, then the same event again (same webhook-id), then the others in order.
    expect(wamids).toEqual([ids[0], ids[0], ids[1], ids[2]]);
    expect(received[1].headers['webhook-id']).toBe(received[0].headers['webhook-id']);
    // The last receipt comes before its record: read until every one is written.
    const page = await readUntil(
      () =>
        http<{ data: Array<{ state: string }> }>(
          api.url,
          'GET',
          `/admin/event-subscriptions/${subscription.body.id}/deliveries`,
          { token },
        ),
      (answer) => answer.body.data.every((d) => d.state === 'delivered'),
    );
    expect(page.body.data.map((d) => d.state)).toEqual(['delivered', 'delivered', 'delivered']);
  });
});
