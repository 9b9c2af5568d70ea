import { credentialsStamp } from '../src/auth/jwt.strategy.js';
import { createHmac } from 'node:crypto';
import type { FakePlatform } from './support/fake-platform.js';
import {
  ADMIN_PASSWORD,
  adminToken,
  http,
  startTestApp,
  useTestService,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

function base64url(value: object | string): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString(
    'base64url',
  );
}

function signJwt(payload: object, secret: string, header: object = { alg: 'HS256', typ: 'JWT' }) {
  const unsigned = `${base64url(header)}.${base64url(payload)}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

describe('admin authentication', () => {
  const context = useTestService();
  let db: TestDatabase;
  let platform: FakePlatform;
  let service: TestApp;

  beforeAll(() => {
    ({ db, platform, service } = context);
  });

  it('logs in with the configured credentials and returns an HS256 JWT', async () => {
    const answer = await http<{ token: string; username: string; expires_in: number }>(
      service.url,
      'POST',
      '/admin/auth/login',
      { body: { username: 'admin', password: ADMIN_PASSWORD } },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.username).toBe('admin');
    expect(answer.body.expires_in).toBe(3600);
    const [header, payload] = answer.body.token
      .split('.')
      .slice(0, 2)
      .map(
        (part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, never>,
      );
    expect(header.alg).toBe('HS256');
    expect(payload.sub).toBe('admin');
    expect(Number(payload.exp) - Number(payload.iat)).toBe(3600);

    const list = await http(service.url, 'GET', '/admin/instances', { token: answer.body.token });
    expect(list.status).toBe(200);
  });

  it('refuses wrong credentials with 401 invalid_credentials', async () => {
    for (const body of [
      { username: 'admin', password: 'wrong-password' },
      { username: 'root', password: ADMIN_PASSWORD },
    ]) {
      const answer = await http(service.url, 'POST', '/admin/auth/login', {
        body,
        headers: { 'x-forwarded-for': '10.0.0.1' },
      });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({
        statusCode: 401,
        error: 'Unauthorized',
        code: 'invalid_credentials',
      });
    }
  });

  it('refuses a login body with missing fields, naming each', async () => {
    const answer = await http(service.url, 'POST', '/admin/auth/login', { body: {} });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'validation_failed' });
    const fields = (answer.body as { details: Array<{ field: string }> }).details.map(
      (d) => d.field,
    );
    expect(new Set(fields)).toEqual(new Set(['username', 'password']));
  });

  it.each([
    ['no header', undefined],
    ['garbage', 'Bearer not.a.jwt'],
    ['wrong scheme', 'Basic YWRtaW46cGFzcw=='],
  ])('refuses %s with 401 unauthorized', async (_name, authorization) => {
    const answer = await http(service.url, 'GET', '/admin/instances', {
      headers: authorization ? { authorization } : {},
    });
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ code: 'unauthorized' });
  });

  it('refuses an expired token, a token signed with another key, and alg none', async () => {
    const secret = service.config.JWT_SECRET;
    const now = Math.floor(Date.now() / 1000);
    // The stamp of the current credentials, as POST /admin/auth/login puts it in a token.
    const cv = credentialsStamp(service.config);
    const expired = signJwt({ sub: 'admin', cv, iat: now - 7200, exp: now - 3600 }, secret);
    const forged = signJwt(
      { sub: 'admin', cv, iat: now, exp: now + 3600 },
      'another-secret-of-32-characters!!',
    );
    const unstamped = signJwt({ sub: 'admin', iat: now, exp: now + 3600 }, secret);
    const none = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ sub: 'admin', exp: now + 3600 })}.`;
    const hs512 = signJwt({ sub: 'admin', iat: now, exp: now + 3600 }, secret, {
      alg: 'HS512',
      typ: 'JWT',
    });
    const otherUser = signJwt({ sub: 'mallory', cv, iat: now, exp: now + 3600 }, secret);
    for (const token of [expired, forged, none, hs512, otherUser, unstamped]) {
      const answer = await http(service.url, 'GET', '/admin/instances', { token });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ code: 'unauthorized' });
    }
    const valid = signJwt({ sub: 'admin', cv, iat: now, exp: now + 60 }, secret);
    expect((await http(service.url, 'GET', '/admin/instances', { token: valid })).status).toBe(200);
  });

  it('refuses a token without exp, rightly signed, on the admin routes and the queue dashboard', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cv = credentialsStamp(service.config);
    const forever = signJwt({ sub: 'admin', cv, iat: now }, service.config.JWT_SECRET);
    for (const path of ['/admin/instances', '/admin/queues/api/queues']) {
      const answer = await http(service.url, 'GET', path, { token: forever });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ code: 'unauthorized' });
    }
    // The same claims with an expiry are the admin's.
    const expiring = signJwt(
      { sub: 'admin', cv, iat: now, exp: now + 60 },
      service.config.JWT_SECRET,
    );
    for (const path of ['/admin/instances', '/admin/queues/api/queues']) {
      expect((await http(service.url, 'GET', path, { token: expiring })).status).toBe(200);
    }
  });

  it('refuses an API key on admin routes', async () => {
    const token = await adminToken(service.url);
    const created = await http<{ key: string }>(service.url, 'POST', '/admin/api-keys', {
      token,
      body: { name: 'client' },
    });
    const answer = await http(service.url, 'GET', '/admin/instances', { token: created.body.key });
    expect(answer.status).toBe(401);
  });

  it('locks an address out after 10 failed logins, even with the right password', async () => {
    const headers = { 'x-forwarded-for': '203.0.113.7' };
    // Without TRUST_PROXY the forwarded header is ignored: use a dedicated app that trusts the test's own address.
    const proxied = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      TRUST_PROXY: '127.0.0.1',
    });
    try {
      for (let i = 0; i < 10; i++) {
        const failed = await http(proxied.url, 'POST', '/admin/auth/login', {
          body: { username: 'admin', password: `wrong-${i}` },
          headers,
        });
        expect(failed.status).toBe(401);
      }
      const locked = await http(proxied.url, 'POST', '/admin/auth/login', {
        body: { username: 'admin', password: ADMIN_PASSWORD },
        headers,
      });
      expect(locked.status).toBe(429);
      expect(locked.body).toMatchObject({ code: 'rate_limited' });
      const retryAfter = Number(locked.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(800);
      expect(retryAfter).toBeLessThanOrEqual(900);

      // Another address is not affected.
      const other = await http(proxied.url, 'POST', '/admin/auth/login', {
        body: { username: 'admin', password: ADMIN_PASSWORD },
        headers: { 'x-forwarded-for': '203.0.113.8' },
      });
      expect(other.status).toBe(200);
    } finally {
      await proxied.close();
    }
  });
});
