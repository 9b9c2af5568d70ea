import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { FakePlatform, simulateMessage, type WebhookTarget } from './support/fake-platform.js';
import { RedisServer } from './support/redis-server.js';
import { startServiceProcess, type ServiceProcess } from './support/service-process.js';
import { TcpProxy } from './support/tcp-proxy.js';
import {
  APP_SECRET,
  ADMIN_PASSWORD,
  TestDatabase,
  adminToken,
  createApiKey,
  createInstance,
  freePort,
  http,
  readUntil,
  waitFor,
} from './support/test-app.js';

/** testEnvironment's app secret: deliveries signed with it are accepted. */

interface LogLine {
  level: number;
  time: number;
  msg: string;
}

/** The process answers ready once it listens; its log line says so a moment later. */
async function listeningLogged(service: ServiceProcess): Promise<void> {
  await waitFor(() => service.output().includes('"msg":"all process listening'), 30_000);
}

/** Every line the process wrote, each of which must be one JSON log line. */
function logLines(service: ServiceProcess): LogLine[] {
  return service
    .output()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as LogLine);
}

/** The JSON lines only (a failed boot's framework lines may be plain text). */
function jsonLines(service: ServiceProcess): LogLine[] {
  return service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/**
 * NODE_OPTIONS for a service process whose resolver gives `localhost` both
 * loopback addresses, as on most machines (this one's hosts file may have only
 * 127.0.0.1), so that the app must bind both.
 */
const LOCALHOST_IS_BOTH = `--import=data:text/javascript,${encodeURIComponent(`
import dns from 'node:dns';
const lookup = dns.lookup;
dns.lookup = function (host, options, callback) {
  if (host === 'localhost' && typeof options === 'object' && options.all) {
    process.nextTick(callback, null, [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    return;
  }
  return lookup.apply(this, arguments);
};
`)}`;

function linesStartingWith(service: ServiceProcess, start: string): LogLine[] {
  return logLines(service).filter((line) => line.msg.startsWith(start));
}

/**
 * Asks /health/live over and over from now until stop(), and keeps every
 * answer that was not 200 (a refused or cut connection included).
 */
function watchLiveness(url: string): { stop(): Promise<{ answers: number; failures: string[] }> } {
  let stopped = false;
  let answers = 0;
  const failures: string[] = [];
  const loop = (async () => {
    while (!stopped) {
      try {
        const answer = await fetch(`${url}/health/live`);
        await answer.arrayBuffer();
        answers++;
        if (answer.status !== 200) failures.push(`status ${answer.status}`);
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause;
        failures.push(cause?.code ?? String(error));
      }
      await sleep(10);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return { answers, failures };
    },
  };
}

const isReady = async (service: ServiceProcess): Promise<boolean> =>
  (await http(service.url, 'GET', '/health/ready')).status === 200;

/** An admin logs in, connects a number, issues a key; a user writes; the message can be read back. */
async function expectWorking(
  api: ServiceProcess,
  phoneNumberId: string,
  user: string,
): Promise<void> {
  const token = await adminToken(api.url);
  const instanceId = await createInstance(api.url, token, phoneNumberId);
  const key = await createApiKey(api.url, token, instanceId, `key-${phoneNumberId}`);
  const target: WebhookTarget = {
    url: `${api.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId,
  };
  const { wamid, status } = await simulateMessage(target, { waId: user }, 'hello after the outage');
  expect(status).toBe(200);
  const stored = await readUntil(
    () => http<{ wamid: string }>(api.url, 'GET', `/messages/${wamid}`, { token: key }),
    (answer) => answer.status === 200,
    30_000,
  );
  expect(stored).toMatchObject({ status: 200, body: { wamid } });
}

describe('a process started while a dependency is away', () => {
  let db: TestDatabase;
  let platform: FakePlatform;
  const processes: ServiceProcess[] = [];
  const redisServers: RedisServer[] = [];
  const proxies: TcpProxy[] = [];
  const databases: TestDatabase[] = [];

  beforeAll(async () => {
    db = await TestDatabase.create();
    platform = await FakePlatform.start();
  });

  afterAll(async () => {
    await Promise.all(processes.map((service) => service.kill()));
    await Promise.all(redisServers.map((redis) => redis.kill()));
    await Promise.all(proxies.map((proxy) => proxy.stop()));
    await platform.stop();
    await Promise.all([db, ...databases].map((database) => database.drop()));
  });

  it('with Redis away: live, not ready naming Redis, 503 with Retry-After, a line every few seconds; works once Redis answers, without a restart', async () => {
    const redis = RedisServer.at(await freePort());
    redisServers.push(redis);
    const service = await startServiceProcess(
      {
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        APP_ROLE: 'all',
        DATABASE_URL: db.url,
        PLATFORM_API_URL: platform.url,
        REDIS_URL: redis.url,
      },
      { until: 'live' },
    );
    processes.push(service);
    const liveness = watchLiveness(service.url);

    expect(await http(service.url, 'GET', '/health/ready')).toMatchObject({
      status: 503,
      body: {
        status: 'not_ready',
        database: 'healthy',
        cache: 'unhealthy',
        platform_api: 'healthy',
      },
    });
    expect(await http(service.url, 'GET', '/health')).toMatchObject({
      status: 200,
      body: {
        status: 'degraded',
        dependencies: { database: 'healthy', cache: 'unhealthy', platform_api: 'healthy' },
      },
    });
    const login = await http(service.url, 'POST', '/admin/auth/login', {
      body: { username: 'admin', password: ADMIN_PASSWORD },
    });
    expect(login).toMatchObject({
      status: 503,
      body: { code: 'unavailable', message: expect.stringContaining('Redis') },
    });
    expect(login.headers.get('retry-after')).toBe('5');
    const early = await simulateMessage(
      { url: `${service.url}/webhooks/messenger`, appSecret: APP_SECRET, phoneNumberId: '1' },
      { waId: '5511900011000' },
      'too early',
    );
    expect(early.status).toBe(503);

    // A second line once the first has been repeated: every few seconds.
    await waitFor(() => linesStartingWith(service, 'Redis is not reachable').length >= 2, 30_000);
    await redis.launch();
    await waitFor(() => isReady(service), 60_000);
    await listeningLogged(service);
    const { answers, failures } = await liveness.stop();
    // The port answered throughout, the hand-over from the waiting server to the app included.
    expect(failures).toEqual([]);
    expect(answers).toBeGreaterThan(0);

    const lines = logLines(service);
    const waiting = lines.filter((line) => line.msg.startsWith('Redis is not reachable'));
    for (const line of waiting) {
      expect(line.msg).toMatch(
        new RegExp(
          `^Redis is not reachable at 127\\.0\\.0\\.1:${redis.port} \\(ECONNREFUSED\\): waiting for it.*npm run services`,
        ),
      );
    }
    // Not one per check (every second): each repeat comes seconds after the one before.
    for (let i = 1; i < waiting.length; i++) {
      expect(waiting[i].time - waiting[i - 1].time).toBeGreaterThanOrEqual(4000);
    }
    expect(lines.some((line) => line.msg.startsWith('PostgreSQL is not reachable'))).toBe(false);
    expect(service.output()).not.toMatch(/"stack"|\n\s+at /);
    const back = lines.findIndex((line) => line.msg === `Redis answers at 127.0.0.1:${redis.port}`);
    const listening = lines.findIndex((line) => line.msg.startsWith('all process listening'));
    expect(back).toBeGreaterThanOrEqual(0);
    expect(listening).toBeGreaterThan(back);

    await expectWorking(service, '106540352291001', '5511900011001');
  }, 120_000);

  it('a worker started with Redis away takes the deliveries an api process accepts once Redis answers', async () => {
    const redis = RedisServer.at(await freePort());
    redisServers.push(redis);
    const env = {
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      REDIS_URL: redis.url,
      // The api and the worker share one prefix, so they share the delivery stream.
      REDIS_PREFIX: `startup${randomBytes(4).toString('hex')}`,
    };
    const worker = await startServiceProcess({ ...env, APP_ROLE: 'worker' }, { until: 'live' });
    processes.push(worker);
    expect(await http(worker.url, 'GET', '/health/ready')).toMatchObject({
      status: 503,
      body: { status: 'not_ready', database: 'healthy', cache: 'unhealthy' },
    });
    const metrics = await http(worker.url, 'GET', '/metrics');
    expect(metrics).toMatchObject({ status: 503, body: { code: 'unavailable' } });
    expect(metrics.headers.get('retry-after')).toBe('5');

    await redis.launch();
    const api = await startServiceProcess({ ...env, APP_ROLE: 'api' });
    processes.push(api);
    await waitFor(() => isReady(worker), 60_000);
    // Stored by the worker: an api process does not consume deliveries.
    await expectWorking(api, '106540352291002', '5511900011002');
  }, 120_000);

  it('with PostgreSQL away (production): not ready naming the database, 503 with Retry-After; migrates and works once it answers', async () => {
    // A database of its own, without the schema: the process must migrate it.
    const fresh = await TestDatabase.create();
    databases.push(fresh);
    const proxy = await TcpProxy.start('127.0.0.1', 5432);
    proxies.push(proxy);
    proxy.cutOff();
    const password = randomBytes(12).toString('hex');
    const service = await startServiceProcess(
      {
        NODE_ENV: 'production',
        METRICS_TOKEN: 'metrics-token-for-the-startup-test',
        LOG_LEVEL: 'info',
        APP_ROLE: 'all',
        // Trust authentication: the password is never asked for, and must never be shown.
        DATABASE_URL: fresh.url.replace(
          'postgres@127.0.0.1:5432',
          `postgres:${password}@127.0.0.1:${proxy.port}`,
        ),
        PLATFORM_API_URL: platform.url,
      },
      { until: 'live' },
    );
    processes.push(service);
    const liveness = watchLiveness(service.url);

    expect(await http(service.url, 'GET', '/health/ready')).toMatchObject({
      status: 503,
      body: { status: 'not_ready', database: 'unhealthy', cache: 'healthy' },
    });
    const instances = await http(service.url, 'GET', '/admin/instances', { token: 'any' });
    expect(instances).toMatchObject({
      status: 503,
      body: { code: 'unavailable', message: expect.stringContaining('PostgreSQL') },
    });
    expect(instances.headers.get('retry-after')).toBe('5');
    await waitFor(
      () => linesStartingWith(service, 'PostgreSQL is not reachable').length >= 1,
      30_000,
    );
    // Nothing migrated yet.
    expect(await fresh.query("SELECT to_regclass('public.instances') AS t")).toEqual([{ t: null }]);

    proxy.restore();
    await waitFor(() => isReady(service), 60_000);
    await listeningLogged(service);
    const { failures } = await liveness.stop();
    expect(failures).toEqual([]);

    const lines = logLines(service);
    for (const line of lines.filter((l) => l.msg.startsWith('PostgreSQL is not reachable'))) {
      // In production, no development hint.
      expect(line.msg).toMatch(
        new RegExp(
          `^PostgreSQL is not reachable at 127\\.0\\.0\\.1:${proxy.port} \\(.+\\): waiting for it, the process starts once it answers$`,
        ),
      );
    }
    const back = lines.findIndex((l) => l.msg === `PostgreSQL answers at 127.0.0.1:${proxy.port}`);
    const migrated = lines.findIndex((l) => l.msg.startsWith('applied '));
    expect(back).toBeGreaterThanOrEqual(0);
    expect(migrated).toBeGreaterThan(back);
    expect(service.output()).not.toMatch(/"stack"|\n\s+at /);
    expect(service.output()).not.toContain(password);

    await expectWorking(service, '106540352291003', '5511900011003');
  }, 120_000);

  it('PostgreSQL going away during the boot (after its check answered): back to waiting, then boots, without an exit', async () => {
    const fresh = await TestDatabase.create();
    databases.push(fresh);
    const proxy = await TcpProxy.start('127.0.0.1', 5432);
    proxies.push(proxy);
    proxy.cutOff();
    // Its own redis-server: every client on it but the test's is this process's.
    const redis = await RedisServer.start();
    redisServers.push(redis);
    const service = await startServiceProcess(
      {
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        APP_ROLE: 'all',
        DATABASE_URL: fresh.url.replace('127.0.0.1:5432', `127.0.0.1:${proxy.port}`),
        PLATFORM_API_URL: platform.url,
        REDIS_URL: redis.url,
        REDIS_PREFIX: `startup${randomBytes(4).toString('hex')}`,
      },
      { until: 'live' },
    );
    processes.push(service);
    const liveness = watchLiveness(service.url);
    const notReachable = (): number =>
      jsonLines(service).filter((line) => line.msg.startsWith('PostgreSQL is not reachable'))
        .length;
    await waitFor(() => notReachable() >= 1, 30_000);
    const interruptions = (): number =>
      jsonLines(service).filter((line) => line.msg.startsWith('boot interrupted')).length;
    const observer = new Redis(redis.url);
    const redisClients = async (): Promise<number> =>
      String(await observer.client('LIST'))
        .split('\n')
        .filter((line) => line.trim() !== '').length - 1; // the observer's own
    const clientsAfter: number[] = [];
    try {
      for (let boot = 1; boot <= 3; boot++) {
        // One connection gets through, the check's: its SELECT 1 answers, so the
        // boot starts, and every connection the boot opens is refused.
        proxy.admit(1);
        await waitFor(() => service.child.exitCode !== null || interruptions() >= boot, 60_000);
        expect(service.child.exitCode).toBeNull();
        // Waiting again: the line is back, the probes still answer.
        const before = notReachable();
        await waitFor(() => notReachable() > before, 30_000);
        expect(await http(service.url, 'GET', '/health/ready')).toMatchObject({
          status: 503,
          body: { status: 'not_ready', database: 'unhealthy', cache: 'healthy' },
        });
        // What the interrupted boot opened on Redis (queues, workers, subscribers)
        // was closed: at most the dependency check's own connection is open.
        clientsAfter.push(await readUntil(redisClients, (count) => count <= 1, 10_000));
      }
    } finally {
      observer.disconnect();
    }
    expect(clientsAfter.map((count) => Math.min(count, 1))).toEqual(clientsAfter);

    proxy.restore();
    await waitFor(() => isReady(service), 60_000);
    await listeningLogged(service);
    const { failures } = await liveness.stop();
    expect(failures).toEqual([]);
    const lines = jsonLines(service).map((line) => line.msg);
    const interrupted = lines.findIndex((msg) => msg.startsWith('boot interrupted'));
    const back = lines.findIndex((msg) => msg.startsWith('PostgreSQL answers at'));
    const listening = lines.findIndex((msg) => msg.startsWith('all process listening'));
    expect(interrupted).toBeGreaterThanOrEqual(0);
    expect(lines.lastIndexOf(`PostgreSQL answers at 127.0.0.1:${proxy.port}`)).toBeGreaterThan(
      interrupted,
    );
    expect(back).toBeGreaterThanOrEqual(0);
    expect(listening).toBeGreaterThan(interrupted);
    // The process's own waiting replaced TypeORM's retries, which logged a stack trace each.
    expect(service.output()).not.toContain('Unable to connect to the database');

    await expectWorking(service, '106540352291004', '5511900011004');
  }, 180_000);

  it('with HOST=localhost: once the app has the port it answers on 127.0.0.1 and on ::1', async () => {
    const service = await startServiceProcess({
      NODE_OPTIONS: LOCALHOST_IS_BOTH,
      LOG_LEVEL: 'info',
      HOST: 'localhost',
      APP_ROLE: 'api',
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
    });
    processes.push(service);
    // Logged once app.listen has bound every address.
    await waitFor(() => service.output().includes('api process listening on localhost'), 30_000);
    const port = new URL(service.url).port;
    for (const base of [`http://127.0.0.1:${port}`, `http://[::1]:${port}`]) {
      const answer = await fetch(`${base}/health/ready`).then(
        (response) => response.status,
        (error: unknown) => String((error as { cause?: unknown }).cause ?? error),
      );
      expect({ base, answer }).toEqual({ base, answer: 200 });
    }
  }, 60_000);
});
