import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { newSigningSecret } from '../src/events/event-signature.js';
import { EVENT_TYPES } from '../src/events/event.types.js';
import { TestDatabase, adminToken, freePort } from '../test/support/test-app.js';
import { waitUntil } from '../test/support/wait.js';
import { ReceiverProcess } from './receiver-process.js';
import { startService, startZeroLatencyPlatform, type ServiceProcess } from './support.js';
import {
  connectInstance,
  deliveries,
  load,
  serviceEnvironment,
  transactions,
  type Comparison,
} from './webhook.bench.js';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU milliseconds a process has used so far (user + system), or null when it is gone. */
function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** The processes named `name` (PostgreSQL's postmaster and every backend and helper), by pid. */
function processesNamed(name: string): Map<number, number> {
  const found = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== name) continue;
    } catch {
      continue;
    }
    const ms = cpuMs(Number(entry));
    if (ms !== null) found.set(Number(entry), ms);
  }
  return found;
}

/** What a phase's CPU snapshot holds: the service's two processes, PostgreSQL's and Redis's. */
interface Snapshot {
  worker: number;
  api: number;
  postgres: Map<number, number>;
  redis: Map<number, number>;
}

/**
 * The CPU so far of the service's processes, of PostgreSQL's (its own
 * processes and the backends of the bench's database: the backends of other
 * databases, other people's tests, are left out) and of Redis.
 */
async function snapshot(
  db: TestDatabase,
  worker?: ServiceProcess,
  api?: ServiceProcess,
): Promise<Snapshot> {
  const others = await db.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
     WHERE backend_type = 'client backend' AND datname IS DISTINCT FROM current_database()`,
  );
  const postgres = processesNamed('postgres');
  for (const { pid } of others) postgres.delete(pid);
  return {
    worker: worker ? (cpuMs(worker.pid) ?? 0) : 0,
    api: api ? (cpuMs(api.pid) ?? 0) : 0,
    postgres,
    redis: processesNamed('redis-server'),
  };
}

/**
 * CPU used between two snapshots by the processes alive at both (the issue's
 * measure); with `seen`, also all of it by one that started in between (a
 * pool's new connection) and by one that ended in between up to the last time
 * `seen` saw it (a pool's idle one). A pid whose figure went down is another
 * process that took a freed pid: left out.
 */
function between(
  start: Map<number, number>,
  end: Map<number, number>,
  seen?: Map<number, number>,
): number {
  const last = seen ? new Map([...seen, ...end]) : end;
  let total = 0;
  for (const [pid, ms] of last) {
    const before = start.get(pid);
    if (before === undefined && !seen) continue;
    if (ms >= (before ?? 0)) total += ms - (before ?? 0);
  }
  return total;
}

/** How often a phase looks at PostgreSQL's processes, for those that end before the phase does. */
const SAMPLE_MS = 250;

/**
 * Looks at PostgreSQL's processes (the bench database's backends and its own)
 * until stopped; then the last CPU figure of each one it saw.
 */
function watchPostgres(db: TestDatabase): () => Promise<Map<number, number>> {
  const seen = new Map<number, number>();
  let looking = Promise.resolve();
  const timer = setInterval(() => {
    looking = looking.then(async () => {
      for (const [pid, ms] of (await snapshot(db)).postgres) seen.set(pid, ms);
    });
  }, SAMPLE_MS);
  return async () => {
    clearInterval(timer);
    await looking;
    return seen;
  };
}

/** Rows written so far per table of the service's database: `table` → [inserted, updated (HOT), deleted]. */
async function rowsWritten(db: TestDatabase): Promise<Map<string, number[]>> {
  const stats = await db.query<{
    relname: string;
    ins: number;
    upd: number;
    hot: number;
    del: number;
  }>(
    `SELECT relname, n_tup_ins::int AS ins, n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot,
       n_tup_del::int AS del FROM pg_stat_user_tables`,
  );
  return new Map(stats.map((t) => [t.relname, [t.ins, t.upd, t.hot, t.del]]));
}

interface Phase {
  mode: 'with' | 'without';
  messages: number;
  events: number;
  /** PostgreSQL transactions in the service's database. */
  transactions: number;
  workerMs: number;
  apiMs: number;
  /** PostgreSQL's processes alive at both ends of the phase. */
  postgresMs: number;
  /** The same, with those that started or ended within it. */
  postgresAllMs: number;
  redisMs: number;
}

function measure(
  mode: Phase['mode'],
  start: Snapshot,
  end: Snapshot,
  messages: number,
  events: number,
  transactions = 0,
  seen?: Map<number, number>,
): Phase {
  return {
    mode,
    messages,
    events,
    transactions,
    workerMs: end.worker - start.worker,
    apiMs: end.api - start.api,
    postgresMs: between(start.postgres, end.postgres),
    postgresAllMs: between(start.postgres, end.postgres, seen ?? new Map()),
    redisMs: between(start.redis, end.redis),
  };
}

/**
 * The order of the measured phases after the warm-up, twice: drift in the
 * machine cancels out, and a phase another job disturbed is outvoted.
 */
const ORDER: Array<Phase['mode']> = [
  'without',
  'with',
  'with',
  'without',
  'without',
  'with',
  'with',
  'without',
];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * CPU forwarding adds per event: the median `with` phase's CPU per message
 * less the median `without` phase's, times the messages per event.
 */
function addedPerEvent(phases: Phase[], field: keyof Phase): number {
  const perMessage = (mode: Phase['mode']) =>
    median(phases.filter((p) => p.mode === mode).map((p) => Number(p[field]) / p.messages));
  const withEvents = phases.filter((p) => p.mode === 'with');
  const messagesPerEvent =
    withEvents.reduce((n, p) => n + p.messages, 0) / withEvents.reduce((n, p) => n + p.events, 0);
  return (perMessage('with') - perMessage('without')) * messagesPerEvent;
}

async function subscribe(api: ServiceProcess, token: string, url: string): Promise<string> {
  const answer = await fetch(`${api.url}/admin/event-subscriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, event_types: EVENT_TYPES }),
  });
  if (answer.status !== 201) throw new Error(`subscription refused: ${await answer.text()}`);
  return ((await answer.json()) as { id: string }).id;
}

async function unsubscribe(api: ServiceProcess, token: string, id: string): Promise<void> {
  const answer = await fetch(`${api.url}/admin/event-subscriptions/${id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token}` },
  });
  if (!answer.ok) throw new Error(`subscription not deleted: ${answer.status}`);
}

function quantile(values: number[], q: number): number {
  const ordered = [...values].sort((a, b) => a - b);
  return ordered[Math.min(ordered.length - 1, Math.floor(q * ordered.length))] ?? NaN;
}

/**
 * The cost of forwarding events where nothing is saturated: an api and a
 * worker process (agent off: each inbound message gives exactly one
 * `message.received`) take `rate` webhook deliveries a second in phases of
 * `seconds`, alternately without a subscription and with a client subscribed
 * to every event type (without, with, with, without, twice, after a warm-up); the
 * CPU forwarding adds per event is the difference, for the worker and for
 * PostgreSQL (its processes alive at both ends of a phase, the goal's
 * measure; also printed with those that started or ended within it, sampled
 * every 250 ms). Beside it, in the
 * same invocation: the bare forwarder (bench/baselines/forwarder.ts) POSTing
 * as many events at the same rate, and the bare durable outbox
 * (bench/baselines/outbox.ts) on the same PostgreSQL, in the same phases.
 */
export async function benchEventsCost(
  rate: number,
  seconds: number,
  latencyRate: number,
): Promise<Comparison[]> {
  const db = await TestDatabase.create();
  const platform = await startZeroLatencyPlatform();
  const receiver = await ReceiverProcess.start();
  /** The service's events (the baselines POST to the same receiver later): ids, and the messages'. */
  const eventIds = new Set<string>();
  const wamids = new Set<string>();
  /** An event id received twice, or a second message.received for one message (agent off: one each). */
  let duplicates = 0;
  let received = 0;
  let counting = true;
  let sample: string | undefined;
  /** Per wamid, when the webhook acknowledged it and when its message.received arrived. */
  const acked = new Map<string, number>();
  const arrived = new Map<string, number>();
  /** From each message.received's creation (its message stored) to its receipt. */
  const sending = new Map<string, number>();
  receiver.onReceipt = ({ id, type, wamid, createdAt, at, body }) => {
    if (!counting) return;
    received++;
    if (eventIds.has(id)) {
      duplicates++;
      return;
    }
    eventIds.add(id);
    if (type !== 'message.received') return;
    sample ??= body;
    wamids.add(wamid);
    if (arrived.has(wamid)) {
      duplicates++;
      return;
    }
    arrived.set(wamid, at);
    sending.set(wamid, Math.max(0, at - Date.parse(createdAt)));
  };
  const env: Record<string, string> = {
    ...serviceEnvironment(db, platform.url, ''),
    EVENT_TARGET_ALLOWLIST: '127.0.0.1',
  };
  delete env.AGENT_MODULE_URL; // agent off: a message is one event, and nothing else runs
  const processes: ServiceProcess[] = [];
  try {
    const api = await startService({ ...env, APP_ROLE: 'api', PORT: String(await freePort()) });
    processes.push(api);
    const worker = await startService(
      { ...env, APP_ROLE: 'worker', PORT: String(await freePort()) },
      process.env.BENCH_PROFILE === '1'
        ? ['--cpu-prof', '--cpu-prof-dir=bench/results/profiles']
        : [],
    );
    processes.push(worker);
    await connectInstance(api);
    const token = await adminToken(api.url);
    const traffic = deliveries();
    const forwarded: string[] = [];
    let stored = 0;
    /** One phase: `phaseRate` deliveries/s for `phaseSeconds`, until each is stored (and forwarded). */
    const phase = async (
      mode: Phase['mode'],
      phaseRate: number,
      phaseSeconds: number,
    ): Promise<Phase> => {
      const subscription = mode === 'with' ? await subscribe(api, token, receiver.url) : null;
      const receivedBefore = received;
      const ids = new WeakMap<object, string>();
      const sent: string[] = [];
      const transactionsBefore = await transactions(db);
      const start = await snapshot(db, worker, api);
      const watching = watchPostgres(db);
      await load(
        api.url,
        traffic.next,
        { duration: phaseSeconds },
        {
          overallRate: phaseRate,
          onRequest: (context, id) => ids.set(context, id),
          onAck: (context) => {
            const id = ids.get(context);
            if (id === undefined) return;
            acked.set(id, Date.now());
            sent.push(id);
          },
        },
      );
      stored += sent.length;
      await waitUntil(
        async () => {
          const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages');
          return row.n >= stored;
        },
        120_000,
        100,
      );
      if (mode === 'with') {
        forwarded.push(...sent);
        await waitUntil(() => sent.every((id) => arrived.has(id)), 120_000, 20);
      }
      const seen = await watching();
      const end = await snapshot(db, worker, api);
      if (subscription) await unsubscribe(api, token, subscription);
      const committed = (await transactions(db)) - transactionsBefore;
      return measure(mode, start, end, sent.length, received - receivedBefore, committed, seen);
    };
    await phase('with', rate, 5); // warm-up: connections, JIT, contacts created
    const writtenBefore = await rowsWritten(db);
    const phases: Phase[] = [];
    for (const mode of ORDER) phases.push(await phase(mode, rate, seconds));
    // Latency at the higher rate: from each acknowledgement to its message.received.
    const latencyPhase = await phase('with', latencyRate, Math.max(seconds, 10));
    const latencies = forwarded
      .slice(-latencyPhase.messages)
      .map((id) => Math.max(0, arrived.get(id)! - acked.get(id)!));
    const sendingLatencies = forwarded
      .slice(-latencyPhase.messages)
      .map((id) => sending.get(id) ?? 0);
    const lost = forwarded.filter((id) => !wamids.has(id)).length;
    counting = false;
    // Idle backends report their statistics within 10 s.
    await sleep(11_000);
    const writtenAfter = await rowsWritten(db);
    const perEvent = (table: string) => {
      const [ins, upd, hot, del] = (writtenAfter.get(table) ?? [0, 0, 0, 0]).map(
        (n, i) => (n - (writtenBefore.get(table)?.[i] ?? 0)) / forwarded.length,
      );
      return `${table} ${ins.toFixed(2)} / ${upd.toFixed(2)} (${hot.toFixed(2)}) / ${del.toFixed(2)}`;
    };
    const eventRows = ['events', 'event_deliveries', 'event_lanes', 'event_subscriptions']
      .map(perEvent)
      .join('; ');

    const forwarder = await bareForwarder(receiver.url, sample ?? '{}', rate, seconds);
    const outbox = await bareOutbox(db, receiver.url, rate, seconds);

    const workerPer1000 = addedPerEvent(phases, 'workerMs') * 1000;
    const postgresPerEvent = addedPerEvent(phases, 'postgresMs');
    const outboxPerEvent = addedPerEvent(outbox, 'postgresMs');
    const figures = (p: Phase) =>
      `${p.mode} ${p.messages} msgs ${p.events} events: worker ${Math.round(p.workerMs)} ms, PostgreSQL ${Math.round(p.postgresMs)} ms`;
    const latency = {
      name: `event delivery latency at ${latencyRate} messages/s (agent off, api + worker process): webhook acknowledgement → client receipt of its message.received`,
      unit: 'ms p99',
      service: quantile(latencies, 0.99),
      baseline: 1000,
      ratio: 1000 / Math.max(1, quantile(latencies, 0.99)),
      details: {
        'p50 / p90 / p99 / max ms': [0.5, 0.9, 0.99, 1]
          .map((q) => quantile(latencies, q))
          .join(' / '),
        'of which from the event written to its receipt, p50 / p99 ms': `${quantile(sendingLatencies, 0.5)} / ${quantile(sendingLatencies, 0.99)}`,
        'events forwarded in all phases / lost / duplicated': `${forwarded.length} / ${lost} / ${duplicates}`,
        goal: 'p99 ≤ 1000 ms, 0 lost, 0 duplicated (the "baseline" column is the goal)',
      },
    };
    return [
      {
        name: `event forwarding, worker CPU per 1,000 events at ${rate} messages/s (agent off), beside a bare forwarder at the same rate`,
        unit: 'ms CPU',
        service: Math.round(workerPer1000),
        baseline: Math.round(forwarder.perThousand),
        ratio: forwarder.perThousand / workerPer1000,
        details: {
          '× the bare forwarder': (workerPer1000 / forwarder.perThousand).toFixed(2),
          goal: '≤ 2× the bare forwarder (ratio ≥ 0.50)',
          'bare forwarder per 1,000 events, paced / 64 at a time ms': forwarder.runs,
          'api CPU added per 1,000 events ms': Math.round(addedPerEvent(phases, 'apiMs') * 1000),
          phases: phases.map(figures).join('; '),
        },
      },
      {
        name: `event forwarding, PostgreSQL CPU per event at ${rate} messages/s (agent off), beside a bare durable outbox`,
        unit: 'µs CPU',
        service: Math.round(postgresPerEvent * 1000),
        baseline: Math.round(outboxPerEvent * 1000),
        ratio: outboxPerEvent / postgresPerEvent,
        details: {
          '× the bare outbox': (postgresPerEvent / outboxPerEvent).toFixed(2),
          goal: '≤ 2× the bare outbox (ratio ≥ 0.50), counting the processes alive at both ends of a phase',
          'counting also those that started or ended within a phase, service / outbox µs': `${Math.round(addedPerEvent(phases, 'postgresAllMs') * 1000)} / ${Math.round(addedPerEvent(outbox, 'postgresAllMs') * 1000)} (${(addedPerEvent(phases, 'postgresAllMs') / addedPerEvent(outbox, 'postgresAllMs')).toFixed(2)}×)`,
          'PostgreSQL transactions added per event (rough: idle backends report theirs up to 10 s late, across phases)':
            addedPerEvent(phases, 'transactions').toFixed(2),
          'rows written per event, inserted / updated (HOT) / deleted': eventRows,
          'Redis CPU added per event µs': Math.round(addedPerEvent(phases, 'redisMs') * 1000),
          phases: phases.map(figures).join('; '),
          'bare outbox phases': outbox.map(figures).join('; '),
        },
      },
      latency,
    ];
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await receiver.stop();
    await platform.close();
    await db.drop();
  }
}

/** Runs a baseline script to its end; the numbers of its `done … cpu …` line. */
async function runBaseline(
  script: string,
  env: Record<string, string>,
): Promise<{ done: number; cpu: number }> {
  const child = spawn(process.execPath, [`dist-tools/bench/baselines/${script}.js`], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  const match = /done ([\d.]+) cpu ([\d.]+)/.exec(output);
  if (code !== 0 || !match) throw new Error(`the baseline ${script} exited with ${code}`);
  return { done: Number(match[1]), cpu: Number(match[2]) };
}

/**
 * The bare forwarder's CPU per 1,000 events: POSTing as many events as a
 * phase forwards, paced at `rate` and then 64 at a time (each POST costs less
 * when many go together); the cheaper of the two is the baseline.
 */
async function bareForwarder(url: string, body: string, rate: number, seconds: number) {
  const count = rate * seconds;
  const runs: number[] = [];
  for (const paced of [true, false]) {
    const { cpu } = await runBaseline('forwarder', {
      URL: url,
      COUNT: String(count),
      CONCURRENCY: '64',
      // Warm like the service, which forwarded a warm-up phase first.
      WARMUP: String(Math.round(rate * 5)),
      ...(paced ? { RATE: String(rate) } : {}),
      BODY: body,
      SECRET: newSigningSecret(),
    });
    runs.push(Math.round((cpu / count) * 1000));
  }
  return { perThousand: Math.min(...runs), runs: runs.join(' / ') };
}

/** The bare outbox's phases (a warm-up, then those of ORDER) on the same PostgreSQL. */
async function bareOutbox(
  db: TestDatabase,
  url: string,
  rate: number,
  seconds: number,
): Promise<Phase[]> {
  const child = spawn(process.execPath, ['dist-tools/bench/baselines/outbox.js'], {
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: db.url,
      URL: url,
      RATE: String(rate),
      SECRET: newSigningSecret(),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const line = await lines.next();
    if (line.done) throw new Error('the bare outbox exited');
    return line.value;
  };
  try {
    if ((await next()) !== 'ready') throw new Error('the bare outbox did not start');
    const run = async (mode: Phase['mode'], phaseSeconds: number) => {
      const start = await snapshot(db);
      const watching = watchPostgres(db);
      child.stdin.write(`${mode} ${phaseSeconds}\n`);
      const match = /done (\d+) cpu ([\d.]+)/.exec(await next());
      if (!match) throw new Error('the bare outbox did not finish a phase');
      const messages = Number(match[1]);
      const seen = await watching();
      const end = await snapshot(db);
      return measure(mode, start, end, messages, mode === 'with' ? messages : 0, 0, seen);
    };
    await run('with', 5); // warm-up: its connections open and stay
    const phases: Phase[] = [];
    for (const mode of ORDER) phases.push(await run(mode, seconds));
    return phases;
  } finally {
    child.stdin.end();
    await once(child, 'exit');
  }
}
