import {
  adminToken,
  createInstance,
  http,
  useTestService,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

interface AccountBody {
  id: string;
  username: string;
  display_name: string;
  role: string;
  instance_ids: string[];
  disabled: boolean;
}

interface LoginBody {
  token: string;
  username: string;
  display_name: string;
  role: string;
  account_id: string | null;
}

const PASSWORD = 'correct horse battery staple';

describe('Accounts: admins and operators who log in', () => {
  const context = useTestService();
  let db: TestDatabase;
  let service: TestApp;
  let token: string;
  let instanceId: string;

  const login = (username: string, password: string) =>
    http<LoginBody>(service.url, 'POST', '/admin/auth/login', { body: { username, password } });
  const createAccount = (body: Record<string, unknown>, as = token) =>
    http<AccountBody>(service.url, 'POST', '/admin/accounts', { token: as, body });
  const listInstances = (as: string) => http(service.url, 'GET', '/admin/instances', { token: as });

  beforeAll(async () => {
    ({ db, service } = context);
    token = await adminToken(service.url);
    instanceId = await createInstance(service.url, token, '300000000001');
  });

  it('creates an operator of one instance, stores only an argon2id hash and never answers it', async () => {
    const created = await createAccount({
      username: 'Ana.Souza',
      display_name: 'Ana Souza',
      role: 'operator',
      password: PASSWORD,
      instance_ids: [instanceId],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      username: 'Ana.Souza',
      display_name: 'Ana Souza',
      role: 'operator',
      instance_ids: [instanceId],
      disabled: false,
    });
    expect(created.text).not.toContain(PASSWORD);
    expect(created.text).not.toContain('argon2');

    const [row] = await db.query<{ password_hash: string }>(
      'SELECT password_hash FROM accounts WHERE id = $1',
      [created.body.id],
    );
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    expect(row.password_hash).not.toContain(PASSWORD);

    const listed = await http<AccountBody[]>(service.url, 'GET', '/admin/accounts', { token });
    expect(listed.status).toBe(200);
    expect(listed.body.map((a) => a.username)).toContain('Ana.Souza');
    expect(listed.text).not.toContain('argon2');
    const one = await http<AccountBody>(service.url, 'GET', `/admin/accounts/${created.body.id}`, {
      token,
    });
    expect(one.body).toEqual(created.body);
  });

  it('refuses a taken username in any case, ADMIN_USERNAME, an unknown instance and a short password', async () => {
    const base = { display_name: 'X', role: 'operator', password: PASSWORD };
    const taken = await createAccount({ ...base, username: 'ana.souza' });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ code: 'account_exists' });
    const admin = await createAccount({ ...base, username: 'ADMIN' });
    expect(admin.status).toBe(409);
    expect(admin.body).toMatchObject({ code: 'account_exists' });
    const missing = await createAccount({
      ...base,
      username: 'bruno',
      instance_ids: ['00000000-0000-4000-8000-000000000000'],
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'instance_not_found' });
    const short = await createAccount({ ...base, username: 'bruno', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'password', message: 'must be 12 to 1000 characters' }],
    });
    const none = await http(
      service.url,
      'GET',
      '/admin/accounts/00000000-0000-4000-8000-000000000000',
      {
        token,
      },
    );
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ code: 'account_not_found' });
  });

  it('logs an operator in (any case of its username); its token opens no admin route', async () => {
    const answer = await login('ANA.SOUZA', PASSWORD);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      username: 'Ana.Souza',
      display_name: 'Ana Souza',
      role: 'operator',
    });
    expect(answer.body.account_id).toEqual(expect.any(String));

    const refused = await listInstances(answer.body.token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'forbidden' });
    const accounts = await createAccount(
      { username: 'eve', display_name: 'Eve', role: 'admin', password: PASSWORD },
      answer.body.token,
    );
    expect(accounts.status).toBe(403);
    expect(await db.query(`SELECT 1 FROM accounts WHERE username = 'eve'`)).toEqual([]);
  });

  it('an admin account does what ADMIN_USERNAME does', async () => {
    const created = await createAccount({
      username: 'carla',
      display_name: 'Carla',
      role: 'admin',
      password: PASSWORD,
    });
    expect(created.status).toBe(201);
    const answer = await login('carla', PASSWORD);
    expect(answer.body).toMatchObject({ role: 'admin', account_id: created.body.id });
    expect((await listInstances(answer.body.token)).status).toBe(200);
    const made = await createAccount(
      { username: 'dan', display_name: 'Dan', role: 'operator', password: PASSWORD },
      answer.body.token,
    );
    expect(made.status).toBe(201);
  });

  it('counts failed logins by the username in any case: its variants share one limit', async () => {
    const variants = [
      'ana.souza',
      'Ana.souza',
      'aNa.souza',
      'anA.souza',
      'ana.Souza',
      'ana.sOuza',
      'ana.soUza',
      'ana.souZa',
      'ana.souzA',
      'ANA.souza',
    ];
    for (const username of variants) {
      const answer = await http(service.url, 'POST', '/admin/auth/login', {
        body: { username, password: 'not the password at all' },
      });
      expect(answer.status).toBe(401);
    }
    const locked = await http(service.url, 'POST', '/admin/auth/login', {
      body: { username: 'Ana.Souza', password: PASSWORD },
    });
    expect(locked.status).toBe(429);
    expect(locked.body).toMatchObject({ code: 'rate_limited' });
  });

  it('answers a wrong password and an unknown username alike', async () => {
    const wrong = await login('carla', 'not the password at all');
    const unknown = await login('nobody-here', PASSWORD);
    expect(Object.keys(unknown.body as object).sort()).toEqual(
      Object.keys(wrong.body as object).sort(),
    );
    for (const answer of [wrong, unknown]) {
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({
        statusCode: 401,
        code: 'invalid_credentials',
        message: 'Wrong username or password',
      });
    }
  });

  it("reads the inbox of an operator's instances with its token, and of no other", async () => {
    const other = await createInstance(service.url, token, '300000000002', 'Other store');
    const created = await createAccount({
      username: 'gabi',
      display_name: 'Gabi',
      role: 'operator',
      password: PASSWORD,
      instance_ids: [instanceId],
    });
    expect(created.status).toBe(201);
    const operator = (await login('gabi', PASSWORD)).body.token;
    const read = (path: string, as = operator) => http(service.url, 'GET', path, { token: as });

    // Its one instance: named (in any case) or not.
    expect((await read(`/contacts?instance_id=${instanceId}`)).status).toBe(200);
    expect((await read(`/contacts?instance_id=${instanceId.toUpperCase()}`)).status).toBe(200);
    expect((await read('/contacts')).status).toBe(200);
    const conversation = await read(`/contacts/5511999990000/messages?instance_id=${instanceId}`);
    expect(conversation.status).toBe(404);
    expect(conversation.body).toMatchObject({ code: 'contact_not_found' });
    const message = await read(`/messages/wamid.none?instance_id=${instanceId}`);
    expect(message.body).toMatchObject({ code: 'message_not_found' });

    // Another instance, or one that does not exist: 403 alike.
    for (const id of [other, '00000000-0000-4000-8000-000000000000']) {
      const refused = await read(`/contacts?instance_id=${id}`);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'instance_forbidden' });
    }
    expect((await read(`/contacts/5511999990000/messages?instance_id=${other}`)).status).toBe(403);
    expect((await read(`/messages/wamid.none?instance_id=${other}`)).status).toBe(403);

    // An admin account reads any instance; an operator sends for its own only.
    const admin = (await login('carla', PASSWORD)).body.token;
    expect((await read(`/contacts?instance_id=${other}`, admin)).status).toBe(200);
    const send = await http(service.url, 'POST', '/send/text', {
      token: operator,
      body: { instance_id: other, to: '5511999990000', body: 'hi' },
    });
    expect(send.status).toBe(403);
    expect(send.body).toMatchObject({ code: 'instance_forbidden' });

    // Its instances changed: the next request sees it.
    await http(service.url, 'PATCH', `/admin/accounts/${created.body.id}`, {
      token,
      body: { instance_ids: [other] },
    });
    expect((await read(`/contacts?instance_id=${instanceId}`)).status).toBe(403);
    expect((await read(`/contacts?instance_id=${other}`)).status).toBe(200);

    // Two instances: a request names one; a malformed one is a 400, not a 403.
    await http(service.url, 'PATCH', `/admin/accounts/${created.body.id}`, {
      token,
      body: { instance_ids: [instanceId, other] },
    });
    const unnamed = await read('/contacts');
    expect(unnamed.status).toBe(400);
    expect(unnamed.body).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'instance_id' }],
    });
    expect((await read('/contacts?instance_id=42')).status).toBe(400);

    // None: nothing to read.
    await http(service.url, 'PATCH', `/admin/accounts/${created.body.id}`, {
      token,
      body: { instance_ids: [] },
    });
    const none = await read('/contacts');
    expect(none.status).toBe(403);
    expect(none.body).toMatchObject({ code: 'instance_forbidden' });
  });

  it('a new password ends the sessions opened with the old one; a disabled account is logged out and cannot log in', async () => {
    const created = await createAccount({
      username: 'felipe',
      display_name: 'Felipe',
      role: 'admin',
      password: PASSWORD,
    });
    const first = await login('felipe', PASSWORD);
    expect((await listInstances(first.body.token)).status).toBe(200);

    const reset = await http<AccountBody>(
      service.url,
      'POST',
      `/admin/accounts/${created.body.id}/password`,
      { token, body: { password: 'another long passphrase' } },
    );
    expect(reset.status).toBe(200);
    expect((await listInstances(first.body.token)).status).toBe(401);
    expect((await login('felipe', PASSWORD)).status).toBe(401);
    const second = await login('felipe', 'another long passphrase');
    expect((await listInstances(second.body.token)).status).toBe(200);

    const disabled = await http<AccountBody>(
      service.url,
      'PATCH',
      `/admin/accounts/${created.body.id}`,
      { token, body: { disabled: true } },
    );
    expect(disabled.body.disabled).toBe(true);
    expect((await listInstances(second.body.token)).status).toBe(401);
    expect((await login('felipe', 'another long passphrase')).status).toBe(401);

    await http(service.url, 'PATCH', `/admin/accounts/${created.body.id}`, {
      token,
      body: { disabled: false, role: 'operator', instance_ids: [instanceId] },
    });
    // Enabled again: the sessions the disable ended stay ended.
    expect((await listInstances(second.body.token)).status).toBe(401);
    const back = await login('felipe', 'another long passphrase');
    expect(back.body.role).toBe('operator');
    expect((await listInstances(back.body.token)).status).toBe(403);
  });

  it("the console's session: the token only in an httpOnly cookie, changes need the console's header, logout clears it", async () => {
    await createAccount({
      username: 'iris',
      display_name: 'Iris',
      role: 'operator',
      password: PASSWORD,
      instance_ids: [instanceId],
    });
    const started = await http<Record<string, unknown>>(
      service.url,
      'POST',
      '/admin/auth/session',
      {
        body: { username: 'iris', password: PASSWORD },
      },
    );
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({
      username: 'iris',
      display_name: 'Iris',
      role: 'operator',
      instances: [expect.objectContaining({ id: instanceId })],
    });
    expect(started.body.token).toBeUndefined();
    const setCookie = started.headers.getSetCookie().find((c) => c.startsWith('mc_session='))!;
    expect(setCookie).toMatch(/; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict$/);
    const cookie = setCookie.split(';')[0];
    expect(started.text).not.toContain(cookie.slice('mc_session='.length));

    const who = await http(service.url, 'GET', '/admin/auth/session', { headers: { cookie } });
    expect(who.body).toMatchObject({ username: 'iris', role: 'operator' });
    expect(
      (await http(service.url, 'GET', '/admin/instances', { headers: { cookie } })).status,
    ).toBe(403);
    const forged = await http(service.url, 'POST', '/contacts/5511999990000/handoff', {
      headers: { cookie },
      body: {},
    });
    expect(forged.status).toBe(403);
    expect(forged.body).toMatchObject({ code: 'forbidden' });
    const fromConsole = await http(service.url, 'POST', '/contacts/5511999990000/handoff', {
      headers: { cookie, 'x-console': '1' },
      body: {},
    });
    expect(fromConsole.body).toMatchObject({ code: 'contact_not_found' });

    expect(
      (await http(service.url, 'DELETE', '/admin/auth/session', { headers: { cookie } })).status,
    ).toBe(403);
    const ended = await http(service.url, 'DELETE', '/admin/auth/session', {
      headers: { cookie, 'x-console': '1' },
    });
    expect(ended.status).toBe(204);
    expect(ended.headers.getSetCookie()).toEqual([
      expect.stringMatching(/^mc_session=; Path=\/; Max-Age=0/),
    ]);
  });
});
