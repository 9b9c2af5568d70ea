import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakePlatform, VALID_TOKEN, platformError } from '../../test/support/fake-platform.js';
import { loadConfig } from '../config/load-config.js';
import { backoffDelay } from '../common/backoff.js';
import { PlatformClient } from './platform-client.js';
import { PlatformError } from './platform.errors.js';

describe('PlatformClient retry rules', () => {
  let platform: FakePlatform;
  let client: PlatformClient;

  beforeAll(async () => {
    platform = await FakePlatform.start();
    const { config } = loadConfig({
      NODE_ENV: 'test',
      PLATFORM_API_URL: platform.url,
      PLATFORM_TIMEOUT_MS: '300',
      PLATFORM_RETRY_DELAY_MS: '5',
    });
    client = new PlatformClient(config);
  });

  afterEach(() => platform.reset());

  afterAll(async () => {
    client.onApplicationShutdown();
    await platform.stop();
  });

  const read = () => client.getPhoneNumber('123', VALID_TOKEN);
  const sendLike = () =>
    client.requestCode('123', VALID_TOKEN, { code_method: 'SMS', language: 'en' });

  async function failure(call: () => Promise<unknown>): Promise<PlatformError> {
    try {
      await call();
    } catch (error) {
      if (error instanceof PlatformError) return error;
      throw error;
    }
    throw new Error('expected a PlatformError');
  }

  it('sends the bearer token to {base}/{version}/{path}', async () => {
    await read();
    expect(platform.requests[0]).toMatchObject({
      method: 'GET',
      path: '/v25.0/123',
      headers: { authorization: `Bearer ${VALID_TOKEN}` },
    });
  });

  it('retries a 5xx and succeeds invisibly', async () => {
    platform.on('GET', /\/123$/, { status: 500, body: {} }, { body: { verified_name: 'ok' } });
    await expect(read()).resolves.toMatchObject({ verified_name: 'ok' });
    expect(platform.requests).toHaveLength(2);
  });

  it('gives up after 3 attempts with platform_unavailable', async () => {
    platform.on('GET', /\/123$/, { status: 503, body: {} });
    const error = await failure(read);
    expect(error.code).toBe('platform_unavailable');
    expect(error.status).toBe(502);
    expect(platform.requests).toHaveLength(3);
  });

  it.each([1, 2, 4, 80007, 130429, 131000, 131016, 131057, 133004])(
    'retries transient platform code %i',
    async (code) => {
      platform.on('GET', /\/123$/, platformError(code, 'transient', 400), { body: {} });
      await expect(read()).resolves.toBeDefined();
      expect(platform.requests).toHaveLength(2);
    },
  );

  it('does not retry other 4xx and carries code, message and fbtrace_id', async () => {
    platform.on('GET', /\/123$/, platformError(100, 'Invalid parameter', 400));
    const error = await failure(read);
    expect(platform.requests).toHaveLength(1);
    expect(error.code).toBe('platform_rejected');
    expect(error.status).toBe(422);
    expect(error.failure).toMatchObject({
      platformCode: 100,
      platformMessage: 'Invalid parameter',
      fbtraceId: 'trace-100',
      httpStatus: 400,
    });
    expect(error.details).toEqual([
      { code: 100, message: 'Invalid parameter', fbtrace_id: 'trace-100' },
    ]);
  });

  it('explains an invalid or expired token (190) to the admin', async () => {
    const error = await failure(() => client.getPhoneNumber('123', 'EAAG-expired'));
    expect(platform.requests).toHaveLength(1);
    expect(error.code).toBe('platform_rejected');
    expect(error.message).toMatch(/access token.*update/i);
    expect(error.message).not.toContain('EAAG-expired');
  });

  it('turns persistent throttling into platform_rate_limited with Retry-After', async () => {
    platform.on('GET', /\/123$/, {
      ...platformError(130429, 'Rate limit hit', 429),
      headers: { 'retry-after': '2' },
    });
    const error = await failure(read);
    expect(platform.requests).toHaveLength(3);
    expect(error.code).toBe('platform_rate_limited');
    expect(error.status).toBe(429);
    expect(error.headers).toEqual({ 'retry-after': '2' });
  });

  it('does not retry 131056 (pair rate limit) and answers 429', async () => {
    platform.on('POST', /request_code$/, platformError(131056, 'Pair rate limit', 400));
    const error = await failure(sendLike);
    expect(platform.requests).toHaveLength(1);
    expect(error.code).toBe('platform_rate_limited');
    expect(error.headers?.['retry-after']).toBeDefined();
  });

  it('retries an idempotent read that timed out', async () => {
    platform.on('GET', /\/123$/, { hang: true }, { body: { verified_name: 'late' } });
    await expect(read()).resolves.toMatchObject({ verified_name: 'late' });
    expect(platform.requests).toHaveLength(2);
  });

  it('never repeats a non-idempotent call that reached the platform and timed out', async () => {
    // The platform never answers: the failure is the timeout's, and the call is not repeated.
    platform.on('POST', /request_code$/, { hang: true });
    const error = await failure(sendLike);
    expect(platform.requests).toHaveLength(1);
    expect(error.code).toBe('platform_unavailable');
    expect(error.failure.mayHaveBeenSent).toBe(true);
    expect(error.message).toMatch(/may have been sent/);
  });

  it('retries even a non-idempotent call when the connection was refused', async () => {
    const { config } = loadConfig({
      NODE_ENV: 'test',
      PLATFORM_API_URL: 'http://127.0.0.1:1',
      PLATFORM_RETRY_DELAY_MS: '1',
    });
    const refused = new PlatformClient(config);
    const attempts: number[] = [];
    const original = refused['attempt'].bind(refused);
    refused['attempt'] = (call: Parameters<typeof original>[0]) => {
      attempts.push(Date.now());
      return original(call);
    };
    const error = await failure(() =>
      refused.requestCode('1', VALID_TOKEN, { code_method: 'SMS', language: 'en' }),
    );
    refused.onApplicationShutdown();
    expect(attempts).toHaveLength(3);
    expect(error.code).toBe('platform_unavailable');
    expect(error.failure.mayHaveBeenSent).toBe(false);
  });

  it('backs off exponentially with jitter, capped', () => {
    const policy = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffDelay(1, policy, () => 0)).toBe(50);
    expect(backoffDelay(1, policy, () => 1)).toBe(100);
    expect(backoffDelay(2, policy, () => 1)).toBe(200);
    expect(backoffDelay(3, policy, () => 1)).toBe(400);
    expect(backoffDelay(10, policy, () => 1)).toBe(1000);
    expect(backoffDelay(10, policy, () => 0)).toBe(500);
  });

  it('does not send on a connection idle longer than servers usually keep one', async () => {
    // A server that keeps connections for a minute, counting them.
    let connections = 0;
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"123"}');
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', () => connections++);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { config } = loadConfig({
      NODE_ENV: 'test',
      PLATFORM_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    const idle = new PlatformClient(config);
    try {
      await idle.getPhoneNumber('123', VALID_TOKEN);
      await idle.getPhoneNumber('123', VALID_TOKEN);
      expect(connections).toBe(1);
      // Past 4 s of idleness the connection is ours to close, before a 5 s server closes it under a request.
      await sleep(4500);
      await idle.getPhoneNumber('123', VALID_TOKEN);
      expect(connections).toBe(2);
    } finally {
      idle.onApplicationShutdown();
      server.closeAllConnections();
      server.close();
    }
  }, 10_000);
});
