import { ADMIN_PASSWORD, adminToken, http, useTestService } from './support/test-app.js';

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('queue dashboard (/admin/queues)', () => {
  const context = useTestService();

  it('asks for the admin credentials, with a Basic challenge', async () => {
    for (const authorization of [
      undefined,
      basic('admin', 'wrong-password'),
      basic('root', ADMIN_PASSWORD),
      'Bearer not-a-jwt',
    ]) {
      const answer = await http(context.service.url, 'GET', '/admin/queues', {
        headers: authorization ? { authorization } : {},
      });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Basic/);
      expect(answer.body).toMatchObject({ code: 'unauthorized' });
    }
    const api = await http(context.service.url, 'GET', '/admin/queues/api/queues');
    expect(api.status).toBe(401);
  });

  it('shows the service queues to the admin (Basic credentials or the admin JWT)', async () => {
    const page = await http(context.service.url, 'GET', '/admin/queues', {
      headers: { authorization: basic('admin', ADMIN_PASSWORD) },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);

    const token = await adminToken(context.service.url);
    const queues = await http<{ queues: Array<{ name: string }> }>(
      context.service.url,
      'GET',
      '/admin/queues/api/queues',
      { token },
    );
    expect(queues.status).toBe(200);
    expect(queues.body.queues.map((q) => q.name).sort()).toEqual([
      'contact-buffers',
      'outbound-records',
      'template-syncs',
      'turns',
    ]);
  });

  it('takes changes only from its own page (remembered Basic credentials cannot be used cross-site)', async () => {
    const authorization = basic('admin', ADMIN_PASSWORD);
    const host = new URL(context.service.url).host;
    const crossSite: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { referer: 'https://evil.example/attack.html' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of crossSite) {
      const answer = await http(context.service.url, 'PUT', '/admin/queues/api/queues/resume', {
        headers: { authorization, ...headers },
      });
      expect({ headers, status: answer.status }).toEqual({ headers, status: 403 });
      expect(answer.body).toMatchObject({ code: 'forbidden' });
    }
    const own = await http(context.service.url, 'PUT', '/admin/queues/api/queues/resume', {
      headers: { authorization, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' },
    });
    expect(own.status).toBe(200);
  });

  it('sends security headers on every answer, and keeps the dashboard and docs usable', async () => {
    for (const [path, authorization] of [
      ['/admin/queues', basic('admin', ADMIN_PASSWORD)],
      ['/docs', undefined],
      ['/health/live', undefined],
      ['/no-such-route', undefined],
    ] as const) {
      const answer = await http(context.service.url, 'GET', path, {
        headers: authorization ? { authorization } : {},
      });
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
      if (path !== '/no-such-route') expect(answer.status).toBe(200);
    }
  });
});
