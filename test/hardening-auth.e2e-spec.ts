import { randomBytes } from 'node:crypto';
import { FakePlatform } from './support/fake-platform.js';
import {
  ADMIN_PASSWORD,
  TestDatabase,
  adminToken,
  createApiKey,
  createInstance,
  http,
  startTestApp,
  type TestApp,
} from './support/test-app.js';

describe('authentication under attack', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  const apps: TestApp[] = [];

  /** A service with its own Redis prefix, so each test's counters start at zero. */
  const app = async (overrides: Record<string, string> = {}) => {
    const started = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      REDIS_PREFIX: `auth${randomBytes(4).toString('hex')}`,
      ...overrides,
    });
    apps.push(started);
    return started;
  };
  const login = (
    service: TestApp,
    password: string,
    headers: Record<string, string> = {},
    username = 'admin',
  ) =>
    http<{ token?: string; code?: string }>(service.url, 'POST', '/admin/auth/login', {
      body: { username, password },
      headers,
    });
  const from = (address: string) => ({ 'x-forwarded-for': address });

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
  });

  afterAll(async () => {
    for (const started of apps) await started.close();
    await platform.stop();
    await db.drop();
  });

  it('ignores X-Forwarded-For from a client that is not a trusted proxy', async () => {
    const service = await app({ TRUST_PROXY: '10.0.0.0/8' });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const answer = await login(service, `wrong-${i}`, { 'x-forwarded-for': `198.51.100.${i}` });
      statuses.push(answer.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(20).fill(429));
  });

  it('gives 100 concurrent guesses no more than 10 tries, even with the right password among them', async () => {
    const service = await app();
    const guesses = Array.from({ length: 100 }, (_, i) =>
      i === 89 ? ADMIN_PASSWORD : `guess-${i}`,
    );
    const answers = await Promise.all(guesses.map((password) => login(service, password)));
    const count = (status: number) => answers.filter((answer) => answer.status === status).length;
    expect(count(200) + count(401)).toBe(10);
    expect(count(429)).toBe(90);
    // The right password got a 200 only if it was among the first ten counted.
    if (answers[89].status === 200) expect(count(401)).toBe(9);
  });

  it('keeps a distributed guesser out without locking the admin out (console and queue dashboard)', async () => {
    const service = await app({ TRUST_PROXY: '127.0.0.1' });
    const attackers = ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4', '203.0.113.5'];
    // 50 wrong passwords for the admin's username, 10 from each of five addresses, all at once.
    const guesses = await Promise.all(
      attackers.flatMap((address) =>
        Array.from({ length: 10 }, (_, i) => login(service, `wrong-${i}`, from(address))),
      ),
    );
    expect(guesses.map((answer) => answer.status)).toEqual(Array(50).fill(401));

    // Each attacking address is out for the window, the right password included.
    for (const address of attackers) {
      const more = await login(service, ADMIN_PASSWORD, from(address));
      expect(more.status).toBe(429);
      expect(more.body.code).toBe('rate_limited');
      expect(Number(more.headers.get('retry-after'))).toBeGreaterThan(800);
    }

    // The admin, from another address, gets in: slowed by the username's failures, not refused.
    const started = Date.now();
    const admin = await login(service, ADMIN_PASSWORD, from('198.51.100.10'));
    expect(admin.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    const basic = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;
    const dashboard = await http(service.url, 'GET', '/admin/queues/api/queues', {
      headers: { authorization: basic, ...from('198.51.100.11') },
    });
    expect(dashboard.status).toBe(200);
    // A wrong password from a new address is a plain 401, not a lockout.
    const wrong = await login(service, 'one-more-guess', from('198.51.100.12'));
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('invalid_credentials');
  }, 30_000);

  it('limits one address across usernames too', async () => {
    const service = await app({ TRUST_PROXY: '127.0.0.1' });
    // 20 failures from one address, 5 for each of four usernames (under the 10 per username).
    for (let i = 0; i < 20; i++) {
      const answer = await login(service, `wrong-${i}`, from('203.0.113.9'), `user-${i % 4}`);
      expect(answer.status).toBe(401);
    }
    const locked = await login(service, ADMIN_PASSWORD, from('203.0.113.9'));
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('rate_limited');
    expect((await login(service, ADMIN_PASSWORD, from('203.0.113.10'))).status).toBe(200);
  });

  it('ends the sessions issued before a password change', async () => {
    const prefix = `pw${randomBytes(4).toString('hex')}`;
    const before = await app({ REDIS_PREFIX: prefix });
    const oldToken = await adminToken(before.url);
    expect((await http(before.url, 'GET', '/admin/instances', { token: oldToken })).status).toBe(
      200,
    );
    await before.close();
    apps.splice(apps.indexOf(before), 1);

    const after = await app({ REDIS_PREFIX: prefix, ADMIN_PASSWORD: 'a-brand-new-password' });
    const refused = await http(after.url, 'GET', '/admin/instances', { token: oldToken });
    expect(refused.status).toBe(401);
    expect(
      (await http(after.url, 'GET', '/admin/queues/api/queues', { token: oldToken })).status,
    ).toBe(401);
    const newToken = (await login(after, 'a-brand-new-password')).body.token!;
    expect((await http(after.url, 'GET', '/admin/instances', { token: newToken })).status).toBe(
      200,
    );
  });

  it('limits each API key to its rate, with a Retry-After that lets it through', async () => {
    const service = await app({ API_KEY_RATE_LIMIT: '5', API_KEY_RATE_BURST: '5' });
    const jwt = await adminToken(service.url);
    const instanceId = await createInstance(service.url, jwt, '106540352200701');
    const keyFor = (name: string) => createApiKey(service.url, jwt, instanceId, name);
    const [busy, calm] = [await keyFor('busy'), await keyFor('calm')];
    const read = (key: string) => http(service.url, 'GET', '/messages/wamid.none', { token: key });

    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push((await read(busy)).status);
    expect(statuses.slice(0, 5)).toEqual(Array(5).fill(404));
    expect(statuses.slice(5)).toEqual(Array(3).fill(429));
    const limited = await read(busy);
    expect(limited.body).toMatchObject({ code: 'rate_limited' });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // Another key is not held back by this one.
    expect((await read(calm)).status).toBe(404);
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    expect((await read(busy)).status).toBe(404);
  });

  it('limits verification codes to 3 per number per 30 minutes', async () => {
    const service = await app();
    const jwt = await adminToken(service.url);
    const instanceId = await createInstance(service.url, jwt, '106540352200702');
    const key = await createApiKey(service.url, jwt, instanceId, 'sms');
    const request = () =>
      http(service.url, 'POST', '/instance/request_code', {
        token: key,
        body: { code_method: 'SMS', language: 'en' },
      });
    expect([(await request()).status, (await request()).status, (await request()).status]).toEqual([
      200, 200, 200,
    ]);
    const fourth = await request();
    expect(fourth.status).toBe(429);
    expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThan(500);
    expect(platform.callsTo(/request_code$/)).toHaveLength(3);
  });
});
