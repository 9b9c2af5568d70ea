import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { TestDatabase, freePort, testEnvironment } from '../test/support/test-app.js';
import type { BenchResult } from './send.bench.js';
import { PLATFORM_TOKEN, json, startService, startZeroLatencyPlatform } from './support.js';

const SECRET = 'bench-app-secret';
const PHONE_NUMBER_ID = '410000000001';
const CONTACTS = 500;

/** Counts the message ids the agent is given (answers 204: nothing to send back). */
async function startCountingAgent() {
  const seen = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as {
        messages: Array<{ id: string }>;
      };
      for (const message of body.messages) seen.set(message.id, (seen.get(message.id) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`,
    seen,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Signed deliveries at concurrency 50: acknowledgements/s and latency, then exactly-once to the agent. */
export async function benchWebhook(durationSeconds: number): Promise<BenchResult> {
  const db = await TestDatabase.create();
  const platform = await startZeroLatencyPlatform();
  const agent = await startCountingAgent();
  const shared = testEnvironment({
    NODE_ENV: 'production',
    METRICS_TOKEN: 'bench-metrics-token-0123456789',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    HOST: '127.0.0.1',
    DATABASE_URL: db.url,
    PLATFORM_API_URL: platform.url,
    PLATFORM_APP_SECRET: SECRET,
    AGENT_MODULE_URL: agent.url,
    AGENT_TYPING_INDICATOR: 'false',
    MESSAGE_BUFFER_DELAY: '0.5',
    MESSAGE_BUFFER_MAX_WAIT: '5',
  }) as Record<string, string>;
  const api = await startService({ ...shared, APP_ROLE: 'api', PORT: String(await freePort()) });
  // BENCH_WORKER=during runs the worker alongside the acknowledgements (both on
  // this 2-core machine); by default it starts after them and drains the backlog,
  // as an api pod and a worker pod on separate machines would not compete.
  const workerDuring = process.env.BENCH_WORKER === 'during';
  const startWorker = async () =>
    startService({ ...shared, APP_ROLE: 'worker', PORT: String(await freePort()) });
  let worker = workerDuring ? await startWorker() : undefined;
  try {
    const { token } = await json<{ token: string }>(`${api.url}/admin/auth/login`, 'POST', {
      username: shared.ADMIN_USERNAME,
      password: shared.ADMIN_PASSWORD,
    });
    await json(
      `${api.url}/admin/instances`,
      'POST',
      {
        name: 'bench',
        phone_number_id: PHONE_NUMBER_ID,
        channel_account_id: '410000000002',
        access_token: PLATFORM_TOKEN,
        token_type: 'system_user',
      },
      token,
    );

    let sequence = 0;
    const delivered = new Set<string>();
    const nextDelivery = (): { body: string; signature: string } => {
      const n = ++sequence;
      const from = `55119${String(n % CONTACTS).padStart(8, '0')}`;
      const id = `wamid.bench${n}`;
      delivered.add(id);
      const body = JSON.stringify({
        object: 'messenger_business_account',
        entry: [
          {
            id: '410000000002',
            changes: [
              {
                field: 'messages',
                value: {
                  messaging_product: 'messenger',
                  metadata: { display_phone_number: '15550100', phone_number_id: PHONE_NUMBER_ID },
                  contacts: [{ wa_id: from, profile: { name: `User ${n % CONTACTS}` } }],
                  messages: [
                    {
                      from,
                      id,
                      timestamp: String(Math.floor(Date.now() / 1000)),
                      type: 'text',
                      text: { body: `message ${n}` },
                    },
                  ],
                },
              },
            ],
          },
        ],
      });
      return {
        body,
        signature: `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
      };
    };
    const run = (duration: number) =>
      autocannon({
        url: `${api.url}/webhooks/messenger`,
        connections: 50,
        duration,
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => {
              const { body, signature } = nextDelivery();
              return {
                ...request,
                body,
                headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
              };
            },
          },
        ],
      });
    await run(3); // warm-up (its messages are checked too)
    const result = await run(durationSeconds);
    const memory = api.memory();

    // Every acknowledged message must reach the agent once: wait for the workers to drain.
    const drainStarted = Date.now();
    worker ??= await startWorker();
    const deadline = Date.now() + 300_000;
    while (Date.now() < deadline && [...delivered].some((id) => !agent.seen.has(id)))
      await sleep(500);
    const drainSeconds = Math.round((Date.now() - drainStarted) / 1000);
    await sleep(2000);
    const missing = [...delivered].filter((id) => !agent.seen.has(id)).length;
    const repeated = [...agent.seen.values()].filter((count) => count > 1).length;
    return {
      name: `POST /webhooks/messenger (c=50, signed; worker ${workerDuring ? 'running alongside' : 'started after'})`,
      requestsPerSecond: Math.round(result.requests.average),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      requests: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      rssMiB: memory.rssMiB,
      peakRssMiB: memory.peakMiB,
      extra: {
        deliveredMessages: delivered.size,
        agentReceived: agent.seen.size,
        lost: missing,
        givenTwice: repeated,
        drainSeconds,
      },
    };
  } finally {
    await worker?.stop();
    await api.stop();
    await agent.close();
    await platform.close();
    await db.drop();
  }
}
