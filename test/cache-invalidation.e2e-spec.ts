import {
  adminToken,
  http,
  startTestApp,
  createInstance,
  useTestService,
  type TestApp,
} from './support/test-app.js';

/**
 * API keys and instances are cached in each process: a change made through
 * one process must take effect at once in another.
 */
describe('request-path caches across processes', () => {
  const context = useTestService();
  let first: TestApp;
  let second: TestApp;
  let token: string;
  let instanceId: string;

  beforeAll(async () => {
    first = context.service;
    second = await startTestApp({
      DATABASE_URL: context.db.url,
      PLATFORM_API_URL: context.platform.url,
      REDIS_PREFIX: first.config.REDIS_PREFIX,
    });
    token = await adminToken(first.url);
    instanceId = await createInstance(first.url, token, '500000000001', 'Cached');
  });

  afterAll(() => second.close());

  const phoneNumbers = (app: TestApp, key: string) =>
    http(app.url, 'GET', `/instance/phone_numbers?instance_id=${instanceId}`, { token: key });

  it('stops a key revoked through one process at once in the other', async () => {
    const key = await http<{ id: string; key: string }>(first.url, 'POST', '/admin/api-keys', {
      token,
      body: { name: 'shared' },
    });
    // Both processes have now seen (and cached) the key.
    expect((await phoneNumbers(first, key.body.key)).status).toBe(200);
    expect((await phoneNumbers(second, key.body.key)).status).toBe(200);

    await http(first.url, 'DELETE', `/admin/api-keys/${key.body.id}`, { token });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await phoneNumbers(second, key.body.key)).status).toBe(401);
    expect((await phoneNumbers(first, key.body.key)).status).toBe(401);
  });

  it('refuses a deactivated instance at once in the other process, and serves it again after activation', async () => {
    const key = await http<{ key: string }>(first.url, 'POST', '/admin/api-keys', {
      token,
      body: { name: 'instance-state' },
    });
    expect((await phoneNumbers(second, key.body.key)).status).toBe(200);

    await http(first.url, 'POST', `/admin/instances/${instanceId}/deactivate`, { token });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await phoneNumbers(second, key.body.key)).status).toBe(409);

    await http(first.url, 'POST', `/admin/instances/${instanceId}/activate`, { token });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await phoneNumbers(second, key.body.key)).status).toBe(200);
  });

  it('uses a new access token everywhere once it is changed', async () => {
    const key = await http<{ key: string }>(first.url, 'POST', '/admin/api-keys', {
      token,
      body: { name: 'token-change' },
    });
    expect((await phoneNumbers(second, key.body.key)).status).toBe(200);
    context.platform.on('GET', /^\/v25\.0\/500000000001$/, { body: { verified_name: 'x' } });
    await http(first.url, 'PATCH', `/admin/instances/${instanceId}`, {
      token,
      body: { access_token: 'EAAG-rotated-token' },
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    context.platform.reset();
    await phoneNumbers(second, key.body.key);
    expect(context.platform.requests.at(-1)!.headers.authorization).toBe(
      'Bearer EAAG-rotated-token',
    );
  });
});
