import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../test/support/browser.js';
import { envelope, webhookSignature } from '../test/support/fake-platform.js';
import {
  ADMIN_PASSWORD,
  TestDatabase,
  adminToken,
  createApiKey,
  freePort,
  http,
} from '../test/support/test-app.js';
import { waitUntil } from '../test/support/wait.js';
import { startService, startZeroLatencyPlatform, type ServiceProcess } from './support.js';
import {
  connectInstance,
  deliveries,
  load,
  serviceEnvironment,
  startAgent,
  type Comparison,
} from './webhook.bench.js';

const SECRET = 'bench-app-secret';
const PHONE_NUMBER_ID = '410000000001';
const CHANNEL_ACCOUNT_ID = '410000000002';
/** The goals: first load, opening a long conversation, a new message shown live. */
export const CONSOLE_GOALS = { firstLoadKiB: 300, openMs: 1000, liveP95Ms: 1000 };
const CONVERSATION = 5000;
const OPENS = 20;
const LIVE_MESSAGES = 50;
const SESSIONS = 200;

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

/** One signed delivery of `texts` from `from`, as the platform batches them. */
function delivery(from: string, texts: Array<{ id: string; body: string }>) {
  const body = JSON.stringify(
    envelope(
      {
        phoneNumberId: PHONE_NUMBER_ID,
        displayPhoneNumber: '15550100',
        channelAccountId: CHANNEL_ACCOUNT_ID,
      },
      'messages',
      {
        contacts: [{ wa_id: from, profile: { name: `Customer ${from.slice(-4)}` } }],
        messages: texts.map(({ id, body: text }) => ({
          from,
          id,
          timestamp: String(Math.floor(Date.now() / 1000)),
          type: 'text',
          text: { body: text },
        })),
      },
    ),
  );
  return { body, signature: webhookSignature(body, SECRET) };
}

async function post(url: string, signed: { body: string; signature: string }): Promise<void> {
  const answer = await fetch(`${url}/webhooks/messenger`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': signed.signature },
    body: signed.body,
  });
  if (answer.status !== 200) throw new Error(`webhook answered ${answer.status}`);
}

/** The console's first load: the page's script, its preloaded modules and its CSS, gzip-compressed. */
async function firstLoadBytes(url: string): Promise<{ bytes: number; files: number }> {
  const html = await (await fetch(`${url}/console/`)).text();
  const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+\.(?:js|css))"/g)].map(
    (m) => m[1],
  );
  let bytes = 0;
  for (const asset of assets) {
    bytes += gzipSync(Buffer.from(await (await fetch(`${url}${asset}`)).arrayBuffer())).length;
  }
  return { bytes, files: assets.length };
}

/** Clicks the contact named `name` and measures, in the page, until its newest message `last` is painted. */
function openAndTime(page: Page, name: string, last: string): Promise<number> {
  // A script of its own (the bench is compiled without the DOM's types).
  return page.evaluate<number>(`(async () => {
    const name = ${JSON.stringify(name)};
    const last = ${JSON.stringify(last)};
    const button = [...document.querySelectorAll('nav.contacts li.contact button')]
      .find((b) => b.textContent.includes(name));
    const start = performance.now();
    button.click();
    await new Promise((resolve) => {
      const check = () =>
        [...document.querySelectorAll('ol.messages p.text')].some((p) => p.textContent === last)
          ? resolve()
          : requestAnimationFrame(check);
      check();
    });
    await new Promise((resolve) => requestAnimationFrame(resolve));
    return performance.now() - start;
  })()`);
}

/** Notes, in the page, when each "live …" message is first shown (window.seen). */
const WATCH_LIVE = `(() => {
  const seen = (window.seen = {});
  new MutationObserver(() => {
    for (const p of document.querySelectorAll('ol.messages p.text')) {
      const text = p.textContent;
      if (text.startsWith('live ') && !(text in seen)) seen[text] = Date.now();
    }
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
})()`;

/**
 * The console in Debian's Chromium against an `all` process: its first load,
 * the time to open a conversation of 5,000 messages (two such contacts,
 * opened in turn), and the time from a customer's message acknowledged by the
 * webhook to its being shown in the open conversation. The goals stand in the
 * baseline column; the ratio is goal / measured (≥ 1: met).
 */
export async function benchConsole(): Promise<Comparison[]> {
  const db = await TestDatabase.create();
  const platform = await startZeroLatencyPlatform();
  const agent = await startAgent();
  const env = serviceEnvironment(db, platform.url, agent.url);
  let service: ServiceProcess | undefined;
  const browser = await launchBrowser();
  try {
    service = await startService({ ...env, APP_ROLE: 'all', PORT: String(await freePort()) });
    const url = service.url;
    await connectInstance(service);
    const admin = await adminToken(url);
    const [{ id: instanceId }] = await db.query<{ id: string }>('SELECT id FROM instances');
    // The agent stays out: the conversation is the customers' messages only.
    await http(url, 'PATCH', `/admin/instances/${instanceId}`, {
      token: admin,
      body: { agent: { enabled: false } },
    });

    const contacts = ['5511955551001', '5511955551002'];
    for (const from of contacts) {
      for (let batch = 0; batch < CONVERSATION / 100; batch++) {
        const texts = Array.from({ length: 100 }, (_, i) => {
          const n = batch * 100 + i + 1;
          return { id: `wamid.console-${from}-${n}`, body: `message ${n} of ${from}` };
        });
        await post(url, delivery(from, texts));
      }
    }
    const stored = async () =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM messages'))[0].n;
    if (!(await waitUntil(async () => (await stored()) >= 2 * CONVERSATION, 120_000, 250))) {
      throw new Error(`only ${await stored()} messages stored`);
    }

    const load = await firstLoadBytes(url);
    const context = await browser.newContext({ baseURL: url, locale: 'en-US' });
    const page = await context.newPage();
    await page.goto('/console/');
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill(ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.locator('nav.contacts li.contact').nth(1).waitFor({ timeout: 60_000 });

    const opens: number[] = [];
    for (let i = 0; i < OPENS; i++) {
      const from = contacts[i % 2];
      opens.push(
        await openAndTime(page, `Customer ${from.slice(-4)}`, `message ${CONVERSATION} of ${from}`),
      );
    }

    // Live: the open conversation (the second contact's) gets new messages one at a time.
    const from = contacts[(OPENS - 1) % 2];
    await page.evaluate(WATCH_LIVE);
    const live: number[] = [];
    for (let n = 1; n <= LIVE_MESSAGES; n++) {
      const text = `live ${n}`;
      const signed = delivery(from, [{ id: `wamid.console-live-${n}`, body: text }]);
      await post(url, signed);
      const acknowledged = Date.now();
      let shownAt: number | undefined;
      await waitUntil(
        async () =>
          (shownAt = await page.evaluate<number | undefined>(
            `window.seen[${JSON.stringify(text)}]`,
          )) !== undefined,
        30_000,
        5,
      );
      if (shownAt === undefined) throw new Error(`${text} was not shown`);
      live.push(Math.max(0, shownAt - acknowledged));
    }
    await context.close();

    const kib = load.bytes / 1024;
    return [
      {
        name: 'console first load (JavaScript and CSS, gzip)',
        unit: 'KiB',
        service: Math.round(kib * 10) / 10,
        baseline: CONSOLE_GOALS.firstLoadKiB,
        ratio: CONSOLE_GOALS.firstLoadKiB / kib,
        details: { files: load.files, goal: `≤ ${CONSOLE_GOALS.firstLoadKiB} KiB` },
      },
      {
        name: `console: open a conversation of ${CONVERSATION} messages, p95 of ${OPENS} (click to its newest message painted)`,
        unit: 'ms',
        service: Math.round(percentile(opens, 95)),
        baseline: CONSOLE_GOALS.openMs,
        ratio: CONSOLE_GOALS.openMs / Math.max(1, percentile(opens, 95)),
        details: {
          'p50 / max ms': `${Math.round(percentile(opens, 50))} / ${Math.round(Math.max(...opens))}`,
          goal: `≤ ${CONSOLE_GOALS.openMs} ms`,
        },
      },
      {
        name: `console live: webhook acknowledged → shown in the open conversation, p95 of ${LIVE_MESSAGES}`,
        unit: 'ms',
        service: Math.round(percentile(live, 95)),
        baseline: CONSOLE_GOALS.liveP95Ms,
        ratio: CONSOLE_GOALS.liveP95Ms / Math.max(1, percentile(live, 95)),
        details: {
          'p50 / max ms': `${Math.round(percentile(live, 50))} / ${Math.round(Math.max(...live))}`,
          goal: `p95 ≤ ${CONSOLE_GOALS.liveP95Ms} ms`,
        },
      },
    ];
  } finally {
    await browser.close();
    await service?.stop();
    await agent.stop();
    await platform.close();
    await db.drop();
  }
}

/**
 * Opens a live stream as the console uses one: it reads what it is sent
 * (counting the events) and, on `reset`, reads the contacts again.
 */
async function openStream(
  url: string,
  key: string,
  abort: AbortSignal,
  counter: { events: number; reloads: number },
) {
  const response = await fetch(`${url}/live`, {
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    signal: abort,
  });
  if (response.status !== 200 || !response.body)
    throw new Error(`live answered ${response.status}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for (;;) {
        const { value, done } = (await reader.read()) as { value?: Uint8Array; done: boolean };
        if (done || !value) return;
        const text = decoder.decode(value, { stream: true });
        counter.events += text.split('\nevent: ').length - 1;
        if (text.includes('\nevent: reset\n')) {
          counter.reloads++;
          await fetch(`${url}/contacts?limit=100`, {
            headers: { authorization: `Bearer ${key}` },
            signal: abort,
          }).then((r) => r.arrayBuffer());
        }
      }
    } catch {
      // aborted
    }
  })();
}

/**
 * The live streams' cost to the webhook: an `api` and a `worker` process take
 * signed deliveries at c=50 for `duration` seconds, without open streams and
 * with SESSIONS (200) streams of the instance open on the api process (each
 * is sent what its allowance, LIVE_STREAM_RATE, lets through, then rests;
 * on `reset` it reads the contact list, as the console does); without, with,
 * without (with, without, with on odd runs), each phase from an idle pipeline. The service column
 * is the rate with the streams, the baseline the rate without: the goal is a
 * ratio of at least 0.90.
 */
export async function benchLiveCost(duration: number, run: number): Promise<Comparison> {
  const db = await TestDatabase.create();
  const platform = await startZeroLatencyPlatform();
  const agent = await startAgent();
  const env = serviceEnvironment(db, platform.url, agent.url);
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let streams: AbortController | undefined;
  try {
    api = await startService({ ...env, APP_ROLE: 'api', PORT: String(await freePort()) });
    worker = await startService({ ...env, APP_ROLE: 'worker', PORT: String(await freePort()) });
    await connectInstance(api);
    const admin = await adminToken(api.url);
    const [{ id: instanceId }] = await db.query<{ id: string }>('SELECT id FROM instances');
    const key = await createApiKey(api.url, admin, instanceId, 'live-bench');
    const traffic = deliveries();
    const counter = { events: 0, reloads: 0 };
    let acknowledged = 0;
    const inbound = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM messages WHERE direction = 'inbound'`,
        )
      )[0].n;
    const busy = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT ((SELECT count(*) FROM messages WHERE awaiting_turn)
                + (SELECT count(*) FROM turns WHERE status NOT IN ('done', 'failed', 'skipped')))::int
                AS n`,
        )
      )[0].n;
    const phase = async (open: boolean) => {
      // The worker first takes what the phase before acknowledged through its turns: each
      // phase starts from an idle pipeline.
      await waitUntil(
        async () => (await inbound()) >= acknowledged && (await busy()) === 0,
        300_000,
        250,
      );
      if (open) {
        streams = new AbortController();
        for (let i = 0; i < SESSIONS; i++) await openStream(api!.url, key, streams.signal, counter);
      }
      const before = { ...counter };
      const result = await load(api!.url, traffic.next, { duration });
      acknowledged += result['2xx'];
      streams?.abort();
      streams = undefined;
      return {
        result,
        events: counter.events - before.events,
        reloads: counter.reloads - before.reloads,
      };
    };
    acknowledged = (await load(api.url, traffic.next, { duration: 3 }))['2xx']; // warm-up
    // Without, with, without (or with, without, with on odd runs): a drift over the run
    // weighs on both sides alike.
    const order = run % 2 === 0 ? [false, true, false] : [true, false, true];
    const phases: Array<Awaited<ReturnType<typeof phase>> & { open: boolean }> = [];
    for (const open of order) phases.push({ open, ...(await phase(open)) });
    const mean = (open: boolean) => {
      const chosen = phases.filter((p) => p.open === open);
      return Math.round(
        chosen.reduce((sum, p) => sum + p.result.requests.average, 0) / chosen.length,
      );
    };
    const p99 = (open: boolean) =>
      phases
        .filter((p) => p.open === open)
        .map((p) => p.result.latency.p99)
        .join(', ');
    const withStreams = phases.filter((p) => p.open);
    const events = withStreams.reduce((sum, p) => sum + p.events, 0);
    const reloads = withStreams.reduce((sum, p) => sum + p.reloads, 0);
    const rateWith = mean(true);
    const rateWithout = mean(false);
    return {
      name: `webhook acknowledgements/s with ${SESSIONS} live streams open on the api process (api + worker, c=50)`,
      unit: 'acks/s',
      service: rateWith,
      baseline: rateWithout,
      ratio: rateWith / rateWithout,
      details: {
        order: order.map((open) => (open ? 'with' : 'without')).join(', '),
        'p99 ms with / without': `${p99(true)} / ${p99(false)}`,
        'live events received': events,
        'per stream and phase': Math.round(events / SESSIONS / withStreams.length),
        'reloads after reset': reloads,
        goal: `≥ 0.90: ${rateWith / rateWithout >= 0.9 ? 'met' : 'missed'}`,
      },
    };
  } finally {
    streams?.abort();
    await api?.stop();
    await worker?.stop();
    await agent.stop();
    await platform.close();
    await db.drop();
  }
}
