import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { startServiceProcess, type ServiceProcess } from './support/service-process.js';
import { TestDatabase, freePort, waitFor } from './support/test-app.js';
import { runTool, startTool, type ToolProcess } from './support/tool-process.js';

/**
 * The README's "Walk-through with curl", run as a reader runs it: the blocks
 * marked `<!-- walkthrough … -->` are taken from README.md as they are and run
 * by bash (with `set -euo pipefail`, as the README suggests for a script)
 * against the simulator started by its launcher (`npm run simulator`) and the
 * built service as a process of its own. Only `CONNECTOR` is set, to this
 * service's address; every other value is the README's own, so the service
 * runs with the development fallbacks the README relies on.
 */

/** The README's marked shell blocks, in order. */
function walkthroughBlocks(): string[] {
  const readme = readFileSync('README.md', 'utf8');
  return [...readme.matchAll(/<!-- walkthrough\b[^>]*-->\s*```bash\n([\s\S]*?)```/g)].map(
    ([, block]) => block,
  );
}

/** The JSON documents a run printed one after the other (curl adds no newline between them). */
function jsonDocuments(text: string): Array<Record<string, unknown>> {
  const documents: Array<Record<string, unknown>> = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"' && depth > 0) {
      inString = true;
    } else if (char === '{') {
      if (depth++ === 0) start = i;
    } else if (char === '}' && depth > 0 && --depth === 0) {
      documents.push(JSON.parse(text.slice(start, i + 1)) as Record<string, unknown>);
    }
  }
  return documents;
}

describe('README walk-through with curl', () => {
  let db: TestDatabase;
  let simulator: ToolProcess;
  let service: ServiceProcess;

  beforeAll(async () => {
    const missing = ['curl', 'jq'].filter(
      (tool) => spawnSync('bash', ['-c', `command -v ${tool}`]).status !== 0,
    );
    if (missing.length > 0) {
      throw new Error(
        `the walk-through needs ${missing.join(' and ')}: install it (apt-get install)`,
      );
    }
    db = await TestDatabase.create();
    const port = await freePort();
    simulator = startTool(process.execPath, [
      'simulator/run-tool.js',
      'simulator',
      'serve',
      '--port',
      String(port),
    ]);
    const [, simulatorUrl] = await simulator.waitForOutput(/platform simulator on (\S+)/, 60_000);
    service = await startServiceProcess({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: simulatorUrl,
      // The development fallbacks the README uses (its login; the simulate CLI's default secret).
      ADMIN_PASSWORD: 'dev-admin-password',
      PLATFORM_APP_SECRET: 'dev-app-secret-change-me',
    });
    await waitFor(
      () =>
        fetch(`${service.url}/health/ready`).then(
          (r) => r.ok,
          () => false,
        ),
      15_000,
    );
  }, 90_000);

  afterAll(async () => {
    await service?.stop();
    await simulator?.stop();
    await db?.drop();
  });

  it('runs top to bottom: each step succeeds and the send answers a wamid', async () => {
    const blocks = walkthroughBlocks();
    expect(blocks.length).toBeGreaterThan(0);
    const script = [
      'set -euo pipefail',
      `trap 'echo "walk-through failed at: $BASH_COMMAND" >&2' ERR`,
      ...blocks,
      // What the steps left in their variables: none may be empty (or "null").
      'echo',
      'echo "RESULT TOKEN=${#TOKEN} INSTANCE=$INSTANCE KEY=${KEY:0:4} INBOUND=$INBOUND WAMID=$WAMID"',
    ].join('\n');
    const run = await runTool('bash', ['-c', script], { CONNECTOR: service.url }, 90_000);
    if (run.code !== 0) throw new Error(`the walk-through exited ${run.code}:\n${run.output}`);

    const result = /RESULT TOKEN=(\d+) INSTANCE=(\S+) KEY=(\S+) INBOUND=(\S+) WAMID=(\S+)/.exec(
      run.stdout,
    );
    expect(result).not.toBeNull();
    const [, tokenLength, instance, keyStart, inbound, wamid] = result!;
    expect(Number(tokenLength)).toBeGreaterThan(20);
    expect(instance).toMatch(/^[0-9a-f-]{36}$/);
    expect(keyStart).toMatch(/^mck_/);
    expect(inbound).toMatch(/^wamid\.sim\d+$/);
    expect(wamid).toMatch(/^wamid\.fake\d+$/);

    // What the steps printed: the numbers, the customer's message, then the answer read back.
    const [numbers, inboundMessage, outboundMessage] = jsonDocuments(run.stdout);
    expect(numbers).toMatchObject({ data: [{ id: '106540352242922' }] });
    expect(inboundMessage).toMatchObject({
      wamid: inbound,
      direction: 'inbound',
      contact: '5511999990000',
    });
    expect(outboundMessage).toMatchObject({ wamid, direction: 'outbound', type: 'text' });

    // The simulator received the answer for the customer.
    await simulator.waitForOutput(/POST \/\S+\/106540352242922\/messages .*"to":"5511999990000"/);
    expect(simulator.output()).toContain('Hello Ana! It left this morning.');
  }, 120_000);
});
