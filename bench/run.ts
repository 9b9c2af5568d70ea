import { mkdirSync, writeFileSync } from 'node:fs';
import { benchRecovery, type RecoveryResult } from './recovery.bench.js';
import { benchSend } from './send.bench.js';
import { benchAck, benchPipeline, type Comparison } from './webhook.bench.js';

/**
 * `npm run bench [-- ack|pipeline|send|recovery] [--duration 15] [--size 30000]`:
 * measures the service beside bare baselines doing the same essential work
 * (bench/baselines), in the same run, and prints each figure with its ratio.
 * Without a name it runs ack, pipeline and send; recovery (crashes and
 * outages, a few minutes) only when named.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) => {
    const index = args.indexOf(`--${name}`);
    return index >= 0 ? Number(args[index + 1]) : fallback;
  };
  const duration = option('duration', 15);
  const size = option('size', 30_000);
  const named = args.filter((arg, i) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'));
  const wanted = (name: string) =>
    named.length === 0 ? name !== 'recovery' : named.includes(name);

  const comparisons: Comparison[] = [];
  const benches: Array<[string, () => Promise<Comparison>]> = [
    ['ack', () => benchAck(duration)],
    ['pipeline', () => benchPipeline(size)],
    ['send', () => benchSend(duration)],
  ];
  for (const [name, bench] of benches) {
    if (!wanted(name)) continue;
    process.stdout.write(`running ${name}…\n`);
    const comparison = await bench();
    comparisons.push(comparison);
    print(comparison);
  }
  let recovery: RecoveryResult[] = [];
  if (wanted('recovery')) {
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
  if (comparisons.length > 1) {
    process.stdout.write('\nsummary (service / bare baseline)\n');
    for (const c of comparisons) {
      process.stdout.write(
        `  ${c.ratio.toFixed(2)}  ${c.service} / ${c.baseline} ${c.unit}  ${c.name}\n`,
      );
    }
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.json', JSON.stringify({ comparisons, recovery }, null, 2));
}

function print(c: Comparison): void {
  process.stdout.write(
    [
      `\n${c.name}`,
      `  service     ${c.service} ${c.unit}`,
      `  baseline    ${c.baseline} ${c.unit}`,
      `  ratio       ${c.ratio.toFixed(2)}`,
      ...Object.entries(c.details).map(([k, v]) => `  ${k}: ${v}`),
    ].join('\n') + '\n',
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
