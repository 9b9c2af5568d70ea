import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  TestDatabase,
  adminToken,
  createInstance,
  readUntil,
  startTestApp,
} from './support/test-app.js';

/** Runs a built tool (`npm test` builds them first) and collects its output. */
async function runTool(
  args: string[],
  timeoutMs = 60_000,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, output };
}

describe('npm run demo and the simulator CLI', () => {
  it('plays the demo conversation and shows the agent answer', async () => {
    const { code, output } = await runTool(['dist-tools/demo/demo.js']);
    expect(output).toContain('batch of 3 messages from Ana');
    expect(output).toMatch(
      /agent answer: "Hi Ana! You said: Oi! \/ Vocês entregam hoje\? \/ Moro em Pinheiros\."/,
    );
    expect(output).toMatch(/status "read"/);
    expect(output).toMatch(/POST \/send\/text → \{"success":true,"wamid":"wamid\.fake\d+"\}/);
    expect(output).toContain(
      'platform ← text to recipient BR.8F3A21C9D0E4B7: "Hi Bia! You said: Oi, sou a Bia!"',
    );
    // The subscribed client system's events, signature checked with standardwebhooks.
    expect(output).toMatch(/message\.received +✓ signed +from 5511987654321: "Oi!"/);
    expect(output).toMatch(/message\.sent +✓ signed +to 5511987654321 by agent: "Hi Ana!/);
    expect(output).toMatch(/message\.sent +✓ signed +to 5511987654321 by api: "Seu pedido/);
    expect(output).toMatch(/message\.status +✓ signed +wamid\.fake\d+ to 5511987654321 is read/);
    expect(output).not.toContain('BAD SIGNATURE');
    expect(output).toMatch(/POST \/campaigns → 5 recipients \(1 duplicate left out\)/);
    expect(output).toMatch(/GET \/campaigns\/[0-9a-f-]+ → completed, 5 sent, each once/);
    // The handoff: a person's send paused the agent, the hand-back resumed it.
    expect(output).toMatch(/GET \/contacts → handoff active \(by auto\)/);
    expect(output).toContain('(no agent call in 2.5 s)');
    expect(output).toMatch(/platform ← text to 5511987654321: "Hi Ana! You said: Até amanhã!"/);
    expect(output).toMatch(
      /contact\.handoff +✓ signed +agent paused for 5511987654321 \(by auto\)/,
    );
    expect(output).toMatch(/contact\.handoff +✓ signed +agent back for 5511987654321 \(by api\)/);
    expect(code).toBe(0);
  });

  it('delivers a signed inbound message with `simulate message`', async () => {
    const db = await TestDatabase.create();
    const { FakePlatform } = await import('./support/fake-platform.js');
    const platform = await FakePlatform.start();
    const service = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      PLATFORM_APP_SECRET: 'cli-secret-0123456789',
    });
    try {
      await createInstance(service.url, await adminToken(service.url), '106540352211111');
      const { code, output } = await runTool([
        'dist-tools/simulator/cli.js',
        'message',
        '--from',
        '5511966660000',
        '--text',
        'hi from the CLI',
        '--service',
        `${service.url}/webhooks/messenger`,
        '--secret',
        'cli-secret-0123456789',
        '--phone-number-id',
        '106540352211111',
      ]);
      expect(output).toContain('the service answered HTTP 200');
      expect(code).toBe(0);
      const rows = await readUntil(
        () =>
          db.query<{ body: { text: { body: string } } }>(
            "SELECT body FROM messages WHERE contact = '5511966660000'",
          ),
        (found) => found.length > 0,
        5000,
        50,
      );
      expect(rows[0].body.text.body).toBe('hi from the CLI');

      const wrong = await runTool([
        'dist-tools/simulator/cli.js',
        'message',
        '--from',
        '5511966660000',
        '--text',
        'forged',
        '--service',
        `${service.url}/webhooks/messenger`,
        '--secret',
        'not-the-secret',
      ]);
      expect(wrong.output).toContain('HTTP 401');
      expect(wrong.code).toBe(1);
    } finally {
      await service.close();
      await platform.stop();
      await db.drop();
    }
  });
});
