import { randomUUID } from 'node:crypto';
import { signedPoster } from './signed-post.js';

/**
 * The floor of event forwarding: a bare script that POSTs COUNT events, each
 * with its own id and a Standard Webhooks signature, to the receiver at URL,
 * CONCURRENCY at a time on keep-alive connections, BODY being a real event's
 * body. No database, no ordering, no retries: what one POST per event costs
 * on this machine. With RATE, it starts RATE events a second (as a service
 * forwards a steady load) instead of as many as it can. With WARMUP, it first
 * POSTs that many, CONCURRENCY at a time, unmeasured (the service is measured
 * warm too). Prints `done <seconds> cpu <ms>`, the CPU being this process's
 * from the first measured POST to the last answer.
 * Env: URL, COUNT, CONCURRENCY, BODY, SECRET (whsec_…), RATE and WARMUP (optional).
 */
const env = process.env as Record<string, string>;
const count = Number(env.COUNT);
const rate = env.RATE ? Number(env.RATE) : 0;
const poster = signedPoster(env.URL, env.SECRET);

/**
 * One event; sent again, once, on a keep-alive connection the receiver closed
 * as it was reused (its idle timeout), as any forwarder would.
 */
async function post(): Promise<void> {
  try {
    await postOnce();
  } catch (error) {
    if ((error as { code?: string }).code !== 'ECONNRESET') throw error;
    await postOnce();
  }
}

function postOnce(): Promise<void> {
  return poster.post(randomUUID(), env.BODY);
}

let started = 0;
async function lane(until: number): Promise<void> {
  while (started < until) {
    started++;
    await post();
  }
}

/** RATE a second, in 10 ms ticks, each event on its own (as a service sends them as they come). */
async function paced(): Promise<void> {
  const begin = Date.now();
  const inFlight: Array<Promise<void>> = [];
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(count, Math.floor(((Date.now() - begin) / 1000) * rate));
      while (started < due) {
        started++;
        inFlight.push(post());
      }
      if (started >= count) {
        clearInterval(tick);
        resolve();
      }
    }, 10);
  });
  await Promise.all(inFlight);
}

const lanes = (until: number) =>
  Promise.all(Array.from({ length: Number(env.CONCURRENCY) }, () => lane(until)));
await lanes(Number(env.WARMUP ?? 0));
started = 0;
const cpu = process.cpuUsage();
const begin = process.hrtime.bigint();
if (rate > 0) await paced();
else await lanes(count);
const used = process.cpuUsage(cpu);
process.stdout.write(
  `done ${Number(process.hrtime.bigint() - begin) / 1e9} cpu ${(used.user + used.system) / 1000}\n`,
);
poster.close();
