import { randomUUID } from 'node:crypto';
import { VALID_TOKEN, type FakePlatform } from './support/fake-platform.js';
import {
  adminToken,
  http,
  useTestService,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

const GLOBAL_KEY = 'global-api-key-0123456789abcdef';

describe('API keys and the API-key guard', () => {
  const context = useTestService({ env: { API_KEY: GLOBAL_KEY } });
  let db: TestDatabase;
  let platform: FakePlatform;
  let service: TestApp;
  let token: string;
  let instanceA: string;
  let instanceB: string;
  let counter = 0;

  const createInstance = async (): Promise<string> => {
    const answer = await http<{ id: string }>(service.url, 'POST', '/admin/instances', {
      token,
      body: {
        name: `Store ${counter}`,
        phone_number_id: `20000000000${counter++}`,
        channel_account_id: '102290129340398',
        access_token: VALID_TOKEN,
        token_type: 'system_user',
      },
    });
    return answer.body.id;
  };
  const createKey = (body: Record<string, unknown>) =>
    http<{
      id: string;
      key: string;
      prefix: string;
      name: string;
      instance_id: string | null;
      created_at: string;
    }>(service.url, 'POST', '/admin/api-keys', { token, body });
  const phoneNumbers = (key: string, instanceId?: string) =>
    http(
      service.url,
      'GET',
      `/instance/phone_numbers${instanceId ? `?instance_id=${instanceId}` : ''}`,
      {
        token: key,
      },
    );

  beforeAll(async () => {
    ({ db, platform, service } = context);
    token = await adminToken(service.url);
    instanceA = await createInstance();
    instanceB = await createInstance();
  });

  it('creates a key shown once, lists it without the key, stores only its SHA-256', async () => {
    const created = await createKey({ name: 'crm' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(
      ['created_at', 'id', 'instance_id', 'key', 'name', 'prefix'].sort(),
    );
    expect(created.body.instance_id).toBeNull();
    expect(created.body.key.startsWith(created.body.prefix)).toBe(true);
    expect(created.body.key.length).toBeGreaterThanOrEqual(40);

    const list = await http<Array<Record<string, unknown>>>(service.url, 'GET', '/admin/api-keys', {
      token,
    });
    expect(list.status).toBe(200);
    const listed = list.body.find((k) => k.id === created.body.id)!;
    expect(Object.keys(listed).sort()).toEqual(
      ['created_at', 'id', 'instance_id', 'last_used_at', 'name', 'prefix'].sort(),
    );
    expect(list.text).not.toContain(created.body.key);

    const rows = await db.query<Record<string, string>>('SELECT * FROM api_keys WHERE id = $1', [
      created.body.id,
    ]);
    expect(JSON.stringify(rows)).not.toContain(created.body.key);
    const { createHash } = await import('node:crypto');
    expect(rows[0].key_hash).toBe(createHash('sha256').update(created.body.key).digest('hex'));
  });

  it('lets an unbound key act on any instance named by instance_id, and records its use', async () => {
    const created = await createKey({ name: 'any' });
    const answer = await phoneNumbers(created.body.key, instanceA);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ data: [{ code_verification_status: 'VERIFIED' }] });
    expect(platform.requests.at(-1)!.path).toBe('/v25.0/102290129340398/phone_numbers');
    expect((await phoneNumbers(created.body.key, instanceB)).status).toBe(200);

    const list = await http<Array<{ id: string; last_used_at: string | null }>>(
      service.url,
      'GET',
      '/admin/api-keys',
      { token },
    );
    expect(list.body.find((k) => k.id === created.body.id)!.last_used_at).not.toBeNull();
  });

  it('requires instance_id from an unbound key', async () => {
    const created = await createKey({ name: 'any' });
    const answer = await phoneNumbers(created.body.key);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'instance_id' }],
    });
    const malformed = await phoneNumbers(created.body.key, 'nope');
    expect(malformed.status).toBe(400);
  });

  it('binds a key to one instance: implied when left out, 403 instance_forbidden for another', async () => {
    const created = await createKey({ name: 'bound', instance_id: instanceA });
    expect(created.body.instance_id).toBe(instanceA);
    expect((await phoneNumbers(created.body.key)).status).toBe(200);
    expect((await phoneNumbers(created.body.key, instanceA)).status).toBe(200);
    const other = await phoneNumbers(created.body.key, instanceB);
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ code: 'instance_forbidden' });
    const viaBody = await http(service.url, 'POST', '/instance/register', {
      token: created.body.key,
      body: { instance_id: instanceB, pin: '123456' },
    });
    expect(viaBody.status).toBe(403);
  });

  it('answers 404 for an unknown instance and 409 for a deactivated one', async () => {
    const created = await createKey({ name: 'any' });
    const unknown = await phoneNumbers(created.body.key, randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'instance_not_found' });

    const instance = await createInstance();
    await http(service.url, 'POST', `/admin/instances/${instance}/deactivate`, { token });
    const inactive = await phoneNumbers(created.body.key, instance);
    expect(inactive.status).toBe(409);
    expect(inactive.body).toMatchObject({ code: 'instance_inactive' });
  });

  it('refuses a key bound to an unknown instance at creation', async () => {
    const answer = await createKey({ name: 'x', instance_id: randomUUID() });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 'instance_not_found' });
    const invalid = await createKey({ name: '', instance_id: 'nope' });
    expect(invalid.status).toBe(400);
  });

  it('stops a revoked key at once', async () => {
    const created = await createKey({ name: 'revoked' });
    expect((await phoneNumbers(created.body.key, instanceA)).status).toBe(200);
    const removed = await http(service.url, 'DELETE', `/admin/api-keys/${created.body.id}`, {
      token,
    });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ success: true });
    const after = await phoneNumbers(created.body.key, instanceA);
    expect(after.status).toBe(401);
    expect(after.body).toMatchObject({ code: 'unauthorized' });
    const again = await http(service.url, 'DELETE', `/admin/api-keys/${created.body.id}`, {
      token,
    });
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ code: 'api_key_not_found' });
  });

  it('refuses missing, unknown and admin credentials on client routes', async () => {
    expect(
      (await http(service.url, 'GET', `/instance/phone_numbers?instance_id=${instanceA}`)).status,
    ).toBe(401);
    expect((await phoneNumbers('mck_unknown', instanceA)).status).toBe(401);
    const admin = await phoneNumbers(token, instanceA);
    expect(admin.status).toBe(401);
    expect(admin.body).toMatchObject({ code: 'unauthorized' });
  });

  it('accepts the global API_KEY for every instance', async () => {
    expect((await phoneNumbers(GLOBAL_KEY, instanceA)).status).toBe(200);
    expect((await phoneNumbers(GLOBAL_KEY, instanceB)).status).toBe(200);
    expect((await phoneNumbers(`${GLOBAL_KEY}x`, instanceB)).status).toBe(401);
  });

  it('registers, requests and verifies codes through the platform with validation first', async () => {
    const key = GLOBAL_KEY;
    platform.reset();
    const register = await http(service.url, 'POST', '/instance/register', {
      token: key,
      body: { instance_id: instanceA, pin: '123456' },
    });
    expect(register.status).toBe(200);
    expect(register.body).toEqual({ success: true });
    expect(platform.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: '/v25.0/200000000000/register',
      body: { messaging_product: 'messenger', pin: '123456' },
    });

    const request = await http(service.url, 'POST', '/instance/request_code', {
      token: key,
      body: { instance_id: instanceA, code_method: 'SMS', language: 'pt_BR' },
    });
    expect(request.status).toBe(200);
    expect(platform.requests.at(-1)).toMatchObject({
      path: '/v25.0/200000000000/request_code',
      body: { code_method: 'SMS', language: 'pt_BR' },
    });

    const verify = await http(service.url, 'POST', '/instance/verify_code', {
      token: key,
      body: { instance_id: instanceA, code: '654321' },
    });
    expect(verify.status).toBe(200);
    expect(platform.requests.at(-1)).toMatchObject({
      path: '/v25.0/200000000000/verify_code',
      body: { code: '654321' },
    });

    const calls = platform.requests.length;
    for (const [path, body, field] of [
      ['/instance/register', { pin: '12345' }, 'pin'],
      ['/instance/register', { pin: '12345a' }, 'pin'],
      ['/instance/request_code', { code_method: 'EMAIL', language: 'pt_BR' }, 'code_method'],
      ['/instance/request_code', { code_method: 'SMS', language: 'portuguese' }, 'language'],
      ['/instance/verify_code', {}, 'code'],
      ['/instance/verify_code', { code: '1', extra: true }, 'extra'],
    ] as const) {
      const answer = await http<{ details: Array<{ field: string }> }>(service.url, 'POST', path, {
        token: key,
        body: { instance_id: instanceA, ...body },
      });
      expect(answer.status).toBe(400);
      expect(answer.body.details.map((d) => d.field)).toContain(field);
    }
    expect(platform.requests).toHaveLength(calls);
  });
});
