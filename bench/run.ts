import { mkdirSync, writeFileSync } from 'node:fs';
import { benchRecovery, type RecoveryResult } from './recovery.bench.js';
import { clearRedisPrefixes } from '../test/support/redis-prefixes.js';
import { benchSend } from './send.bench.js';
import { benchAck, benchPipeline, type Comparison } from './webhook.bench.js';
import { benchEventsDrain, benchEventsLatency } from './events.bench.js';
import { benchEventsCost } from './events-cost.bench.js';
import { benchConsole, benchLiveCost } from './console.bench.js';
import { benchCampaign } from './campaign.bench.js';
import { benchCampaignUpload } from './campaign-upload.bench.js';

/**
 * `npm run bench [-- ack|pipeline|send|events|events-latency|events-cost|console|live-cost|campaign|campaign-upload|recovery]
 * [--runs 3] [--duration 15] [--size 30000] [--rate 1000] [--cost-rate 250] [--phase 10]
 * [--recipients 100000] [--rows 1000000]`:
 * measures the service beside bare baselines doing the same essential work
 * (bench/baselines), service and baseline one after the other, `runs` times
 * (the machine's speed drifts: each ratio is of one pair), and prints each
 * figure with its ratio, then the median ratio and the spread. Without a name
 * it runs ack, pipeline, send, events (the pipeline with and without a client
 * subscribed to every event) and events-latency (acknowledgement to the
 * client's receipt at --rate deliveries/s) and events-cost (the CPU forwarding
 * adds per event in the worker and in PostgreSQL at --cost-rate messages/s, in
 * phases of --phase seconds, beside a bare forwarder and a bare durable
 * outbox), console (the console in Chromium: first load, opening a
 * conversation of 5,000 messages, a message shown live) and live-cost (the
 * acknowledgement rate with 200 live streams open); recovery (crashes and outages, a
 * few minutes), campaign (a campaign of --recipients sent by one worker, beside
 * a bare campaign sender; the worker's memory) and campaign-upload (a CSV of
 * --rows recipients uploaded to the api, beside a bare import; the api's
 * memory) only when named.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) => {
    const index = args.indexOf(`--${name}`);
    return index >= 0 ? Number(args[index + 1]) : fallback;
  };
  const duration = option('duration', 15);
  const size = option('size', 30_000);
  const runs = Math.max(1, option('runs', 3));
  const named = args.filter((arg, i) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'));
  // recovery and campaign (minutes each) run only when named.
  const wanted = (name: string) =>
    named.length === 0
      ? !['recovery', 'campaign', 'campaign-upload'].includes(name)
      : named.includes(name);

  const summaries: Summary[] = [];
  const benches: Array<[string, (run: number) => Promise<Comparison | Comparison[]>]> = [
    ['ack', () => benchAck(duration)],
    // Twice the backlog once: the cost must grow linearly with it.
    ['pipeline', (run) => benchPipeline(size, run === 0)],
    ['send', () => benchSend(duration)],
    ['events', () => benchEventsDrain(size)],
    ['events-latency', () => benchEventsLatency(option('rate', 1000), duration)],
    [
      'events-cost',
      () => benchEventsCost(option('cost-rate', 250), option('phase', 10), option('rate', 1000)),
    ],
    ['console', () => benchConsole()],
    ['live-cost', (run) => benchLiveCost(duration, run)],
    ['campaign', () => benchCampaign(option('recipients', 100_000))],
    ['campaign-upload', () => benchCampaignUpload(option('rows', 1_000_000))],
  ];
  try {
    for (const [name, bench] of benches) {
      if (!wanted(name)) continue;
      // A bench may measure several figures at once: each is summarized on its own.
      const results: Comparison[][] = [];
      for (let run = 0; run < runs; run++) {
        process.stdout.write(`running ${name} (${run + 1} of ${runs})…\n`);
        const comparisons = [await bench(run)].flat();
        comparisons.forEach((comparison, i) => (results[i] ??= []).push(comparison));
        comparisons.forEach(print);
      }
      summaries.push(...results.map(summarize));
    }
  } finally {
    await clearRedisPrefixes();
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
  if (summaries.length > 0) {
    process.stdout.write(`\nsummary: service / bare baseline, median of ${runs} run(s) [spread]\n`);
    for (const s of summaries) {
      process.stdout.write(
        `  ${s.ratio.toFixed(2)} [${s.ratios.map((r) => r.toFixed(2)).join(', ')}]  ${s.service} / ${s.baseline} ${s.unit}  ${s.name}\n`,
      );
    }
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.json', JSON.stringify({ summaries, recovery }, null, 2));
}

interface Summary {
  name: string;
  unit: string;
  /** Medians over the runs. */
  ratio: number;
  service: number;
  baseline: number;
  ratios: number[];
  runs: Comparison[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function summarize(runs: Comparison[]): Summary {
  return {
    name: runs[0].name,
    unit: runs[0].unit,
    ratio: median(runs.map((r) => r.ratio)),
    service: Math.round(median(runs.map((r) => r.service))),
    baseline: Math.round(median(runs.map((r) => r.baseline))),
    ratios: runs.map((r) => r.ratio),
    runs,
  };
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
