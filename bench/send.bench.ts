import autocannon from 'autocannon';
import { TestDatabase, freePort, testEnvironment } from '../test/support/test-app.js';
import { PLATFORM_TOKEN, json, startService, startZeroLatencyPlatform } from './support.js';

export interface BenchResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  rssMiB: number;
  peakRssMiB: number;
  extra?: Record<string, number | string>;
}

const RECIPIENT = '5511999990000';

/** POST /send/text at concurrency 50 against a zero-latency platform. */
export async function benchSend(durationSeconds: number): Promise<BenchResult> {
  const db = await TestDatabase.create();
  const platform = await startZeroLatencyPlatform();
  const env = testEnvironment({
    NODE_ENV: 'production',
    METRICS_TOKEN: 'bench-metrics-token-0123456789',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    DATABASE_URL: db.url,
    PLATFORM_API_URL: platform.url,
    // Pacing still runs (one Redis call per send) but never holds a send back here.
    PLATFORM_SEND_RATE: '1000000',
    // One key drives the whole load here: lift its own rate limit too.
    API_KEY_RATE_LIMIT: '1000000',
    API_KEY_RATE_BURST: '1000000',
  }) as Record<string, string>;
  const service = await startService(env);
  try {
    const { token } = await json<{ token: string }>(`${service.url}/admin/auth/login`, 'POST', {
      username: env.ADMIN_USERNAME,
      password: env.ADMIN_PASSWORD,
    });
    const instance = await json<{ id: string }>(
      `${service.url}/admin/instances`,
      'POST',
      {
        name: 'bench',
        phone_number_id: '400000000001',
        channel_account_id: '400000000002',
        access_token: PLATFORM_TOKEN,
        token_type: 'system_user',
      },
      token,
    );
    const { key } = await json<{ key: string }>(
      `${service.url}/admin/api-keys`,
      'POST',
      { name: 'bench', instance_id: instance.id },
      token,
    );
    // The recipient wrote recently: the service window check runs and passes.
    await db.query(
      `INSERT INTO contacts (instance_id, wa_id, last_inbound_at) VALUES ($1, $2, now())`,
      [instance.id, RECIPIENT],
    );

    const options = {
      url: `${service.url}/send/text`,
      method: 'POST' as const,
      connections: 50,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ to: RECIPIENT, body: 'Hello from the benchmark' }),
    };
    await autocannon({ ...options, duration: 3 }); // warm-up
    const result = await autocannon({ ...options, duration: durationSeconds });
    const memory = service.memory();
    // Sends in flight when the run stopped are recorded a moment later.
    const stored = async () =>
      Number(
        (
          await db.query<{ count: string }>(
            "SELECT count(*) FROM messages WHERE direction = 'outbound'",
          )
        )[0].count,
      );
    let count = await stored();
    for (let i = 0; i < 50 && count < platform.sends(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      count = await stored();
    }
    return {
      name: 'POST /send/text (c=50)',
      requestsPerSecond: Math.round(result.requests.average),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      requests: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      rssMiB: memory.rssMiB,
      peakRssMiB: memory.peakMiB,
      extra: { storedMessages: Number(count), platformSends: platform.sends() },
    };
  } finally {
    await service.stop();
    await platform.close();
    await db.drop();
  }
}
