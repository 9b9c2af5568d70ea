import {
  deliverSigned,
  envelope,
  simulateMessage,
  type WebhookTarget,
  simulateStatus,
} from './support/fake-platform.js';
import { LiveStreamClient, type StreamEvent } from './support/live-stream.js';
import { startServiceProcess } from './support/service-process.js';
import {
  APP_SECRET,
  adminToken,
  createApiKey,
  createInstance,
  http,
  useTestService,
  waitFor,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352288201';
const OTHER_NUMBER_ID = '106540352288202';
const PASSWORD = 'correct horse battery staple';

interface LiveMessage {
  contact: { wa_id: string | null; handoff: { active: boolean; by: string | null } };
  message: { wamid: string; direction: string; status: string; sent_by: string | null };
}

let sequence = 0;

describe('GET /live: an instance’s changes as they are stored, on every api process', () => {
  // Credentials are checked again at each keep-alive: every second here.
  const context = useTestService({ env: { LIVE_KEEPALIVE_S: '1' } });
  let service: TestApp;
  let db: TestDatabase;
  let admin: string;
  let apiKey: string;
  let operator: string;
  let instanceId: string;
  let otherId: string;
  const streams: LiveStreamClient[] = [];

  const target = (): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  });
  const customerWrites = async (from: string, text = 'hello'): Promise<string> => {
    const wamid = `wamid.live${++sequence}`;
    const status = await deliverSigned(
      target(),
      envelope(target(), 'messages', {
        contacts: [{ profile: { name: `User ${from}` }, wa_id: from }],
        messages: [
          {
            from,
            id: wamid,
            timestamp: String(Math.floor(Date.now() / 1000)),
            type: 'text',
            text: { body: text },
          },
        ],
      }),
    );
    expect(status).toBe(200);
    return wamid;
  };
  const statusArrives = async (wamid: string, to: string, status: 'delivered' | 'read') => {
    expect(await simulateStatus(target(), wamid, status, { waId: to })).toBe(200);
  };
  const open = async (token: string, query = '', headers: Record<string, string> = {}) => {
    const stream = await LiveStreamClient.open(service.url, token, query, headers);
    streams.push(stream);
    return stream;
  };
  const ready = async (token: string, query = '') => {
    const stream = await open(token, query);
    expect(stream.status).toBe(200);
    await stream.next((e) => e.event === 'ready');
    return stream;
  };
  const messageEvent = (wamid: string, status?: string) => (e: StreamEvent) =>
    e.event === 'message' &&
    (e.data as unknown as LiveMessage).message.wamid === wamid &&
    (status === undefined || (e.data as unknown as LiveMessage).message.status === status);

  beforeAll(async () => {
    ({ service, db } = context);
    admin = await adminToken(service.url);
    instanceId = await createInstance(service.url, admin, PHONE_NUMBER_ID, 'Live store');
    otherId = await createInstance(service.url, admin, OTHER_NUMBER_ID, 'Other store');
    apiKey = await createApiKey(service.url, admin, instanceId, 'live');
    await http(service.url, 'POST', '/admin/accounts', {
      token: admin,
      body: {
        username: 'lia',
        display_name: 'Lia',
        role: 'operator',
        password: PASSWORD,
        instance_ids: [instanceId],
      },
    });
    operator = (
      await http<{ token: string }>(service.url, 'POST', '/admin/auth/login', {
        body: { username: 'lia', password: PASSWORD },
      })
    ).body.token;
  });

  afterEach(async () => {
    await Promise.all(streams.splice(0).map((s) => s.close()));
  });

  it('sends a customer’s message, a person’s send, its statuses and a take-over as they are stored', async () => {
    const stream = await ready(operator);
    expect(stream.of('ready')[0].data).toEqual({ resumed: false });

    const inbound = await customerWrites('5511966660001');
    const received = (await stream.next(messageEvent(inbound))).data as unknown as LiveMessage;
    expect(received.message).toMatchObject({ direction: 'inbound', status: 'received' });
    expect(received.contact.wa_id).toBe('5511966660001');

    const sent = await http<{ wamid: string }>(service.url, 'POST', '/send/text', {
      token: operator,
      body: { to: '5511966660001', body: 'Lia here' },
    });
    expect(sent.status).toBe(200);
    const outbound = (await stream.next(messageEvent(sent.body.wamid)))
      .data as unknown as LiveMessage;
    expect(outbound.message).toMatchObject({ direction: 'outbound', sent_by: 'person' });
    // The person's send paused the agent: the contact that came with it says so.
    expect(outbound.contact.handoff).toMatchObject({ active: true });

    await statusArrives(sent.body.wamid, '5511966660001', 'delivered');
    await stream.next(messageEvent(sent.body.wamid, 'delivered'));
    await statusArrives(sent.body.wamid, '5511966660001', 'read');
    await stream.next(messageEvent(sent.body.wamid, 'read'));

    await http(service.url, 'DELETE', '/contacts/5511966660001/handoff', { token: apiKey });
    const handedBack = await stream.next(
      (e) =>
        e.event === 'contact' &&
        (e.data.contact as { handoff: { active: boolean } }).handoff.active === false,
    );
    expect(handedBack.data.contact).toMatchObject({ wa_id: '5511966660001' });
    // Ids grow: a reconnecting browser resumes after the last one it saw.
    const seqs = stream.events.filter((e) => e.event !== 'ready').map((e) => e.id!.split('.')[1]);
    expect(seqs.map(Number)).toEqual([...seqs.map(Number)].sort((a, b) => a - b));
  });

  it('sends every message of a burst, and what comes after it', async () => {
    const stream = await ready(apiKey);
    // Deliveries at once: notices come while the feed is still reading earlier ones.
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        customerWrites(`55119666601${String(i).padStart(2, '0')}`),
      ),
    );
    for (const wamid of burst) await stream.next(messageEvent(wamid));
    const after = await customerWrites('5511966660199');
    await stream.next(messageEvent(after));
  });

  it('sends nothing of another instance, and refuses an operator another instance', async () => {
    const refused = await open(operator, `?instance_id=${otherId}`);
    expect(refused.status).toBe(403);
    expect(refused.error).toMatchObject({ code: 'instance_forbidden' });

    const mine = await ready(apiKey);
    const others = await ready(admin, `?instance_id=${otherId}`);
    const wamid = await customerWrites('5511966660002');
    await mine.next(messageEvent(wamid));
    // The other instance's own message reaches its stream after this one was stored.
    const elsewhere = { ...target(), phoneNumberId: OTHER_NUMBER_ID };
    const theirs = `wamid.live-other${++sequence}`;
    const status = await deliverSigned(
      elsewhere,
      envelope(elsewhere, 'messages', {
        contacts: [{ profile: { name: 'Other' }, wa_id: '5511966660098' }],
        messages: [
          {
            from: '5511966660098',
            id: theirs,
            timestamp: String(Math.floor(Date.now() / 1000)),
            type: 'text',
            text: { body: 'elsewhere' },
          },
        ],
      }),
    );
    expect(status).toBe(200);
    await others.next(messageEvent(theirs));
    expect(others.events.filter(messageEvent(wamid))).toEqual([]);
    expect(mine.events.filter(messageEvent(theirs))).toEqual([]);
  });

  it('resumes after Last-Event-ID with what was missed; an id it cannot vouch for starts over', async () => {
    const first = await ready(apiKey);
    const seen = await customerWrites('5511966660003', 'one');
    await first.next(messageEvent(seen));
    const lastId = first.lastId()!;
    // Another stream of the process sees the missed message go by: the process has it to replay.
    const witness = await ready(operator);
    await first.close();

    const missed = await customerWrites('5511966660003', 'two');
    await witness.next(messageEvent(missed));
    const resumed = await open(apiKey, '', { 'last-event-id': lastId });
    const replayed = await resumed.next(messageEvent(missed));
    const readyAt = resumed.events.findIndex((e) => e.event === 'ready');
    expect(resumed.events.indexOf(replayed)).toBeLessThan(readyAt);
    expect(resumed.events[readyAt].data).toEqual({ resumed: true });
    expect(resumed.events.filter(messageEvent(seen))).toEqual([]);

    const unknown = await open(apiKey, '', { 'last-event-id': '0123456789abcdef.5' });
    await unknown.next((e) => e.event === 'ready');
    expect(unknown.events.map((e) => e.event)).toEqual(['reset', 'ready']);
    expect(unknown.of('ready')[0].data).toEqual({ resumed: false });
  });

  it('ends a stream once its key is revoked, or its account disabled', async () => {
    const created = await http<{ id: string; key: string }>(
      service.url,
      'POST',
      '/admin/api-keys',
      {
        token: admin,
        body: { name: 'short-lived', instance_id: instanceId },
      },
    );
    const byKey = await ready(created.body.key);
    const created2 = await http<{ id: string }>(service.url, 'POST', '/admin/accounts', {
      token: admin,
      body: {
        username: 'leo',
        display_name: 'Leo',
        role: 'operator',
        password: PASSWORD,
        instance_ids: [instanceId],
      },
    });
    const leo = (
      await http<{ token: string }>(service.url, 'POST', '/admin/auth/login', {
        body: { username: 'leo', password: PASSWORD },
      })
    ).body.token;
    const byPerson = await ready(leo);
    const unchanged = await ready(apiKey);

    await http(service.url, 'DELETE', `/admin/api-keys/${created.body.id}`, { token: admin });
    await http(service.url, 'PATCH', `/admin/accounts/${created2.body.id}`, {
      token: admin,
      body: { disabled: true },
    });
    await byKey.next((e) => e.event === 'ended');
    await byPerson.next((e) => e.event === 'ended');
    await waitFor(() => byKey.ended && byPerson.ended);
    // Another stream goes on: it still gets what is stored.
    const wamid = await customerWrites('5511966660005');
    await unchanged.next(messageEvent(wamid));
    expect(unchanged.ended).toBe(false);
  });

  it('a stream on a second api process sees what the first stored', async () => {
    const second = await startServiceProcess({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: context.platform.url,
      REDIS_PREFIX: service.config.REDIS_PREFIX,
      APP_ROLE: 'api',
    });
    try {
      const elsewhere = await LiveStreamClient.open(second.url, apiKey);
      streams.push(elsewhere);
      await elsewhere.next((e) => e.event === 'ready');
      const sent = await http<{ wamid: string }>(service.url, 'POST', '/send/text', {
        token: apiKey,
        body: { to: '5511966660003', body: 'from the first process' },
      });
      await elsewhere.next(messageEvent(sent.body.wamid));
      await elsewhere.close();
    } finally {
      await second.stop();
    }
  });

  it('starts over when the connection it listens on is lost, and goes on streaming', async () => {
    const stream = await ready(apiKey);
    const [killed] = await db.query<{ killed: boolean }>(
      `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
       WHERE datname = current_database() AND query = 'LISTEN mc_live'`,
    );
    expect(killed.killed).toBe(true);
    await stream.next((e) => e.event === 'reset', 20_000);
    const wamid = await customerWrites('5511966660004');
    await stream.next(messageEvent(wamid));
  });
});

describe('GET /live under a flood: a stream over LIVE_STREAM_RATE rests, then starts over', () => {
  const context = useTestService({ env: { LIVE_STREAM_RATE: '5', LIVE_STREAM_REST_S: '1' } });
  const streams: LiveStreamClient[] = [];
  let key: string;
  let target: WebhookTarget;

  beforeAll(async () => {
    const { service } = context;
    const admin = await adminToken(service.url);
    const instanceId = await createInstance(service.url, admin, PHONE_NUMBER_ID, 'Busy store');
    key = await createApiKey(service.url, admin, instanceId, 'flood');
    target = {
      url: `${service.url}/webhooks/messenger`,
      appSecret: APP_SECRET,
      phoneNumberId: PHONE_NUMBER_ID,
    };
  });

  afterEach(async () => {
    await Promise.all(streams.splice(0).map((s) => s.close()));
  });

  /** `count` customers write at once (one delivery), their wamids prefixed `tag`. */
  const flood = async (tag: string, count: number) => {
    const from = (n: number) => `55119777${String(n).padStart(5, '0')}`;
    const status = await deliverSigned(
      target,
      envelope(target, 'messages', {
        contacts: Array.from({ length: count }, (_, n) => ({
          profile: { name: `C${n}` },
          wa_id: from(n),
        })),
        messages: Array.from({ length: count }, (_, n) => ({
          from: from(n),
          id: `wamid.${tag}${n}`,
          timestamp: String(Math.floor(Date.now() / 1000)),
          type: 'text',
          text: { body: `${tag} ${n}` },
        })),
      }),
    );
    expect(status).toBe(200);
  };
  const metric = async (url: string, name: string): Promise<number> => {
    const text = (await http(url, 'GET', '/metrics')).text;
    return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  };

  it('sends a second’s worth, then nothing, then `reset`, then streams again', async () => {
    const { service } = context;
    const stream = await LiveStreamClient.open(service.url, key);
    streams.push(stream);
    await stream.next((e) => e.event === 'ready');

    // 40 customers at once: far more than 5 events a second.
    await flood('floodA', 40);
    await stream.next((e) => e.event === 'reset', 20_000);
    const beforeReset = stream.events.slice(
      0,
      stream.events.findIndex((e) => e.event === 'reset'),
    );
    const sent = beforeReset.filter((e) => e.event === 'message');
    expect(sent.length).toBeGreaterThanOrEqual(5);
    expect(sent.length).toBeLessThan(40);
    expect(await metric(service.url, 'live_stream_rests_total')).toBeGreaterThanOrEqual(1);
    // Everything was stored: the stream's reader gets it from the API after the reset.
    const [{ stored }] = await context.db.query<{ stored: number }>(
      `SELECT count(*)::int AS stored FROM messages WHERE wamid LIKE 'wamid.floodA%'`,
    );
    expect(stored).toBe(40);

    const after = await simulateMessage(target, { waId: '5511977799999' }, 'after the flood');
    expect(after.status).toBe(200);
    await stream.next(
      (e) =>
        e.event === 'message' && (e.data as unknown as LiveMessage).message.wamid === after.wamid,
    );
  });

  it('reads nothing while every stream of the instance rests; a stream resuming from before that starts over', async () => {
    // A second api process whose streams rest for longer than this test takes.
    const second = await startServiceProcess({
      DATABASE_URL: context.db.url,
      PLATFORM_API_URL: context.platform.url,
      REDIS_PREFIX: context.service.config.REDIS_PREFIX,
      APP_ROLE: 'api',
      LIVE_STREAM_RATE: '5',
      LIVE_STREAM_REST_S: '300',
    });
    try {
      const resting = await LiveStreamClient.open(second.url, key);
      streams.push(resting);
      await resting.next((e) => e.event === 'ready');
      await flood('floodB', 40);
      await waitFor(
        async () => (await metric(second.url, 'live_stream_rests_total')) === 1,
        20_000,
      );
      const firstSeen = resting.events.find((e) => e.event === 'message')!.id!;

      // More changes while it rests: that process does not read them.
      await flood('floodC', 10);
      await waitFor(
        async () => (await metric(second.url, 'live_changes_unread_total')) >= 1,
        20_000,
      );
      // Nothing of them reached the resting stream.
      const wamids = resting.events
        .filter((e) => e.event === 'message')
        .map((e) => (e.data as unknown as LiveMessage).message.wamid);
      expect(wamids.filter((w) => w.startsWith('wamid.floodC'))).toEqual([]);
      expect(wamids.length).toBeLessThan(40);

      // Resuming from before the unread changes cannot be vouched for: start over.
      const resumed = await LiveStreamClient.open(second.url, key, '', {
        'last-event-id': firstSeen,
      });
      streams.push(resumed);
      await resumed.next((e) => e.event === 'ready');
      expect(resumed.events.map((e) => e.event).slice(0, 2)).toEqual(['reset', 'ready']);
    } finally {
      await second.stop();
    }
  });
});
