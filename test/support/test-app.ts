import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { createApp } from '../../src/app.setup.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { loadConfig, type Environment } from '../../src/config/load-config.js';
import { PlatformClient } from '../../src/platform/platform-client.service.js';
import { FakePlatform, VALID_TOKEN } from './fake-platform.js';
import { registerRedisPrefix } from './redis-prefixes.js';

export const ADMIN_PASSWORD = 'test-admin-password';
export const ENCRYPTION_KEY = randomBytes(32).toString('hex');
const ADMIN_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** A database of its own for one test file, dropped at the end. */
export class TestDatabase {
  private constructor(
    readonly name: string,
    readonly url: string,
  ) {}

  static async create(): Promise<TestDatabase> {
    const name = `mc_test_${randomBytes(6).toString('hex')}`;
    await withAdminClient((client) => client.query(`CREATE DATABASE ${name}`));
    return new TestDatabase(name, ADMIN_DATABASE_URL.replace(/\/postgres$/, `/${name}`));
  }

  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new Client({ connectionString: this.url });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  }

  async drop(): Promise<void> {
    await withAdminClient((client) =>
      client.query(`DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`),
    );
  }
}

async function withAdminClient<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: ADMIN_DATABASE_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  url: string;
  close(): Promise<void>;
}

/** The test environment: a unique Redis prefix, silent logs, fixed secrets; overrides win. */
export function testEnvironment(overrides: Environment = {}): Environment {
  const environment: Environment = {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    REDIS_PREFIX: `mct${randomBytes(4).toString('hex')}`,
    PLATFORM_VERIFY_TOKEN: 'test-verify-token',
    PLATFORM_APP_SECRET: 'test-app-secret-1',
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD,
    JWT_SECRET: 'test-jwt-secret-0123456789abcdef-0123456789',
    ENCRYPTION_KEY,
    PLATFORM_TIMEOUT_MS: '1000',
    // Tests fire requests faster than a client should; the limit has its own test.
    API_KEY_RATE_LIMIT: '10000',
    API_KEY_RATE_BURST: '10000',
    ...overrides,
  };
  registerRedisPrefix(environment.REDIS_PREFIX);
  return environment;
}

/** Boots the real application (same setup as main.ts) on a random local port. */
export async function startTestApp(overrides: Environment = {}): Promise<TestApp> {
  const { config } = loadConfig(testEnvironment({ PORT: '0', HOST: '127.0.0.1', ...overrides }));
  const app = await createApp(config);
  // Short retry delays keep the suite fast; the retry rules are the production ones.
  const platform = app.get(PlatformClient, { strict: false });
  platform.retryPolicy = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 50 };
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  return {
    app,
    config,
    url: `http://127.0.0.1:${address.port}`,
    close: () => app.close(),
  };
}

export interface HttpAnswer<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A small client for the service: JSON in, JSON (or text) out. */
export async function http<T = Record<string, unknown>>(
  baseUrl: string,
  method: string,
  path: string,
  options: {
    token?: string;
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<HttpAnswer<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let payload: string | undefined;
  if (options.rawBody !== undefined) {
    payload = options.rawBody;
    headers['content-type'] ??= 'application/json';
  } else if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body: payload });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // plain text answer
  }
  return { status: response.status, headers: response.headers, body: body as T, text };
}

export async function adminToken(baseUrl: string): Promise<string> {
  const answer = await http<{ token: string }>(baseUrl, 'POST', '/admin/auth/login', {
    body: { username: 'admin', password: ADMIN_PASSWORD },
  });
  if (answer.status !== 200) throw new Error(`login failed: ${answer.status} ${answer.text}`);
  return answer.body.token;
}

/** A local port with nothing listening on it (for a process to take, or to fail against). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** What one end-to-end file works with: its own database, a fake platform, the service. */
export interface TestContext {
  db: TestDatabase;
  platform: FakePlatform;
  service: TestApp;
}

/**
 * Registers beforeAll/afterAll hooks that give the file a fresh database, a
 * fake platform and the service wired to both; the fields are set once the
 * hooks have run.
 */
export function useTestService(overrides: Environment = {}): TestContext {
  const context = {} as TestContext;
  beforeAll(async () => {
    context.db = await TestDatabase.create();
    context.platform = await FakePlatform.start();
    context.service = await startTestApp({
      DATABASE_URL: context.db.url,
      PLATFORM_API_URL: context.platform.url,
      ...overrides,
    });
  });
  afterAll(async () => {
    await context.service?.close();
    await context.platform?.stop();
    await context.db?.drop();
  });
  return context;
}

/** Creates an instance through the admin API (the fake platform accepts VALID_TOKEN); returns its id. */
export async function createInstance(
  baseUrl: string,
  token: string,
  phoneNumberId: string,
  name = 'Store',
): Promise<string> {
  const answer = await http<{ id: string }>(baseUrl, 'POST', '/admin/instances', {
    token,
    body: {
      name,
      phone_number_id: phoneNumberId,
      channel_account_id: '102290129340398',
      access_token: VALID_TOKEN,
      token_type: 'system_user',
    },
  });
  if (answer.status !== 201)
    throw new Error(`instance not created: ${answer.status} ${answer.text}`);
  return answer.body.id;
}

/** Polls until `condition` holds; throws after `ms`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  ms = 10_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
