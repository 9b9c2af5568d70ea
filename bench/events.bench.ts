import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { EventReceiver } from '../simulator/event-receiver.js';
import { newSigningSecret } from '../src/events/event-signature.js';
import { EVENT_TYPES } from '../src/events/event.types.js';
import { TestDatabase, adminToken, freePort } from '../test/support/test-app.js';
import { waitUntil } from '../test/support/wait.js';
import { startService, startZeroLatencyPlatform, type ServiceProcess } from './support.js';
import {
  connectInstance,
  deliveries,
  drainService,
  load,
  serviceEnvironment,
  startAgent,
  type Comparison,
  type EventsSubscriber,
} from './webhook.bench.js';

/** The bench's services run as production: the receiver on loopback must be allow-listed. */
const EVENT_ENV = { EVENT_TARGET_ALLOWLIST: '127.0.0.1' };

async function subscribe(api: ServiceProcess, url: string): Promise<void> {
  const token = await adminToken(api.url);
  const answer = await fetch(`${api.url}/admin/event-subscriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, event_types: EVENT_TYPES }), // every type: the full cost
  });
  if (answer.status !== 201) throw new Error(`subscription refused: ${await answer.text()}`);
}

/**
 * A fast receiver that counts events by type (keeps none, but the first
 * message.received body) and is done when it has them all.
 */
async function countingReceiver(): Promise<{
  receiver: EventReceiver;
  subscriber: EventsSubscriber;
  counts: Map<string, number>;
  sample: () => string | undefined;
}> {
  const receiver = await EventReceiver.start({ record: false });
  const counts = new Map<string, number>();
  let sample: string | undefined;
  receiver.onEvent = ({ event, body }) => {
    if (event.type === 'message.received') sample ??= body;
    counts.set(event.type, (counts.get(event.type) ?? 0) + 1);
  };
  return {
    receiver,
    counts,
    sample: () => sample,
    subscriber: {
      subscribe: (api) => subscribe(api, receiver.url),
      done: (messages, replies) =>
        (counts.get('message.received') ?? 0) >= messages &&
        (counts.get('message.sent') ?? 0) >= replies,
    },
  };
}

/**
 * Event forwarding's cost: the same backlog drained by one worker process
 * with no subscription, then with a client subscribed to every event type
 * (each message and each reply becomes an event POSTed to a fast receiver).
 * The service figure is the drain with events, the baseline the drain
 * without, each until every reply was sent (and every event received): the
 * ratio is how much of the pipeline's speed is left with forwarding on.
 */
export async function benchEventsDrain(size: number): Promise<Comparison> {
  const without = await drainService(size, false);
  const { receiver, subscriber, counts, sample } = await countingReceiver();
  let withEvents;
  let events;
  let perType;
  let floorSeconds;
  try {
    withEvents = await drainService(size, process.env.BENCH_PROFILE === '1', subscriber, EVENT_ENV);
    events = [...counts.values()].reduce((sum, n) => sum + n, 0);
    perType = [...counts].map(([type, n]) => `${type} ${n}`).join(', ');
    floorSeconds = await bareForwarding(receiver.url, events, sample() ?? '{}');
  } finally {
    await receiver.stop();
  }
  const rate = (drain: { completeSeconds?: number }) => Math.round(size / drain.completeSeconds!);
  return {
    name: `event forwarding: one worker process, ${size} messages, a client subscribed to every event type`,
    unit: 'msg/s',
    service: rate(withEvents),
    baseline: rate(without),
    ratio: rate(withEvents) / rate(without),
    details: {
      'seconds with / without events': `${withEvents.completeSeconds} / ${without.completeSeconds}`,
      'cost per message with events': `+${Math.round((withEvents.completeSeconds! / without.completeSeconds! - 1) * 100)} %`,
      'events delivered (per type)': `${events} (${perType})`,
      'events per second, one worker (beside its pipeline work)': Math.round(
        events / withEvents.completeSeconds!,
      ),
      'bare forwarder (the floor): as many signed POSTs of a real body, c=64, seconds': `${floorSeconds.toFixed(1)} (+${Math.round((floorSeconds / without.completeSeconds!) * 100)} % of the drain without events)`,
      // An earlier goal, ≤ +20 %, lies below the floor (the bare POSTs alone add more): the
      // goals of forwarding's cost are events-cost's, measured where nothing is saturated.
      goal: 'none of its own: compare with the floor below; the cost goals are events-cost’s',
      'lost / given twice': `${withEvents.lost} / ${withEvents.givenTwice}`,
      'worker peak RSS MiB with / without': `${withEvents.peakRssMiB} / ${without.peakRssMiB}`,
      'PostgreSQL transactions per message with / without': `${withEvents.statementsPerMessage} / ${without.statementsPerMessage}`,
    },
  };
}

/**
 * The bare forwarder (bench/baselines/forwarder.ts) POSTing `count` signed
 * copies of `body` to the receiver, 64 at a time (EVENT_CONCURRENCY's
 * default); its seconds.
 */
async function bareForwarding(url: string, count: number, body: string): Promise<number> {
  const child = spawn(process.execPath, ['dist-tools/bench/baselines/forwarder.js'], {
    env: {
      PATH: process.env.PATH,
      URL: url,
      COUNT: String(count),
      CONCURRENCY: '64',
      BODY: body,
      SECRET: newSigningSecret(),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  const seconds = /done ([\d.]+)/.exec(output)?.[1];
  if (code !== 0 || seconds === undefined)
    throw new Error(`the bare forwarder exited with ${code}`);
  return Number(seconds);
}

/**
 * Delivery latency at a steady load: an api and a worker process take
 * `rate` webhook deliveries a second for `seconds`, and the subscribed
 * client's receipt of each message.received is timed from the moment the
 * webhook acknowledged that message.
 */
export async function benchEventsLatency(rate: number, seconds: number): Promise<Comparison> {
  const db = await TestDatabase.create();
  const platform = await startZeroLatencyPlatform();
  const agent = await startAgent();
  const receiver = await EventReceiver.start({ record: false });
  const env = { ...serviceEnvironment(db, platform.url, agent.url), ...EVENT_ENV };
  const acked = new Map<string, number>();
  const latencies: number[] = [];
  /** From the event's creation (its change committed) to the client's receipt. */
  const sending: number[] = [];
  const early = new Map<string, number>();
  receiver.onEvent = ({ event }) => {
    if (event.type !== 'message.received') return;
    const wamid = (event.data.message as { wamid: string }).wamid;
    const at = Date.now();
    sending.push(Math.max(0, at - Date.parse(event.created_at)));
    const ack = acked.get(wamid);
    if (ack === undefined) early.set(wamid, at);
    else latencies.push(Math.max(0, at - ack));
  };
  const processes: ServiceProcess[] = [];
  try {
    const api = await startService({ ...env, APP_ROLE: 'api', PORT: String(await freePort()) });
    processes.push(api);
    processes.push(
      await startService({ ...env, APP_ROLE: 'worker', PORT: String(await freePort()) }),
    );
    await connectInstance(api);
    await subscribe(api, receiver.url);
    const traffic = deliveries();
    const ids = new WeakMap<object, string>();
    const result = await load(
      api.url,
      traffic.next,
      { duration: seconds },
      {
        overallRate: rate,
        onRequest: (context, id) => ids.set(context, id),
        onAck: (context) => {
          const id = ids.get(context);
          if (!id) return;
          const now = Date.now();
          const received = early.get(id);
          if (received !== undefined) latencies.push(Math.max(0, received - now));
          else acked.set(id, now);
        },
      },
    );
    const sent = result.requests.total;
    await waitUntil(() => latencies.length >= sent, 60_000, 50);
    await sleep(200);
    const quantile = (values: number[]) => {
      const ordered = [...values].sort((a, b) => a - b);
      return (q: number) =>
        ordered[Math.min(ordered.length - 1, Math.floor(q * ordered.length))] ?? NaN;
    };
    const sorted = [...latencies].sort((a, b) => a - b);
    const at = quantile(latencies);
    const sendingAt = quantile(sending);
    return {
      name: `event delivery latency at ${rate} deliveries/s for ${seconds} s (api + worker process): webhook acknowledgement → client receipt`,
      unit: 'ms p99',
      service: at(0.99),
      baseline: 1000,
      ratio: 1000 / Math.max(1, at(0.99)),
      details: {
        'p50 / p90 / p99 / max ms': `${at(0.5)} / ${at(0.9)} / ${at(0.99)} / ${sorted.at(-1)}`,
        'of which from the event written to its receipt, p50 / p99 ms': `${sendingAt(0.5)} / ${sendingAt(0.99)}`,
        'acknowledged / events received': `${sent} / ${latencies.length}`,
        'achieved rate /s': Math.round(result.requests.average),
        goal: 'p99 ≤ 1000 ms (the "baseline" column is the goal)',
      },
    };
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    await receiver.stop();
    await agent.stop();
    await platform.close();
    await db.drop();
  }
}
