import { once } from 'node:events';
import { existsSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { PlatformSimulator, VALID_TOKEN } from '../simulator/platform-simulator.js';
import { newSigningSecret, signatureHeader, signingKey } from '../src/events/event-signature.js';
import { freePort } from './support/ports.js';
import { runTool, startTool } from './support/tool-process.js';

const LAUNCHER = 'simulator/run-tool.js';

/** POSTs JSON on a connection of its own (a restarted simulator on the same port is a new server). */
async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const request = httpRequest(url, {
    method: 'POST',
    agent: false,
    headers: { authorization: `Bearer ${VALID_TOKEN}`, 'content-type': 'application/json' },
  });
  request.end(JSON.stringify(body));
  const [response] = (await once(request, 'response')) as [IncomingMessage];
  let text = '';
  for await (const chunk of response) text += (chunk as Buffer).toString();
  return JSON.parse(text) as Record<string, unknown>;
}

/** A send and an upload, as the service makes them: the wamid and the media id the simulator gave. */
async function idsFrom(simulator: PlatformSimulator): Promise<{ wamid: string; mediaId: string }> {
  const sent = (await post(`${simulator.url}/v25.0/106540352242922/messages`, {
    messaging_product: 'messenger',
    to: '5511999990000',
    type: 'text',
  })) as { messages: Array<{ id: string }> };
  const uploaded = (await post(`${simulator.url}/v25.0/106540352242922/media`, {})) as {
    id: string;
  };
  return { wamid: sent.messages[0].id, mediaId: uploaded.id };
}

describe('platform simulator ids', () => {
  it('never repeats a wamid or media id across simulators, restarts included', async () => {
    const port = await freePort();
    const first = await PlatformSimulator.start(port);
    const beside = await PlatformSimulator.start();
    const a = await idsFrom(first);
    const b = await idsFrom(beside);
    await first.stop();
    // The same port again: a restarted `npm run simulator`.
    const restarted = await PlatformSimulator.start(port);
    const c = await idsFrom(restarted);
    await beside.stop();
    await restarted.stop();

    const wamids = [a.wamid, b.wamid, c.wamid];
    const mediaIds = [a.mediaId, b.mediaId, c.mediaId];
    expect(new Set(wamids).size).toBe(3);
    expect(new Set(mediaIds).size).toBe(3);
    // Still the platform's shapes: digits after wamid.fake, a media id a path can carry.
    for (const wamid of wamids) expect(wamid).toMatch(/^wamid\.fake\d+$/);
    for (const id of mediaIds) expect(id).toMatch(/^media-[A-Za-z0-9_-]{1,58}$/);
    expect(wamids).not.toContain('wamid.fake1');
  });

  it('numbers ids from 1 when asked (the tests, whose databases are their own)', async () => {
    const simulator = await PlatformSimulator.start(0, { sequentialIds: true });
    try {
      expect(await idsFrom(simulator)).toEqual({ wamid: 'wamid.fake1', mediaId: 'media-1' });
      expect(await idsFrom(simulator)).toEqual({ wamid: 'wamid.fake2', mediaId: 'media-2' });
    } finally {
      await simulator.stop();
    }
  });
});

describe('npm run simulate / simulator (simulator/run-tool.js)', () => {
  const built = 'dist-tools/simulator/platform-simulator.js';

  it('answers at once when nothing changed, compiling only when its sources did', async () => {
    // The first call compiles if the last build is unknown (npm test rebuilt dist-tools).
    await runTool(process.execPath, [LAUNCHER, 'simulator', '--help']);
    const before = statSync(built).mtimeMs;
    const help = await runTool(process.execPath, [LAUNCHER, 'simulator', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('npm run simulate -- message');
    // Node's start and a few stat calls: nothing compiled, nothing written.
    expect(help.output).not.toContain('compiling');
    expect(statSync(built).mtimeMs).toBe(before);
  });

  it('compiles under a running simulator without taking its files away', async () => {
    const port = await freePort();
    const running = startTool(process.execPath, [
      LAUNCHER,
      'simulator',
      'serve',
      '--port',
      String(port),
    ]);
    try {
      await running.waitForOutput(/platform simulator on/, 60_000);
      const before = statSync(built).mtimeMs;
      // Forget the last build: the next call compiles again, beside the running simulator.
      rmSync('dist-tools/.builds/simulator.json', { force: true });
      const help = await runTool(process.execPath, [LAUNCHER, 'simulator', '--help']);
      expect(help.code).toBe(0);
      expect(help.output).toContain('compiling simulator/cli.ts');
      expect(statSync(built).mtimeMs).toBeGreaterThanOrEqual(before);
      expect(existsSync('dist-tools/simulator/cli.js')).toBe(true);
      // The running one still answers, and its log goes on.
      const answer = await fetch(`http://127.0.0.1:${port}/v25.0/106540352242922`, {
        headers: { authorization: `Bearer ${VALID_TOKEN}`, connection: 'close' },
      });
      expect(answer.status).toBe(200);
      await answer.arrayBuffer();
      await running.waitForOutput(/GET \/v25\.0\/106540352242922/);
    } finally {
      await running.stop();
    }
  }, 90_000);

  it('receives events as a client system would, with `simulate receive`, and checks their signature', async () => {
    const port = await freePort();
    const secret = newSigningSecret();
    const receiving = startTool(process.execPath, [
      LAUNCHER,
      'simulator',
      'receive',
      '--port',
      String(port),
      '--secret',
      secret,
    ]);
    try {
      await receiving.waitForOutput(/event receiver on http:\/\/127\.0\.0\.1:\d+\/events/, 60_000);
      const post = async (signWith: string, id: string) => {
        const body = JSON.stringify({
          id,
          type: 'message.received',
          created_at: new Date().toISOString(),
          instance_id: null,
          data: {
            message: { wamid: 'wamid.R1', content: { text: { body: 'oi' } } },
            contact: { wa_id: '5511900000000' },
          },
        });
        const timestamp = Math.floor(Date.now() / 1000);
        const answer = await fetch(`http://127.0.0.1:${port}/events`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signatureHeader([signingKey(signWith)], id, timestamp, body),
            connection: 'close',
          },
          body,
        });
        await answer.arrayBuffer();
        return answer.status;
      };
      expect(await post(secret, 'evt-good')).toBe(204);
      await receiving.waitForOutput(
        /message\.received evt-good \(signature valid\) from 5511900000000: "oi"/,
      );
      expect(await post(newSigningSecret(), 'evt-forged')).toBe(204);
      await receiving.waitForOutput(/message\.received evt-forged \(SIGNATURE INVALID\)/);
    } finally {
      await receiving.stop();
    }
  }, 90_000);
});
