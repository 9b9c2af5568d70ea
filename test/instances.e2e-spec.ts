import { randomUUID } from 'node:crypto';
import {
  type FakePlatform,
  NUMBER_DETAILS,
  VALID_TOKEN,
  platformError,
} from './support/fake-platform.js';
import {
  adminToken,
  http,
  useTestService,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

const LIST_FIELDS = [
  'id',
  'name',
  'phone_number_id',
  'channel_account_id',
  'display_phone_number',
  'verified_name',
  'quality_rating',
  'messaging_limit_tier',
  'is_active',
  'status',
  'token_type',
  'token_rejected_at',
  'created_at',
  'updated_at',
].sort();

const DETAIL_FIELDS = [
  ...LIST_FIELDS,
  'business_id',
  'platform_app_id',
  'webhook_verify_token',
  'agent',
  'send_rate',
  'marketing_messages',
  'daily_limit',
  'coexistence',
  'history',
].sort();

describe('admin: instances', () => {
  const context = useTestService();
  let db: TestDatabase;
  let platform: FakePlatform;
  let service: TestApp;
  let token: string;
  let phoneCounter = 1000;

  const nextNumberId = (): string => `10654035224${phoneCounter++}`;
  const create = (overrides: Record<string, unknown> = {}) =>
    http<Record<string, unknown>>(service.url, 'POST', '/admin/instances', {
      token,
      body: {
        name: 'Store',
        phone_number_id: nextNumberId(),
        channel_account_id: '102290129340398',
        access_token: VALID_TOKEN,
        token_type: 'system_user',
        ...overrides,
      },
    });

  beforeAll(async () => {
    ({ db, platform, service } = context);
    token = await adminToken(service.url);
  });

  beforeEach(() => platform.reset());

  it('creates an instance after checking the token with the platform', async () => {
    const phoneNumberId = nextNumberId();
    const answer = await create({ phone_number_id: phoneNumberId, business_id: '506914307656634' });
    expect(answer.status).toBe(201);
    expect(Object.keys(answer.body).sort()).toEqual(
      [
        'id',
        'name',
        'phone_number_id',
        'channel_account_id',
        'is_active',
        'status',
        'created_at',
      ].sort(),
    );
    expect(answer.body).toMatchObject({
      name: 'Store',
      phone_number_id: phoneNumberId,
      is_active: true,
      status: 'connected',
    });
    expect(new Date(answer.body.created_at as string).toISOString()).toBe(answer.body.created_at);

    const [check] = platform.callsTo(new RegExp(`/v25.0/${phoneNumberId}$`));
    expect(check.method).toBe('GET');
    expect(check.headers.authorization).toBe(`Bearer ${VALID_TOKEN}`);
    expect(check.query.fields.split(',').sort()).toEqual(
      ['display_phone_number', 'messaging_limit_tier', 'quality_rating', 'verified_name'].sort(),
    );

    const detail = await http<Record<string, unknown>>(
      service.url,
      'GET',
      `/admin/instances/${answer.body.id as string}`,
      { token },
    );
    expect(detail.status).toBe(200);
    expect(Object.keys(detail.body).sort()).toEqual(DETAIL_FIELDS);
    expect(detail.body).toMatchObject({ ...NUMBER_DETAILS, business_id: '506914307656634' });
    expect(detail.body.webhook_verify_token).toMatch(/^[0-9a-f]{32,}$/);
  });

  it('never returns the access token and stores it only encrypted', async () => {
    const created = await create();
    const id = created.body.id as string;
    const answers = [
      created,
      await http(service.url, 'GET', '/admin/instances', { token }),
      await http(service.url, 'GET', `/admin/instances/${id}`, { token }),
      await http(service.url, 'GET', '/admin/instances/status/all', { token }),
      await http(service.url, 'PATCH', `/admin/instances/${id}`, { token, body: { name: 'x' } }),
      await http(service.url, 'POST', `/admin/instances/${id}/activate`, { token }),
    ];
    for (const answer of answers) {
      expect(answer.text).not.toContain(VALID_TOKEN);
      expect(answer.text).not.toContain('access_token');
    }
    const [row] = await db.query<{ access_token_encrypted: string }>(
      'SELECT * FROM instances WHERE id = $1',
      [id],
    );
    expect(JSON.stringify(row)).not.toContain(VALID_TOKEN);
    expect(row.access_token_encrypted).toMatch(/^v2:[0-9a-f]{8}:/);
  });

  it('refuses a token the platform rejects with 422 platform_rejected and stores nothing', async () => {
    const phoneNumberId = nextNumberId();
    const answer = await create({ phone_number_id: phoneNumberId, access_token: 'EAAG-expired' });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({
      code: 'platform_rejected',
      details: [{ code: 190, message: 'Invalid OAuth access token', fbtrace_id: 'trace-190' }],
    });
    expect(answer.body.message).toMatch(/access token/);
    expect(answer.text).not.toContain('EAAG-expired');
    expect(
      await db.query('SELECT 1 FROM instances WHERE phone_number_id = $1', [phoneNumberId]),
    ).toHaveLength(0);
  });

  it('answers 502 platform_unavailable when the platform is down, and stores nothing', async () => {
    platform.on('GET', /^\/v25\.0\/\d+$/, { status: 503, body: {} });
    const phoneNumberId = nextNumberId();
    const answer = await create({ phone_number_id: phoneNumberId });
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({ code: 'platform_unavailable' });
    // An idempotent read is retried: three attempts in all.
    expect(platform.callsTo(new RegExp(phoneNumberId))).toHaveLength(3);
    expect(
      await db.query('SELECT 1 FROM instances WHERE phone_number_id = $1', [phoneNumberId]),
    ).toHaveLength(0);
  });

  it('answers 409 instance_exists for a second instance of the same number', async () => {
    const phoneNumberId = nextNumberId();
    expect((await create({ phone_number_id: phoneNumberId })).status).toBe(201);
    const again = await create({ phone_number_id: phoneNumberId, name: 'Other' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'instance_exists' });
  });

  it('keeps one instance when two creates of one number race', async () => {
    const phoneNumberId = nextNumberId();
    const answers = await Promise.all([
      create({ phone_number_id: phoneNumberId }),
      create({ phone_number_id: phoneNumberId }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect(
      await db.query('SELECT 1 FROM instances WHERE phone_number_id = $1', [phoneNumberId]),
    ).toHaveLength(1);
  });

  it('validates the create body, naming every failing field', async () => {
    const answer = await http<{ code: string; details: Array<{ field: string }> }>(
      service.url,
      'POST',
      '/admin/instances',
      {
        token,
        body: { phone_number_id: '../etc', token_type: 'bogus', extra: 1 },
      },
    );
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('validation_failed');
    const fields = new Set(answer.body.details.map((d) => d.field));
    for (const field of [
      'name',
      'phone_number_id',
      'channel_account_id',
      'access_token',
      'token_type',
      'extra',
    ]) {
      expect(fields).toContain(field);
    }
    expect(platform.requests).toHaveLength(0);
  });

  it('lists instances with the list fields and summarises them in status/all', async () => {
    const created = await create();
    await http(service.url, 'POST', `/admin/instances/${created.body.id as string}/deactivate`, {
      token,
    });
    const list = await http<Array<Record<string, unknown>>>(
      service.url,
      'GET',
      '/admin/instances',
      { token },
    );
    expect(list.status).toBe(200);
    expect(list.body.length).toBeGreaterThan(0);
    for (const item of list.body) expect(Object.keys(item).sort()).toEqual(LIST_FIELDS);

    const summary = await http<{
      total: number;
      active: number;
      inactive: number;
      instances: Array<Record<string, unknown>>;
    }>(service.url, 'GET', '/admin/instances/status/all', { token });
    expect(summary.status).toBe(200);
    expect(summary.body.total).toBe(list.body.length);
    expect(summary.body.active + summary.body.inactive).toBe(summary.body.total);
    expect(summary.body.inactive).toBeGreaterThanOrEqual(1);
    expect(summary.body.active).toBe(list.body.filter((i) => i.is_active).length);
    for (const item of summary.body.instances) {
      expect(Object.keys(item).sort()).toEqual([
        'id',
        'is_active',
        'name',
        'quality_rating',
        'status',
      ]);
    }
  });

  it('patches name and fields, refuses phone_number_id and unknown fields', async () => {
    const created = await create();
    const id = created.body.id as string;
    const before = await http<Record<string, string>>(
      service.url,
      'GET',
      `/admin/instances/${id}`,
      { token },
    );
    await new Promise((resolve) => setTimeout(resolve, 5));

    const patched = await http<Record<string, string>>(
      service.url,
      'PATCH',
      `/admin/instances/${id}`,
      {
        token,
        body: { name: 'Renamed', business_id: '999', token_type: 'oauth' },
      },
    );
    expect(patched.status).toBe(200);
    expect(Object.keys(patched.body).sort()).toEqual(['id', 'name', 'updated_at']);
    expect(patched.body.name).toBe('Renamed');
    expect(new Date(patched.body.updated_at).getTime()).toBeGreaterThan(
      new Date(before.body.updated_at).getTime(),
    );
    const detail = await http<Record<string, string>>(
      service.url,
      'GET',
      `/admin/instances/${id}`,
      { token },
    );
    expect(detail.body).toMatchObject({ name: 'Renamed', business_id: '999', token_type: 'oauth' });
    expect(
      platform.requests.filter(
        (r) => r.method === 'GET' && r.path.endsWith(detail.body.phone_number_id),
      ),
    ).toHaveLength(1);

    const numberChange = await http(service.url, 'PATCH', `/admin/instances/${id}`, {
      token,
      body: { phone_number_id: '123' },
    });
    expect(numberChange.status).toBe(400);
    expect(numberChange.body).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'phone_number_id' }],
    });
    for (const body of [{ webhook_verify_token: 'x' }, { is_active: false }, {}]) {
      expect(
        (await http(service.url, 'PATCH', `/admin/instances/${id}`, { token, body })).status,
      ).toBe(400);
    }
  });

  it('checks a new access token with the platform before storing it', async () => {
    const created = await create();
    const id = created.body.id as string;
    const [before] = await db.query<{ access_token_encrypted: string }>(
      'SELECT access_token_encrypted FROM instances WHERE id = $1',
      [id],
    );
    const refused = await http(service.url, 'PATCH', `/admin/instances/${id}`, {
      token,
      body: { access_token: 'EAAG-not-valid' },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'platform_rejected' });
    const [unchanged] = await db.query<{ access_token_encrypted: string }>(
      'SELECT access_token_encrypted FROM instances WHERE id = $1',
      [id],
    );
    expect(unchanged.access_token_encrypted).toBe(before.access_token_encrypted);

    platform.on('GET', /^\/v25\.0\/\d+$/, {
      body: { ...NUMBER_DETAILS, quality_rating: 'YELLOW' },
    });
    const accepted = await http(service.url, 'PATCH', `/admin/instances/${id}`, {
      token,
      body: { access_token: 'EAAG-new-token' },
    });
    expect(accepted.status).toBe(200);
    expect(platform.requests.at(-1)!.headers.authorization).toBe('Bearer EAAG-new-token');
    const detail = await http(service.url, 'GET', `/admin/instances/${id}`, { token });
    expect(detail.body).toMatchObject({ quality_rating: 'YELLOW' });
  });

  it('deactivates and re-activates, re-checking the token', async () => {
    const created = await create();
    const id = created.body.id as string;
    const off = await http(service.url, 'POST', `/admin/instances/${id}/deactivate`, { token });
    expect(off.status).toBe(200);
    expect(off.body).toEqual({ success: true, status: 'disconnected' });
    expect(
      (await http(service.url, 'GET', `/admin/instances/${id}`, { token })).body,
    ).toMatchObject({
      is_active: false,
      status: 'disconnected',
    });

    platform.on('GET', /^\/v25\.0\/\d+$/, platformError(190, 'Session has expired', 401));
    const refused = await http(service.url, 'POST', `/admin/instances/${id}/activate`, { token });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'platform_rejected' });
    expect(
      (await http(service.url, 'GET', `/admin/instances/${id}`, { token })).body,
    ).toMatchObject({
      is_active: false,
      status: 'disconnected',
    });

    platform.reset();
    const on = await http(service.url, 'POST', `/admin/instances/${id}/activate`, { token });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ success: true, status: 'connected' });
    expect(
      (await http(service.url, 'GET', `/admin/instances/${id}`, { token })).body,
    ).toMatchObject({
      is_active: true,
      status: 'connected',
    });
  });

  it('deletes an instance with its API keys', async () => {
    const created = await create();
    const id = created.body.id as string;
    const key = await http<{ key: string; id: string }>(service.url, 'POST', '/admin/api-keys', {
      token,
      body: { name: 'bound', instance_id: id },
    });
    const removed = await http(service.url, 'DELETE', `/admin/instances/${id}`, { token });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ success: true, message: expect.any(String) });
    expect((await http(service.url, 'GET', `/admin/instances/${id}`, { token })).status).toBe(404);
    expect(await db.query('SELECT 1 FROM api_keys WHERE id = $1', [key.body.id])).toHaveLength(0);
    const phone = await http(service.url, 'GET', '/instance/phone_numbers', {
      token: key.body.key,
    });
    expect(phone.status).toBe(401);
  });

  it('answers 400 for a malformed id and 404 instance_not_found for an unknown one', async () => {
    const unknown = randomUUID();
    for (const [method, suffix] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/activate'],
      ['POST', '/deactivate'],
    ] as const) {
      const body = method === 'PATCH' ? { name: 'x' } : undefined;
      const malformed = await http(service.url, method, `/admin/instances/not-a-uuid${suffix}`, {
        token,
        body,
      });
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({
        code: 'validation_failed',
        details: [{ field: 'id' }],
      });
      const missing = await http(service.url, method, `/admin/instances/${unknown}${suffix}`, {
        token,
        body,
      });
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ code: 'instance_not_found' });
    }
  });
});
