import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import {
  TestDatabase,
  adminToken,
  createApiKey,
  createInstance,
  freePort,
  http,
  testEnvironment,
} from '../test/support/test-app.js';
import { readUntil } from '../test/support/wait.js';
import {
  BENCH_TEMPLATE,
  PLATFORM_TOKEN,
  startService,
  startZeroLatencyPlatform,
} from './support.js';
import type { Comparison } from './webhook.bench.js';

const run = promisify(execFile);

/**
 * A campaign of `recipients` sent by one worker process (APP_ROLE=worker; an
 * api process creates it, and its recipients are written to their table in
 * one INSERT: a JSON body takes 10,000) to a zero-latency platform with the pacing set far
 * above what it can reach, beside the bare campaign sender
 * (bench/baselines/campaign-sender.ts) doing the same exactly-once steps. The
 * worker's memory is read when a tenth is sent and at the end: it must not
 * grow with the recipients.
 */
export async function benchCampaign(recipients: number): Promise<Comparison> {
  const db = await TestDatabase.create();
  const platform = await startZeroLatencyPlatform();
  const env = testEnvironment({
    NODE_ENV: 'production',
    METRICS_TOKEN: 'bench-metrics-token-0123456789',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    HOST: '127.0.0.1',
    DATABASE_URL: db.url,
    PLATFORM_API_URL: platform.url,
    PLATFORM_SEND_RATE: '1000000',
    API_KEY_RATE_LIMIT: '1000000',
    API_KEY_RATE_BURST: '1000000',
  }) as Record<string, string>;
  try {
    const say = (text: string) => process.stdout.write(`  ${text}\n`);
    const api = await startService({ ...env, APP_ROLE: 'api', PORT: String(await freePort()) });
    say('api started');
    const worker = await startService({
      ...env,
      APP_ROLE: 'worker',
      PORT: String(await freePort()),
    });
    say('worker started');
    let service: number;
    let details: Record<string, string | number>;
    try {
      const token = await adminToken(api.url);
      const instanceId = await createInstance(api.url, token, '400000000001', 'bench', {
        accessToken: PLATFORM_TOKEN,
        channelAccountId: '400000000002',
      });
      const key = await createApiKey(api.url, token, instanceId, 'bench');
      await readUntil(
        async () =>
          (await http<{ data?: unknown[] }>(api.url, 'GET', '/templates', { token: key })).body.data
            ?.length ?? 0,
        (n) => n === 1,
        30_000,
        200,
      );
      say('catalogue synced; creating the campaign');
      const createdAt = Date.now();
      // One JSON body takes 10,000 recipients: the campaign is created with a first
      // one, the rest written straight into its table as a bulk import would.
      const created = await http<{ id: string }>(api.url, 'POST', '/campaigns', {
        token: key,
        body: {
          name: 'bench',
          template_name: BENCH_TEMPLATE.name,
          recipients: [{ to: '5511900000000', parameters: { '1': 'C0' } }],
        },
      });
      if (created.status !== 201) throw new Error(`campaign not created: ${created.text}`);
      await db.query(
        `INSERT INTO campaign_recipients (campaign_id, seq, to_number, parameters)
         SELECT $1, g + 1, '55119' || lpad(g::text, 8, '0'), jsonb_build_object('1', 'C' || g)
         FROM generate_series(1, $2 - 1) g`,
        [created.body.id, recipients],
      );
      await db.query(`UPDATE campaigns SET recipients = $2 WHERE id = $1`, [
        created.body.id,
        recipients,
      ]);
      const createMs = Date.now() - createdAt;
      const before = platform.sends();
      await http(api.url, 'POST', `/campaigns/${created.body.id}/start`, { token: key, body: {} });
      const startedAt = Date.now();
      say('started');
      let tenth = { rssMiB: 0, peakMiB: 0 };
      while (platform.sends() - before < recipients) {
        if (!tenth.rssMiB && platform.sends() - before >= recipients / 10) tenth = worker.memory();
        await sleep(100);
      }
      const seconds = (Date.now() - startedAt) / 1000;
      const end = worker.memory();
      service = Math.round(recipients / seconds);
      details = {
        'worker RSS MiB at a tenth / at the end / peak': `${tenth.rssMiB} / ${end.rssMiB} / ${end.peakMiB}`,
        'POST /campaigns and the bulk insert of the recipients, ms': createMs,
        'platform calls / recipients': `${platform.sends() - before} / ${recipients}`,
      };
    } finally {
      await worker.stop();
      await api.stop();
    }
    say('the bare campaign sender…');
    const { stdout } = await run(
      process.execPath,
      ['dist-tools/bench/baselines/campaign-sender.js'],
      {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: db.url,
          REDIS_URL: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
          PLATFORM_URL: platform.url,
          COUNT: String(recipients),
        },
        maxBuffer: 1024 * 1024,
      },
    );
    const baseline = Number(stdout.trim());
    return {
      name: `campaign sends/s of one worker (${recipients.toLocaleString('en')} recipients, zero-latency platform)`,
      unit: 'sends/s',
      service,
      baseline,
      ratio: service / baseline,
      details,
    };
  } finally {
    await platform.close();
    await db.drop();
  }
}
