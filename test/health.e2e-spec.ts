import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FakePlatform } from './support/fake-platform.js';
import {
  freePort,
  http,
  startTestApp,
  useTestService,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

/** A TCP server that accepts connections and never answers: a hanging dependency. */
async function blackHole(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

describe('health probes', () => {
  const context = useTestService();
  let db: TestDatabase;
  let platform: FakePlatform;
  let service: TestApp;

  beforeAll(() => {
    ({ db, platform, service } = context);
  });

  afterEach(() => platform.reset());

  it('reports every dependency healthy with the service name and package version', async () => {
    const { readFileSync } = await import('node:fs');
    const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string })
      .version;
    const answer = await http(service.url, 'GET', '/health');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      service: 'messaging-connector',
      version,
      status: 'healthy',
      dependencies: { database: 'healthy', cache: 'healthy', platform_api: 'healthy' },
    });
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('answers liveness with no checks and readiness with each dependency', async () => {
    expect(await http(service.url, 'GET', '/health/live')).toMatchObject({
      status: 200,
      body: { status: 'ok' },
    });
    expect(await http(service.url, 'GET', '/health/ready')).toMatchObject({
      status: 200,
      body: { status: 'ready', database: 'healthy', cache: 'healthy', platform_api: 'healthy' },
    });
  });

  it('checks the dependencies once for many anonymous requests, not once each', async () => {
    const fresh = await startTestApp({ DATABASE_URL: db.url, PLATFORM_API_URL: platform.url });
    try {
      platform.reset();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => http(fresh.url, 'GET', '/health')),
      );
      for (let i = 0; i < 10; i++) await http(fresh.url, 'GET', '/health/ready');
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
      expect(platform.callsTo(/^\/$/)).toHaveLength(1);
    } finally {
      await fresh.close();
    }
  });

  it('is degraded but stays ready when the platform hangs, answering all the same', async () => {
    // A service of its own: results are cached for a few seconds.
    const hanging = await startTestApp({ DATABASE_URL: db.url, PLATFORM_API_URL: platform.url });
    platform.on('GET', /^\/$/, { hang: true });
    try {
      await expectDegraded(hanging);
    } finally {
      await hanging.close();
    }
  });

  async function expectDegraded(service: TestApp): Promise<void> {
    // The platform never answers: an answer that calls it unhealthy is its check's timeout.
    const health = await http(service.url, 'GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'degraded',
      dependencies: { database: 'healthy', cache: 'healthy', platform_api: 'unhealthy' },
    });
    const ready = await http(service.url, 'GET', '/health/ready');
    expect(ready).toMatchObject({
      status: 200,
      body: { status: 'ready', platform_api: 'unhealthy' },
    });
  }

  describe('with Redis unreachable', () => {
    let noRedis: TestApp;

    beforeAll(async () => {
      noRedis = await startTestApp({
        DATABASE_URL: db.url,
        PLATFORM_API_URL: platform.url,
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      });
    });

    afterAll(() => noRedis.close());

    it('still answers: health degraded (200), readiness not_ready with 503', async () => {
      const health = await http(noRedis.url, 'GET', '/health');
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({
        status: 'degraded',
        dependencies: { database: 'healthy', cache: 'unhealthy', platform_api: 'healthy' },
      });
      const ready = await http(noRedis.url, 'GET', '/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({
        status: 'not_ready',
        database: 'healthy',
        cache: 'unhealthy',
        platform_api: 'healthy',
      });
      expect((await http(noRedis.url, 'GET', '/health/live')).status).toBe(200);
    });

    it('answers login with 503 unavailable rather than dropping the brute-force limit', async () => {
      const answer = await http(noRedis.url, 'POST', '/admin/auth/login', {
        body: { username: 'admin', password: 'whatever-password' },
      });
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ code: 'unavailable' });
    });
  });

  it('answers the spec literal 200 not_ready when READINESS_NOT_READY_STATUS=200', async () => {
    const literal = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      READINESS_NOT_READY_STATUS: '200',
    });
    try {
      expect(await http(literal.url, 'GET', '/health/ready')).toMatchObject({
        status: 200,
        body: { status: 'not_ready', cache: 'unhealthy' },
      });
    } finally {
      await literal.close();
    }
  });

  it('serves only the health routes in a worker process (APP_ROLE=worker)', async () => {
    const worker = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      APP_ROLE: 'worker',
    });
    try {
      expect(await http(worker.url, 'GET', '/health/ready')).toMatchObject({
        status: 200,
        body: { status: 'ready' },
      });
      const login = await http(worker.url, 'POST', '/admin/auth/login', {
        body: { username: 'admin', password: 'x' },
      });
      expect(login.status).toBe(404);
      expect(login.body).toMatchObject({ code: 'not_found' });
      // No API route at all: a worker runs no guard, so it must serve none.
      for (const [method, path] of [
        ['GET', '/admin/instances'],
        ['GET', '/instance/phone_numbers'],
        ['POST', '/send/text'],
        ['GET', '/messages/wamid.x'],
        ['POST', '/webhooks/messenger'],
      ] as const) {
        expect((await http(worker.url, method, path)).status).toBe(404);
      }
    } finally {
      await worker.close();
    }
  });

  it('bounds the cache check when Redis accepts connections but never answers', async () => {
    const hole = await blackHole();
    const hanging = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      REDIS_URL: `redis://127.0.0.1:${hole.port}`,
    });
    try {
      // Redis never answers: an answer that calls it unhealthy is the check's timeout.
      const health = await http(hanging.url, 'GET', '/health');
      expect(health.body).toMatchObject({ dependencies: { cache: 'unhealthy' } });
      const ready = await http(hanging.url, 'GET', '/health/ready');
      expect(ready.status).toBe(503);
    } finally {
      await hanging.close();
      await hole.close();
    }
  });
});
