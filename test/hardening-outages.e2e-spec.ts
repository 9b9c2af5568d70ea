import { randomBytes } from 'node:crypto';
import { FakePlatform, type RecordedRequest } from './support/fake-platform.js';
import { TcpProxy } from './support/tcp-proxy.js';
import {
  TestDatabase,
  adminToken,
  createApiKey,
  createInstance,
  http,
  startTestApp,
  type TestApp,
  waitFor,
} from './support/test-app.js';

const TO = '5511988000001';

describe('PostgreSQL away: 503 (not a hang), nothing sent, and no accepted send lost', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  let proxy: TcpProxy;
  let service: TestApp;
  let jwt: string;
  let instanceId: string;
  let cachedKey: string;
  let freshKey: string;

  const newKey = (name: string) => createApiKey(service.url, jwt, instanceId, name);
  const sendText = (key: string, body = 'hi') =>
    http<{ code?: string; wamid?: string }>(service.url, 'POST', '/send/text', {
      token: key,
      body: { to: TO, body },
    });
  const sends = () => platform.callsTo(/\/messages$/);

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
    proxy = await TcpProxy.start('127.0.0.1', 5432);
    service = await startTestApp({
      DATABASE_URL: db.url.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`),
      PLATFORM_API_URL: platform.url,
      SERVICE_WINDOW_ENFORCE: 'false',
      REDIS_PREFIX: `outage${randomBytes(4).toString('hex')}`,
    });
    jwt = await adminToken(service.url);
    instanceId = await createInstance(service.url, jwt, '106540352200901');
    cachedKey = await newKey('cached');
    freshKey = await newKey('fresh');
    // The first key and the instance are now in the process's cache.
    expect((await sendText(cachedKey)).status).toBe(200);
  });

  afterAll(async () => {
    await service?.close();
    await proxy?.stop();
    await platform?.stop();
    await db?.drop();
  });

  beforeEach(() => platform.reset());

  it('answers 503 unavailable with Retry-After on every route, and sends nothing', async () => {
    proxy.cutOff();
    try {
      const requests: Array<[string, string, string | undefined]> = [
        ['POST', '/send/text', cachedKey],
        ['POST', '/send/text', freshKey],
        ['GET', '/admin/instances', jwt],
        ['GET', '/messages/wamid.anything', cachedKey],
        [
          'GET',
          '/webhooks/messenger?hub.mode=subscribe&hub.verify_token=unknown-token&hub.challenge=1',
          undefined,
        ],
      ];
      // An answer, not a hang (which would end the test at its own timeout).
      for (const [method, path, token] of requests) {
        const answer = await http<{ code?: string }>(service.url, method, path, {
          token,
          body: method === 'POST' ? { to: TO, body: 'during the outage' } : undefined,
        });
        expect({ path, status: answer.status, code: answer.body.code }).toEqual({
          path,
          status: 503,
          code: 'unavailable',
        });
        expect(answer.headers.get('retry-after')).toBe('5');
      }
      expect(sends()).toHaveLength(0);
    } finally {
      proxy.restore();
    }
    await waitFor(async () => (await sendText(cachedKey, 'back')).status === 200, 15_000);
  }, 60_000);

  it('records a send the platform accepted just as PostgreSQL went away, once it is back', async () => {
    const wamid = `wamid.parked-${randomBytes(4).toString('hex')}`;
    platform.on('POST', /\/messages$/, (request: RecordedRequest) => {
      if ((request.body as { type?: string }).type !== 'text') return undefined;
      // The database goes while the platform is taking the message.
      proxy.cutOff();
      return { delayMs: 200, body: { messaging_product: 'messenger', messages: [{ id: wamid }] } };
    });
    let answer;
    try {
      answer = await sendText(cachedKey, 'accepted, then the database went');
      expect(answer.status).toBe(200);
      expect(answer.body.wamid).toBe(wamid);
    } finally {
      proxy.restore();
    }
    // Parked in Redis while PostgreSQL was away, written by a worker once it is back.
    await waitFor(async () => {
      const stored = await http(service.url, 'GET', `/messages/${wamid}`, { token: cachedKey });
      return stored.status === 200;
    }, 30_000);
    const [row] = await db.query<{ contact: string; type: string; status: string }>(
      'SELECT contact, type, status FROM messages WHERE wamid = $1',
      [wamid],
    );
    expect(row).toEqual({ contact: TO, type: 'text', status: 'sent' });
  }, 60_000);
});
