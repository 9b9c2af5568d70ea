import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakePlatform, VALID_TOKEN } from './support/fake-platform.js';
import { TestDatabase, freePort, http, testEnvironment, waitFor } from './support/test-app.js';

/** The built service (`npm test` builds first), run as a real process. */
const MAIN = 'dist/main.js';

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function run(env: Record<string, string | undefined>): Running {
  let output = '';
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => output, exited };
}

describe('the service process', () => {
  let db: TestDatabase;
  let platform: FakePlatform;

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
  });

  afterAll(async () => {
    await platform.stop();
    await db.drop();
  });

  it('refuses to start in production without its secrets, one line per variable', async () => {
    const service = run({ NODE_ENV: 'production', ENCRYPTION_KEY: 'not-a-key' });
    expect(await service.exited).toBe(1);
    const lines = service.output().trim().split('\n');
    expect(lines).toEqual([
      'PLATFORM_VERIFY_TOKEN is required when NODE_ENV=production',
      'PLATFORM_APP_SECRET is required when NODE_ENV=production',
      'ADMIN_PASSWORD is required when NODE_ENV=production',
      'JWT_SECRET is required when NODE_ENV=production',
      'METRICS_TOKEN is required when NODE_ENV=production (it guards GET /metrics)',
      'ENCRYPTION_KEY must be 32 bytes as 64 hex characters or base64',
    ]);
  });

  it('keeps the compiled code of its modules for the next start, unasked', async () => {
    const temp = await mkdtemp(join(tmpdir(), 'mc-temp-'));
    try {
      // No NODE_COMPILE_CACHE: the cache goes to the OS temp directory. Even a
      // start refused for its configuration has loaded the whole service.
      const service = run({ NODE_ENV: 'production', TMPDIR: temp });
      expect(await service.exited).toBe(1);
      const entries = await readdir(join(temp, 'node-compile-cache'), { recursive: true });
      // One entry per module, ours and the libraries' (thousands).
      expect(entries.length).toBeGreaterThan(500);
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  });

  it("refuses to start in production with the example Secret's placeholders", async () => {
    const service = run({
      ...testEnvironment({ NODE_ENV: 'production', METRICS_TOKEN: 'metrics-token-9f3c1a7e5b2d' }),
      PLATFORM_VERIFY_TOKEN: 'CHANGE_ME',
      ADMIN_PASSWORD: 'dev-admin-password',
      JWT_SECRET: 'CHANGE_ME_AT_LEAST_32_CHARACTERS_LONG',
    });
    expect(await service.exited).toBe(1);
    expect(service.output().trim().split('\n')).toEqual([
      'PLATFORM_VERIFY_TOKEN holds a placeholder (such as CHANGE_ME): set the real value',
      'ADMIN_PASSWORD is a development fallback: set a secret of your own',
      'JWT_SECRET holds a placeholder (such as CHANGE_ME): set the real value',
    ]);
  });

  it('names each unreachable dependency in one line, without stack traces or credentials, waits, and exits 0 on SIGTERM', async () => {
    const [port, pgPort, redisPort] = [await freePort(), await freePort(), await freePort()];
    const service = run({
      ...testEnvironment({
        LOG_LEVEL: 'info',
        NODE_ENV: 'development',
        PORT: String(port),
        HOST: '127.0.0.1',
      }),
      DATABASE_URL: `postgres://connector:pg-secret-password@127.0.0.1:${pgPort}/connector`,
      REDIS_URL: `redis://:redis-secret-password@127.0.0.1:${redisPort}`,
    });
    const logged = () =>
      service
        .output()
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
    const postgres = new RegExp(
      `^PostgreSQL is not reachable at 127\\.0\\.0\\.1:${pgPort} \\(ECONNREFUSED\\): waiting for it.*npm run services`,
    );
    const redis = new RegExp(
      `^Redis is not reachable at 127\\.0\\.0\\.1:${redisPort} \\(ECONNREFUSED\\): waiting for it.*npm run services`,
    );
    await waitFor(() => service.output().includes('Redis is not reachable'), 20_000);
    // Waiting, not exiting (a crash loop would keep pods down in Kubernetes), and alive.
    expect(service.child.exitCode).toBeNull();
    expect(await http(`http://127.0.0.1:${port}`, 'GET', '/health/live')).toMatchObject({
      status: 200,
      body: { status: 'ok' },
    });
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    const messages = logged();
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(postgres),
        expect.stringMatching(redis),
        'SIGTERM received while waiting for PostgreSQL and Redis: exiting',
      ]),
    );
    for (const message of messages) {
      expect([postgres, redis, /^SIGTERM received/].some((line) => line.test(message))).toBe(true);
    }
    expect(service.output()).not.toMatch(/secret-password|"stack"|\n\s+at /);
  });

  it('boots with a few lines at info: role, address, docs and webhook, insecure fallbacks', async () => {
    const port = await freePort();
    const service = run({
      ...testEnvironment({ LOG_LEVEL: 'info', PORT: String(port), HOST: '127.0.0.1' }),
      NODE_ENV: 'development',
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      JWT_SECRET: undefined,
    });
    try {
      await waitFor(() => service.output().includes('API docs at'), 20_000);
      const lines = service.output().trim().split('\n');
      const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(messages.some((message) => message.includes('Mapped {'))).toBe(false);
      expect(lines.length).toBeLessThanOrEqual(10);
      expect(messages).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^INSECURE CONFIGURATION: JWT_SECRET/),
          `all process listening on 127.0.0.1:${port}`,
          expect.stringMatching(
            new RegExp(
              `^API docs at http://127\\.0\\.0\\.1:${port}/docs; .*POST http://127\\.0\\.0\\.1:${port}/webhooks/messenger`,
            ),
          ),
        ]),
      );
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  });

  it('finishes in-flight requests on SIGTERM, refuses new ones, exits 0, and logs no secret', async () => {
    const port = await freePort();
    const env = testEnvironment({
      NODE_ENV: 'production',
      METRICS_TOKEN: 'metrics-token-for-the-log-test',
      LOG_LEVEL: 'trace',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      API_KEY: 'global-api-key-for-the-log-test',
    });
    const service = run(env);
    await waitFor(() => service.output().includes('listening on'), 20_000);
    const url = `http://127.0.0.1:${port}`;

    const login = await http<{ token: string }>(url, 'POST', '/admin/auth/login', {
      body: { username: 'admin', password: env.ADMIN_PASSWORD },
    });
    expect(login.status).toBe(200);
    // Requests carrying every kind of secret, including ones that fail.
    await http(url, 'POST', '/admin/auth/login', {
      body: { username: 'admin', password: 'a-wrong-password-guess' },
    });
    await http(url, 'POST', '/admin/instances', {
      token: login.body.token,
      body: {
        name: 'x',
        phone_number_id: '1',
        channel_account_id: '2',
        access_token: 'EAAG-refused-token-value',
        token_type: 'oauth',
      },
    });
    await http(url, 'GET', '/instance/phone_numbers', { token: env.API_KEY });
    await http(
      url,
      'GET',
      `/webhooks/messenger?hub.mode=subscribe&hub.verify_token=${env.PLATFORM_VERIFY_TOKEN}&hub.challenge=1`,
    );
    await http(url, 'POST', '/webhooks/messenger', {
      rawBody: '{}',
      headers: {
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
        cookie: 'session=cookie-secret-value',
      },
    });

    // A slow platform check keeps this create in flight while SIGTERM arrives.
    platform.on('GET', /^\/v25\.0\/555$/, (request) => ({
      delayMs: 700,
      body: { id: '555', verified_name: 'slow', seen: request.path },
    }));
    const inFlight = http(url, 'POST', '/admin/instances', {
      token: login.body.token,
      body: {
        name: 'slow',
        phone_number_id: '555',
        channel_account_id: '2',
        access_token: VALID_TOKEN,
        token_type: 'system_user',
      },
    });
    await waitFor(() => platform.callsTo(/\/555$/).length === 1, 5000);
    service.child.kill('SIGTERM');
    await waitFor(() => service.output().includes('SIGTERM received'), 5000);

    // Once closing, a new request is refused: either no connection at all, or 503.
    const late = await http(url, 'GET', '/health/live').then(
      (answer) => answer.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(late);

    const finished = await inFlight;
    expect(finished.status).toBe(201);
    expect(await service.exited).toBe(0);
    expect(await db.query("SELECT 1 FROM instances WHERE phone_number_id = '555'")).toHaveLength(1);

    const output = service.output();
    expect(output).toContain('"reqId"');
    for (const secret of [
      VALID_TOKEN,
      'EAAG-refused-token-value',
      env.ADMIN_PASSWORD!,
      'a-wrong-password-guess',
      login.body.token,
      env.JWT_SECRET!,
      env.ENCRYPTION_KEY!,
      env.API_KEY!,
      env.PLATFORM_APP_SECRET!,
      env.PLATFORM_VERIFY_TOKEN!,
      env.METRICS_TOKEN!,
      'cookie-secret-value',
    ]) {
      expect(output).not.toContain(secret);
    }
  });
});
