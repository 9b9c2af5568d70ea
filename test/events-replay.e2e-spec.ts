import { Client } from 'pg';
import { EventReceiver } from './support/event-receiver.js';
import { deliverSigned, envelope, type WebhookTarget } from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createInstance,
  http,
  startTestApp,
  useTestService,
  waitFor,
  waitUntil,
  type HttpAnswer,
  type TestApp,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352277201';
const ACCOUNT = '102290129377201';

interface Delivery {
  id: string;
  event_id: string;
  state: string;
}

let sequence = 0;

describe('event replay: once per pending event, one at a time, bounded in time', () => {
  const context = useTestService({ env: { EVENT_POLL_MS: '50' } });
  let service: TestApp;
  let receiver: EventReceiver;
  let token: string;
  let since: string;
  const wamids: string[] = [];

  const target = (): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
    channelAccountId: ACCOUNT,
  });
  const admin = <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    baseUrl = service.url,
  ) => http<T>(baseUrl, method, path, { token, body });
  /** A subscription kept disabled: what a replay queues stays pending, for the counts. */
  const subscribe = async (): Promise<string> => {
    const answer = await admin<{ id: string }>('POST', '/admin/event-subscriptions', {
      url: receiver.url,
      event_types: ['message.received'],
      enabled: false,
    });
    expect(answer.status).toBe(201);
    return answer.body.id;
  };
  const replay = (id: string, baseUrl = service.url) =>
    admin<{ queued?: number; code?: string; message?: string }>(
      'POST',
      `/admin/event-subscriptions/${id}/replay`,
      { since, until: new Date(Date.now() + 60_000).toISOString() },
      baseUrl,
    );
  /** Each event's deliveries for the subscription, as the admin lists them. */
  const deliveriesPerEvent = async (id: string): Promise<number[]> => {
    const list = await admin<{ data: Delivery[] }>(
      'GET',
      `/admin/event-subscriptions/${id}/deliveries?limit=100`,
    );
    const counts = new Map<string, number>();
    for (const d of list.body.data) counts.set(d.event_id, (counts.get(d.event_id) ?? 0) + 1);
    return [...counts.values()];
  };
  /** Inbound messages (one event each while a subscription wants them), once stored. */
  const inbound = async (count: number): Promise<void> => {
    const from = '5511900072001';
    const batch = Array.from({ length: count }, () => `wamid.replay${++sequence}`);
    const status = await deliverSigned(
      target(),
      envelope(target(), 'messages', {
        contacts: [{ profile: { name: 'Replay' }, wa_id: from }],
        messages: batch.map((id, i) => ({
          from,
          id,
          timestamp: String(Math.floor(Date.now() / 1000)),
          type: 'text',
          text: { body: `m${i}` },
        })),
      }),
    );
    expect(status).toBe(200);
    wamids.push(...batch);
    await waitFor(
      async () =>
        (
          await context.db.query(
            `SELECT 1 FROM events WHERE data -> 'message' ->> 'wamid' = ANY($1::text[])`,
            [wamids],
          )
        ).length === wamids.length,
    );
  };
  /**
   * Holds the subscription's row (FOR UPDATE) in a transaction of its own: a
   * replay's insert of deliveries (whose key checks that row) waits for it.
   */
  const holdSubscription = async (id: string): Promise<{ release(): Promise<void> }> => {
    const client = new Client({ connectionString: context.db.url });
    await client.connect();
    await client.query('BEGIN');
    await client.query('SELECT 1 FROM event_subscriptions WHERE id = $1 FOR UPDATE', [id]);
    return {
      release: async () => {
        await client.query('COMMIT');
        await client.end();
      },
    };
  };
  /** Sessions of this file's database waiting for a lock. */
  const lockWaiters = async (): Promise<number> =>
    (
      await context.db.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      )
    ).length;

  beforeAll(async () => {
    service = context.service;
    receiver = await EventReceiver.start();
    token = await adminToken(service.url);
    await createInstance(service.url, token, PHONE_NUMBER_ID, 'Replay store', {
      channelAccountId: ACCOUNT,
    });
    since = new Date(Date.now() - 1000).toISOString();
    // Events are recorded only while a subscription wants them.
    await subscribe();
    await inbound(3);
  });

  afterAll(async () => {
    await receiver?.stop();
  });

  it('does not queue again an event still pending for the subscription', async () => {
    const id = await subscribe();
    const first = await replay(id);
    expect({ status: first.status, queued: first.body.queued }).toEqual({ status: 202, queued: 3 });
    const second = await replay(id);
    expect({ status: second.status, queued: second.body.queued }).toEqual({
      status: 202,
      queued: 0,
    });
    expect(await deliveriesPerEvent(id)).toEqual([1, 1, 1]);

    // A new event in the range is queued; the pending ones still are not.
    await inbound(1);
    const third = await replay(id);
    expect({ status: third.status, queued: third.body.queued }).toEqual({ status: 202, queued: 1 });
    expect(await deliveriesPerEvent(id)).toEqual([1, 1, 1, 1]);
  });

  it('answers 409 to a replay of a subscription whose replay is still running', async () => {
    const id = await subscribe();
    const held = await holdSubscription(id);
    let running: Promise<HttpAnswer<{ queued?: number }>> | undefined;
    try {
      running = replay(id);
      // The first replay is under way: it waits for the held row.
      await waitFor(async () => (await lockWaiters()) >= 1);
      let second: HttpAnswer<{ code?: string; message?: string }> | undefined;
      const asked = replay(id).then((answer) => (second = answer));
      // Answered, or waiting behind the first (a second session waiting for a lock).
      await waitFor(async () => second !== undefined || (await lockWaiters()) >= 2);
      expect({ status: second?.status, code: second?.body.code }).toEqual({
        status: 409,
        code: 'event_replay_running',
      });
      await held.release();
      await asked;
    } finally {
      await held.release().catch(() => undefined);
    }
    const first = await running;
    expect({ status: first.status, queued: first.body.queued }).toEqual({ status: 202, queued: 4 });
    // Once it has answered, the next one runs (and finds everything pending).
    const again = await replay(id);
    expect({ status: again.status, queued: again.body.queued }).toEqual({ status: 202, queued: 0 });
    expect(await deliveriesPerEvent(id)).toEqual([1, 1, 1, 1]);
  });

  it('rolls back a replay that runs past EVENT_REPLAY_TIMEOUT_MS and says so, nothing queued', async () => {
    const id = await subscribe();
    // An api process with a small statement timeout, on the same database.
    const quick = await startTestApp({
      DATABASE_URL: context.db.url,
      PLATFORM_API_URL: context.platform.url,
      PLATFORM_APP_SECRET: APP_SECRET,
      APP_ROLE: 'api',
      EVENT_REPLAY_TIMEOUT_MS: '1000',
    });
    try {
      const held = await holdSubscription(id);
      let answer: HttpAnswer<{ code?: string; message?: string }> | undefined;
      try {
        void replay(id, quick.url).then((a) => (answer = a));
        // Generous: the statement timeout ends it well before this, or nothing does.
        await waitUntil(() => answer !== undefined, 20_000);
      } finally {
        await held.release();
      }
      expect({ status: answer?.status, code: answer?.body.code }).toEqual({
        status: 422,
        code: 'event_replay_timeout',
      });
      expect(answer?.body.message).toMatch(/EVENT_REPLAY_TIMEOUT_MS.*nothing was queued/);
      // Nothing committed, though the replay had inserted its rows before it waited.
      expect(await deliveriesPerEvent(id)).toEqual([]);
      // Without the wait, the same replay goes through.
      const after = await replay(id, quick.url);
      expect({ status: after.status, queued: after.body.queued }).toEqual({
        status: 202,
        queued: 4,
      });
    } finally {
      await quick.close();
    }
  });
});
