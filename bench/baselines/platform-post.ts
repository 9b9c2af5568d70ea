import 'reflect-metadata';
import { Agent, request } from 'node:http';
import { loadConfig } from '../../src/config/load-config.js';
import { PlatformClient } from '../../src/platform/platform-client.js';
import type { PlatformMessage } from '../../src/platform/platform-message.js';

/**
 * The CPU one platform send costs its caller, measured in this process alone
 * (the platform answers from another): CLIENT=service sends through the
 * service's PlatformClient (axios, as the stack has it), CLIENT=bare through
 * node:http as the bare sender does. COUNT sends, 50 at a time, after a
 * warm-up; prints the microseconds of CPU per send. Env: PLATFORM_URL,
 * CLIENT, COUNT.
 */
const { PLATFORM_URL, CLIENT, COUNT } = process.env as Record<string, string>;
const count = Number(COUNT ?? 20000);
const message: PlatformMessage = {
  messaging_product: 'messenger',
  recipient_type: 'individual',
  to: '5511999990000',
  type: 'text',
  text: { body: 'Hello from the benchmark' },
};

const { config } = loadConfig({
  NODE_ENV: 'development',
  LOG_LEVEL: 'silent',
  PLATFORM_API_URL: PLATFORM_URL,
});
const client = new PlatformClient(config);
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function bareSend(): Promise<string> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(message);
    const req = request(
      `${PLATFORM_URL}/v25.0/400000000001/messages`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          authorization: 'Bearer bench-token',
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          const answer = JSON.parse(text) as { messages: Array<{ id: string }> };
          resolve(answer.messages[0].id);
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const send =
  CLIENT === 'bare' ? bareSend : () => client.sendMessage('400000000001', 'bench-token', message);

async function run(total: number): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (started++ < total) await send();
    }),
  );
}

await run(Math.min(5000, count));
const before = process.cpuUsage();
await run(count);
const used = process.cpuUsage(before);
process.stdout.write(`${((used.user + used.system) / count).toFixed(1)}\n`);
client.onApplicationShutdown();
agent.destroy();
