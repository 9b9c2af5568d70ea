import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, openAsBlob, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** A CSV of `rows` recipients: a number and a name each. */
async function writeCsv(path: string, rows: number): Promise<void> {
  const file = createWriteStream(path);
  file.write('phone,name\n');
  for (let n = 0; n < rows; n++) {
    if (!file.write(`55119${String(n).padStart(8, '0')},Cliente ${n}\n`)) {
      await once(file, 'drain');
    }
  }
  file.end();
  await once(file, 'finish');
}

/**
 * A campaign of `rows` recipients created from a CSV upload (POST
 * /campaigns/upload) by the api process running as in production, beside
 * the bare import (bench/baselines/csv-import.ts: the same parser and
 * INSERTs, nothing else). The api's memory is read before and after: it
 * must not grow with the file.
 */
export async function benchCampaignUpload(rows: number): Promise<Comparison> {
  const db = await TestDatabase.create();
  const platform = await startZeroLatencyPlatform();
  const path = join(tmpdir(), `mc-bench-${process.pid}.csv`);
  const env = testEnvironment({
    NODE_ENV: 'production',
    METRICS_TOKEN: 'bench-metrics-token-0123456789',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    HOST: '127.0.0.1',
    DATABASE_URL: db.url,
    PLATFORM_API_URL: platform.url,
    API_KEY_RATE_LIMIT: '1000000',
    API_KEY_RATE_BURST: '1000000',
  }) as Record<string, string>;
  try {
    const say = (text: string) => process.stdout.write(`  ${text}\n`);
    await writeCsv(path, rows);
    const api = await startService({ ...env, APP_ROLE: 'all', PORT: String(await freePort()) });
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
      const before = api.memory();
      say(`uploading ${rows.toLocaleString('en')} rows`);
      const form = new FormData();
      form.append(
        'campaign',
        JSON.stringify({
          name: 'bench',
          template_name: BENCH_TEMPLATE.name,
          columns: { to: 'phone', parameters: { '1': 'name' } },
        }),
      );
      form.append('file', await openAsBlob(path, { type: 'text/csv' }), 'list.csv');
      const startedAt = performance.now();
      const response = await fetch(`${api.url}/campaigns/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: form,
      });
      const body = (await response.json()) as { recipients?: number };
      const seconds = (performance.now() - startedAt) / 1000;
      if (response.status !== 201 || body.recipients !== rows) {
        throw new Error(`upload answered ${response.status}: ${JSON.stringify(body)}`);
      }
      const after = api.memory();
      service = Math.round(rows / seconds);
      details = {
        'upload, s': seconds.toFixed(1),
        'api RSS MiB before / after / peak': `${before.rssMiB} / ${after.rssMiB} / ${after.peakMiB}`,
        'recipients kept': body.recipients,
      };
    } finally {
      await api.stop();
    }
    say('the bare import…');
    const { stdout } = await run(process.execPath, ['dist-tools/bench/baselines/csv-import.js'], {
      env: { PATH: process.env.PATH, DATABASE_URL: db.url, FILE: path },
    });
    const baseline = Number(stdout.trim());
    return {
      name: `campaign CSV upload rows/s (${rows.toLocaleString('en')} rows)`,
      unit: 'rows/s',
      service,
      baseline,
      ratio: service / baseline,
      details,
    };
  } finally {
    rmSync(path, { force: true });
    await platform.close();
    await db.drop();
  }
}
