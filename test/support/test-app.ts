import { randomBytes } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/app.setup.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { loadConfig, type Environment } from '../../src/config/load-config.js';
import { TestDatabase } from './database.js';
import { FakeAgent, type FakeAgentOptions } from './fake-agent.js';
import { FakePlatform, SIMULATED_TEMPLATES, VALID_TOKEN } from './fake-platform.js';
import { noteRedisUrl, registerRedisPrefix } from './redis-prefixes.js';
import { waitFor } from './wait.js';

export { TestDatabase } from './database.js';
export { freePort } from './ports.js';
export { readUntil, waitFor, waitUntil } from './wait.js';

// Strong enough for production's checks, which some tests run the service under.
export const ADMIN_PASSWORD = 'test-admin-password-7Kq2';
export const ENCRYPTION_KEY = randomBytes(32).toString('hex');
/** PLATFORM_APP_SECRET of every test service: the fake deliveries are signed with it. */
export const APP_SECRET = 'test-app-secret-1';
/** PLATFORM_VERIFY_TOKEN of every test service: the subscription handshake echoes it. */
export const VERIFY_TOKEN = 'test-verify-token';
const JWT_SECRET = randomBytes(32).toString('base64url');

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
    PLATFORM_VERIFY_TOKEN: VERIFY_TOKEN,
    PLATFORM_APP_SECRET: APP_SECRET,
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD,
    JWT_SECRET,
    ENCRYPTION_KEY,
    PLATFORM_TIMEOUT_MS: '1000',
    // Tests fire requests faster than a client should; the limit has its own test.
    API_KEY_RATE_LIMIT: '10000',
    API_KEY_RATE_BURST: '10000',
    // Short retry waits keep the suite fast; the retry rules are the production ones.
    PLATFORM_RETRY_DELAY_MS: '10',
    ...overrides,
  };
  registerRedisPrefix(environment.REDIS_PREFIX);
  noteRedisUrl(environment.REDIS_URL);
  return environment;
}

/** Boots the real application (same setup as main.ts) on a random local port. */
export async function startTestApp(overrides: Environment = {}): Promise<TestApp> {
  const { config } = loadConfig(testEnvironment({ PORT: '0', HOST: '127.0.0.1', ...overrides }));
  const app = await createApp(config);
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

/** What one end-to-end file works with: its own database, a fake platform, the service. */
export interface TestContext {
  db: TestDatabase;
  platform: FakePlatform;
  service: TestApp;
}

/** A file's context with the fake agent the service calls (AGENT_MODULE_URL). */
export interface AgentTestContext extends TestContext {
  agent: FakeAgent;
}

export interface TestServiceOptions {
  /** Environment overrides (they win over testEnvironment's). */
  env?: Environment;
  /**
   * Starts a FakeAgent for the file (with these options, if any), sets the
   * service's AGENT_MODULE_URL to it and stops it after the file.
   */
  agent?: true | FakeAgentOptions;
}

/**
 * Registers beforeAll/afterAll hooks that give the file a fresh database, a
 * fake platform (and, with `agent`, a fake agent) and the service wired to
 * them; the fields are set once the hooks have run.
 */
export function useTestService(
  options: TestServiceOptions & { agent: true | FakeAgentOptions },
): AgentTestContext;
export function useTestService(options?: TestServiceOptions): TestContext;
export function useTestService(options: TestServiceOptions = {}): TestContext {
  const context = {} as Partial<AgentTestContext>;
  beforeAll(async () => {
    context.db = await TestDatabase.create();
    context.platform = await FakePlatform.start();
    if (options.agent)
      context.agent = await FakeAgent.start(options.agent === true ? {} : options.agent);
    context.service = await startTestApp({
      DATABASE_URL: context.db.url,
      PLATFORM_API_URL: context.platform.url,
      ...(context.agent ? { AGENT_MODULE_URL: context.agent.url } : {}),
      ...options.env,
    });
  });
  afterAll(async () => {
    await context.service?.close();
    await context.agent?.stop();
    await context.platform?.stop();
    await context.db?.drop();
  });
  return context as AgentTestContext;
}

/**
 * Creates an instance through the admin API; returns its id. The access token
 * is VALID_TOKEN (what the fake platform accepts) unless `account` names another.
 */
export async function createInstance(
  baseUrl: string,
  token: string,
  phoneNumberId: string,
  name = 'Store',
  account: { accessToken?: string; channelAccountId?: string } = {},
): Promise<string> {
  const answer = await http<{ id: string }>(baseUrl, 'POST', '/admin/instances', {
    token,
    body: {
      name,
      phone_number_id: phoneNumberId,
      channel_account_id: account.channelAccountId ?? '102290129340398',
      access_token: account.accessToken ?? VALID_TOKEN,
      token_type: 'system_user',
    },
  });
  if (answer.status !== 201)
    throw new Error(`instance not created: ${answer.status} ${answer.text}`);
  return answer.body.id;
}

/**
 * An instance of business account `channelAccountId` ready for template
 * sends and campaigns: created, with an API key, once its catalogue (the
 * simulator's templates) is synced. Its id and key.
 */
export async function createCatalogueInstance(
  baseUrl: string,
  token: string,
  phoneNumberId: string,
  name: string,
  channelAccountId: string,
): Promise<{ instanceId: string; key: string }> {
  const instanceId = await createInstance(baseUrl, token, phoneNumberId, name, {
    channelAccountId,
  });
  const key = await createApiKey(baseUrl, token, instanceId, name);
  await waitFor(async () => {
    const listed = await http<{ data?: unknown[] }>(baseUrl, 'GET', '/templates?limit=100', {
      token: key,
    });
    return listed.body.data?.length === SIMULATED_TEMPLATES.length;
  }, 20_000);
  return { instanceId, key };
}

/** Issues an API key bound to one instance through the admin API; returns the key. */
export async function createApiKey(
  baseUrl: string,
  token: string,
  instanceId: string,
  name: string,
): Promise<string> {
  const answer = await http<{ key: string }>(baseUrl, 'POST', '/admin/api-keys', {
    token,
    body: { name, instance_id: instanceId },
  });
  if (answer.status !== 201)
    throw new Error(`API key not created: ${answer.status} ${answer.text}`);
  return answer.body.key;
}
