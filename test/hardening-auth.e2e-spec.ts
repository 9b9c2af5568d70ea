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
  type HttpAnswer,
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

  const basic = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;
  /** The known-device cookie an answer set, as the browser sends it back. */
  const deviceCookie = (answer: HttpAnswer<unknown>) =>
    (answer.headers.get('set-cookie') ?? '').split(';')[0];
  const count = (answers: Array<HttpAnswer<unknown>>, status: number) =>
    answers.filter((answer) => answer.status === status).length;
  const attackers = ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4', '203.0.113.5'];
  /** 50 wrong passwords for the admin's username, 10 from each of five addresses, all at once. */
  const distributedAttack = async (service: TestApp) => {
    const guesses = await Promise.all(
      attackers.flatMap((address) =>
        Array.from({ length: 10 }, (_, i) => login(service, `wrong-${i}`, from(address))),
      ),
    );
    // The first 11 are checked; beyond 10 failures the username's pace refuses most of the rest.
    expect(count(guesses, 401) + count(guesses, 429)).toBe(50);
    expect(count(guesses, 401)).toBeGreaterThan(10);
  };
  /** An IPv6 address in a /64 of its own for each n. */
  const network = (n: number) =>
    `2001:db8:${(n >> 16).toString(16)}:${(n & 0xffff).toString(16)}::1`;

  it('paces guesses for a username across all addresses once it is under attack, and still lets the admin in', async () => {
    const service = await app({ TRUST_PROXY: '127.0.0.1' });
    await distributedAttack(service);

    // 100 more guesses at once, each from a /64 of its own: the username's pace checks few of them.
    const spread = await Promise.all(
      Array.from({ length: 100 }, (_, i) => login(service, `spread-${i}`, from(network(i)))),
    );
    expect(count(spread, 401) + count(spread, 429)).toBe(100);
    expect(count(spread, 429)).toBeGreaterThanOrEqual(50);
    const paced = spread.find((answer) => answer.status === 429)!;
    expect(paced.body.code).toBe('rate_limited');
    expect(Number(paced.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // The burst past, the admin from a fresh address and browser gets in (paced, not refused).
    const admin = await login(service, ADMIN_PASSWORD, from('198.51.100.10'));
    expect(admin.status).toBe(200);
    expect(admin.headers.get('set-cookie')).toMatch(
      /^mc_known_device=[^;]+; Path=\/admin; Max-Age=\d+; HttpOnly; SameSite=Strict$/,
    );
  }, 60_000);

  it("never holds the admin's known browser back while guessers keep the username paced (console and queue dashboard)", async () => {
    const service = await app({ TRUST_PROXY: '127.0.0.1' });
    const cookie = deviceCookie(await login(service, ADMIN_PASSWORD, from('198.51.100.20')));
    expect(cookie).toMatch(/^mc_known_device=/);
    await distributedAttack(service);

    // The attack goes on beside the admin: 5 guessers, 8 guesses each, each from a fresh /64.
    const attack = Promise.all(
      Array.from({ length: 5 }, async (_, worker) => {
        const answers: Array<HttpAnswer<unknown>> = [];
        for (let i = 0; i < 8; i++) {
          answers.push(await login(service, `go-on-${i}`, from(network(1000 + worker * 8 + i))));
        }
        return answers;
      }),
    ).then((workers) => workers.flat());

    const admin: number[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await login(service, ADMIN_PASSWORD, {
        cookie,
        ...from(`198.51.100.${30 + i}`),
      });
      admin.push(answer.status);
    }
    // The dashboard's page loads its assets and polls in parallel, all with the Basic credentials.
    const dashboard = await Promise.all(
      Array.from({ length: 20 }, () =>
        http(service.url, 'GET', '/admin/queues/api/queues', {
          headers: { authorization: basic, cookie, ...from('198.51.100.40') },
        }),
      ),
    );
    const guesses = await attack;

    expect(admin).toEqual(Array(5).fill(200));
    expect(dashboard.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    expect(count(guesses, 401) + count(guesses, 429)).toBe(40);
    expect(count(guesses, 429)).toBeGreaterThan(0);
    // The dashboard still refuses wrong passwords, and counts them: 10 from one address lock it out.
    const wrong = `Basic ${Buffer.from('admin:not-it').toString('base64')}`;
    const refused: number[] = [];
    for (let i = 0; i < 11; i++) {
      const answer = await http(service.url, 'GET', '/admin/queues/api/queues', {
        headers: { authorization: wrong, cookie, ...from('198.51.100.41') },
      });
      refused.push(answer.status);
    }
    expect(refused).toEqual([...Array(10).fill(401), 429]);
  }, 60_000);

  it('gives a burst of dashboard guesses with a known-device cookie no more than 10 tries from one address', async () => {
    const service = await app({ TRUST_PROXY: '127.0.0.1' });
    const cookie = deviceCookie(await login(service, ADMIN_PASSWORD, from('198.51.100.50')));
    expect(cookie).toMatch(/^mc_known_device=/);
    // 29 wrong passwords and, sent last, the right one, all at once from one address.
    const passwords = [...Array.from({ length: 29 }, (_, i) => `burst-${i}`), ADMIN_PASSWORD];
    const answers = await Promise.all(
      passwords.map((password) =>
        http(service.url, 'GET', '/admin/queues/api/queues', {
          headers: {
            authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`,
            cookie,
            ...from('198.51.100.51'),
          },
        }),
      ),
    );
    expect(count(answers, 401)).toBe(10);
    expect(count(answers, 429)).toBe(20);
    expect(answers[29].status).toBe(429);
  });

  it('stops treating a known-device cookie as known after 5 failures with it', async () => {
    const service = await app({ TRUST_PROXY: '127.0.0.1' });
    const cookie = deviceCookie(await login(service, ADMIN_PASSWORD, from('198.51.100.60')));
    expect(cookie).toMatch(/^mc_known_device=/);
    await distributedAttack(service);
    // The stolen cookie, 20 guesses at once, each from a /64 of its own: 5 skip the pace, the rest wait for it.
    const guesses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        login(service, `stolen-${i}`, { cookie, ...from(network(2000 + i)) }),
      ),
    );
    expect(count(guesses, 401) + count(guesses, 429)).toBe(20);
    expect(count(guesses, 429)).toBeGreaterThanOrEqual(10);
    const paced = guesses.find((answer) => answer.status === 429)!;
    expect(paced.body.code).toBe('rate_limited');
  }, 60_000);

  it('counts an IPv6 client by its /64 and an IPv4-mapped address as IPv4', async () => {
    const service = await app({ TRUST_PROXY: '127.0.0.1' });
    // 20 failures from two addresses of one /64, 5 for each of four usernames.
    for (let i = 0; i < 20; i++) {
      const address = i % 2 === 0 ? '2001:db8:5:6::1' : '2001:db8:5:6:ffff:ffff:ffff:fffe';
      expect((await login(service, `wrong-${i}`, from(address), `user-${i % 4}`)).status).toBe(401);
    }
    const sameNetwork = await login(service, ADMIN_PASSWORD, from('2001:db8:5:6::abcd'));
    expect(sameNetwork.status).toBe(429);
    expect(sameNetwork.body.code).toBe('rate_limited');
    expect((await login(service, ADMIN_PASSWORD, from('2001:db8:5:7::1'))).status).toBe(200);

    for (let i = 0; i < 20; i++) {
      const answer = await login(
        service,
        `wrong-${i}`,
        from('::ffff:203.0.113.20'),
        `user-${i % 4}`,
      );
      expect(answer.status).toBe(401);
    }
    expect((await login(service, ADMIN_PASSWORD, from('203.0.113.20'))).status).toBe(429);
  });

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
