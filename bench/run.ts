import { mkdirSync, writeFileSync } from 'node:fs';
import { benchRecovery, type RecoveryResult } from './recovery.bench.js';
import { benchSend, type BenchResult } from './send.bench.js';
import { benchWebhook } from './webhook.bench.js';

/**
 * `npm run bench [-- send|webhook|recovery] [--duration 15]`: runs the
 * benchmarks and prints their figures (recovery only when named: it takes
 * a few minutes of crashes and outages).
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const durationIndex = args.indexOf('--duration');
  const duration = durationIndex >= 0 ? Number(args[durationIndex + 1]) : 15;
  const only = args.find((arg) => !arg.startsWith('--') && arg !== String(duration));
  const benches: Record<string, (seconds: number) => Promise<BenchResult>> = {
    send: benchSend,
    webhook: benchWebhook,
  };
  const results: BenchResult[] = [];
  for (const [name, bench] of Object.entries(benches)) {
    if (only && only !== name) continue;
    process.stdout.write(`running ${name} for ${duration} s…\n`);
    results.push(await bench(duration));
  }
  let recovery: RecoveryResult[] = [];
  if (only === 'recovery') {
    process.stdout.write('running recovery scenarios…\n');
    recovery = await benchRecovery();
    for (const r of recovery) {
      process.stdout.write(
        [
          `\n${r.scenario}`,
          `  messages    ${r.messages} acknowledged: ${r.lost} lost, ${r.givenTwice} given to the agent in two turns`,
          `  replies     ${r.repliesTwice} accepted twice, ${r.repliesMissing} never accepted`,
          `  recovery    ${r.recoverySeconds} s (${r.note})`,
        ].join('\n') + '\n',
      );
    }
  }
  for (const r of results) {
    process.stdout.write(
      [
        `\n${r.name}`,
        `  throughput  ${r.requestsPerSecond} req/s (${r.requests} requests, ${r.non2xx} non-2xx, ${r.errors} errors)`,
        `  latency     p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`,
        `  memory      RSS ${r.rssMiB} MiB at the end, peak ${r.peakRssMiB} MiB`,
        ...Object.entries(r.extra ?? {}).map(([k, v]) => `  ${k.padEnd(11)} ${v}`),
      ].join('\n') + '\n',
    );
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.json', JSON.stringify({ results, recovery }, null, 2));
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
