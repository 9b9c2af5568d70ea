import { createHmac, createSecretKey, randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';

/**
 * The floor of event forwarding: a bare script that POSTs COUNT events, each
 * with its own id and a Standard Webhooks signature, to the receiver at URL,
 * CONCURRENCY at a time on keep-alive connections, BODY being a real event's
 * body. No database, no ordering, no retries: what one POST per event costs
 * on this machine. Prints `done <seconds>`.
 * Env: URL, COUNT, CONCURRENCY, BODY, SECRET (whsec_…).
 */
const env = process.env as Record<string, string>;
const count = Number(env.COUNT);
const agent = new Agent({ keepAlive: true });
const key = createSecretKey(Buffer.from(env.SECRET.slice('whsec_'.length), 'base64'));
const target = new URL(env.URL);

function post(): Promise<void> {
  return new Promise((resolve, reject) => {
    const id = randomUUID();
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = createHmac('sha256', key)
      .update(`${id}.${timestamp}.${env.BODY}`)
      .digest('base64');
    const req = request(
      target,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(env.BODY),
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': `v1,${signature}`,
        },
      },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(env.BODY);
  });
}

let started = 0;
async function lane(): Promise<void> {
  while (started < count) {
    started++;
    await post();
  }
}

const begin = process.hrtime.bigint();
await Promise.all(Array.from({ length: Number(env.CONCURRENCY) }, lane));
process.stdout.write(`done ${Number(process.hrtime.bigint() - begin) / 1e9}\n`);
agent.destroy();
