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
      'webhook-deliveries',
    ]);
  });
});
