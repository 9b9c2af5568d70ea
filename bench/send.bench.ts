import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import {
  TestDatabase,
  adminToken,
  createApiKey,
  createInstance,
  freePort,
  testEnvironment,
} from '../test/support/test-app.js';
import { readUntil } from '../test/support/wait.js';
import {
  PLATFORM_TOKEN,
  startBaseline,
  startService,
  startZeroLatencyPlatform,
} from './support.js';
import type { Comparison } from './webhook.bench.js';

const RECIPIENT = '5511999990000';
const run = promisify(execFile);

function sendLoad(url: string, key: string, duration: number) {
  return autocannon({
    url: `${url}/send/text`,
    method: 'POST',
    connections: 50,
    duration,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ to: RECIPIENT, body: 'Hello from the benchmark' }),
  });
}

/**
 * The CPU one platform POST costs the process that makes it: through the
 * service's PlatformClient, or through node:http as the bare sender does
 * (bench/baselines/platform-post.ts, in a process of its own).
 */
async function platformPostCpu(platformUrl: string, client: 'service' | 'bare'): Promise<number> {
  const { stdout } = await run(process.execPath, ['dist-tools/bench/baselines/platform-post.js'], {
    env: { PATH: process.env.PATH, PLATFORM_URL: platformUrl, CLIENT: client, COUNT: '20000' },
  });
  return Number(stdout.trim());
}

/** POST /send/text at concurrency 50 against a zero-latency platform, beside a bare sender. */
export async function benchSend(durationSeconds: number): Promise<Comparison> {
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
  try {
    const service = await startService(
      env,
      process.env.BENCH_PROFILE === '1'
        ? ['--cpu-prof', '--cpu-prof-dir=bench/results/profiles']
        : [],
    );
    let result;
    let memory;
    let stored = 0;
    let sentBefore = 0;
    try {
      const token = await adminToken(service.url);
      const instanceId = await createInstance(service.url, token, '400000000001', 'bench', {
        accessToken: PLATFORM_TOKEN,
        channelAccountId: '400000000002',
      });
      const key = await createApiKey(service.url, token, instanceId, 'bench');
      // The recipient wrote recently: the service window check runs and passes.
      await db.query(
        `INSERT INTO contacts (instance_id, wa_id, last_inbound_at) VALUES ($1, $2, now())`,
        [instanceId, RECIPIENT],
      );
      await sendLoad(service.url, key, 3); // warm-up
      result = await sendLoad(service.url, key, durationSeconds);
      memory = service.memory();
      // Sends in flight when the run stopped are recorded a moment later.
      const count = async () =>
        Number(
          (
            await db.query<{ count: string }>(
              "SELECT count(*) FROM messages WHERE direction = 'outbound'",
            )
          )[0].count,
        );
      stored = await readUntil(count, (n) => n >= platform.sends(), 5000, 100);
      sentBefore = platform.sends();
    } finally {
      await service.stop();
    }
    const bare = await startBaseline('send-server', {
      PORT: String(await freePort()),
      KEY: 'bare-bench-key',
      REDIS_URL: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      DATABASE_URL: db.url,
      PLATFORM_URL: platform.url,
    });
    let baseline;
    try {
      await sendLoad(bare.url, 'bare-bench-key', 3);
      baseline = await sendLoad(bare.url, 'bare-bench-key', durationSeconds);
    } finally {
      await bare.stop();
    }
    const platformPost = {
      service: await platformPostCpu(platform.url, 'service'),
      bare: await platformPostCpu(platform.url, 'bare'),
    };
    const serviceRate = Math.round(result.requests.average);
    const baselineRate = Math.round(baseline.requests.average);
    return {
      name: 'POST /send/text/s (c=50, window check and pacing on, zero-latency platform)',
      unit: 'req/s',
      service: serviceRate,
      baseline: baselineRate,
      ratio: serviceRate / baselineRate,
      details: {
        'service p50/p99 ms': `${result.latency.p50} / ${result.latency.p99}`,
        'baseline p50/p99 ms': `${baseline.latency.p50} / ${baseline.latency.p99}`,
        'service / baseline non-2xx': `${result.non2xx + result.errors} / ${baseline.non2xx + baseline.errors}`,
        'service RSS MiB': memory.rssMiB,
        'sent by the platform / stored': `${sentBefore} / ${stored}`,
        'CPU µs per platform POST, service client (axios) / node:http': `${platformPost.service} / ${platformPost.bare}`,
      },
    };
  } finally {
    await platform.close();
    await db.drop();
  }
}
