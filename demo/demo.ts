import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { TestDatabase } from '../test/support/database.js';
import { FakeAgent } from '../test/support/fake-agent.js';
import { freePort } from '../test/support/ports.js';
import { clearRedisPrefixes, registerRedisPrefix } from '../test/support/redis-prefixes.js';
import { readUntil, waitUntil } from '../test/support/wait.js';
import {
  EventReceiver,
  describeEvent,
  signatureValid,
  type ReceivedEvent,
} from '../simulator/event-receiver.js';
import {
  PlatformSimulator,
  VALID_TOKEN,
  simulateMessage,
  simulateStatus,
  type WebhookTarget,
} from '../simulator/platform-simulator.js';

/**
 * `npm run demo`: the whole product on this machine, no platform account
 * needed. The service runs against the platform simulator and a tiny echo
 * agent; a short conversation is played and each step printed.
 */
const ADMIN_DB =
  process.env.DEMO_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const USER = { waId: '5511987654321', name: 'Ana' };
/** A user who hides the number behind a username: known by a business-scoped user id only. */
const HIDDEN_USER = { userId: 'BR.8F3A21C9D0E4B7', username: 'bia.s', name: 'Bia' };
const PHONE_NUMBER_ID = '106540352242922';

const bold = (text: string): string => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[0m` : text);
let stepNumber = 0;
function step(title: string): void {
  process.stdout.write(`\n${bold(`${++stepNumber}. ${title}`)}\n`);
}
function show(line: string): void {
  process.stdout.write(`   ${line}\n`);
}

/** The agent: answers each batch with what the user said. */
async function startEchoAgent(): Promise<FakeAgent> {
  const agent = await FakeAgent.start();
  agent.answerAlways(({ body: batch }) => {
    const name = batch.contact.name as string | null;
    show(
      `agent ← batch of ${batch.messages.length} messages from ${name}: ${JSON.stringify(batch.text)}`,
    );
    const reply = `Hi ${name ?? 'there'}! You said: ${batch.text.split('\n').join(' / ')}`;
    show(`agent → ${JSON.stringify({ reply })}`);
    return { body: { reply } };
  });
  return agent;
}

async function api<T>(url: string, method: string, body?: unknown, token?: string): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} → ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/**
 * What the demo started, undone in reverse order exactly once: when it ends,
 * fails, or is stopped (Ctrl-C, SIGTERM). Each run has a database and a Redis
 * prefix of its own, so demos side by side never touch each other's, and
 * none is left behind.
 */
const cleanups: Array<() => Promise<unknown>> = [];
let cleaning: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: unknown) =>
        process.stderr.write(
          `demo cleanup: ${error instanceof Error ? error.message : String(error)}\n`,
        ),
      );
    }
  })();
  return cleaning;
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const) {
  process.once(signal, () => {
    process.stderr.write(`\ndemo stopped (${signal}): cleaning up\n`);
    void cleanUp().finally(() => process.exit(code));
  });
}
// A reader who stops reading (`npm run demo | head`) must not end the demo before it cleans up.
process.stdout.on('error', () => undefined);
process.stderr.on('error', () => undefined);
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.once(event, (error: unknown) => {
    process.stderr.write(
      `demo failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    void cleanUp().finally(() => process.exit(1));
  });
}

async function main(): Promise<void> {
  step('Start the platform simulator, an echo agent and the service');
  const platform = await PlatformSimulator.start();
  cleanups.push(() => platform.stop());
  const agent = await startEchoAgent();
  cleanups.push(() => agent.stop());
  const database = await TestDatabase.create({ prefix: 'mc_demo', adminUrl: ADMIN_DB });
  cleanups.push(() => database.drop());
  const port = await freePort();
  const redisPrefix = `mcdemo${randomBytes(4).toString('hex')}`;
  registerRedisPrefix(redisPrefix);
  // After the service stops (cleanups run in reverse), so it writes no key after these go.
  cleanups.push(() => clearRedisPrefixes());
  const secrets = {
    PLATFORM_APP_SECRET: randomBytes(16).toString('hex'),
    ADMIN_PASSWORD: randomBytes(12).toString('hex'),
  };
  const service = spawn(process.execPath, ['dist/main.js'], {
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      REDIS_PREFIX: redisPrefix,
      PLATFORM_API_URL: platform.url,
      AGENT_MODULE_URL: agent.url,
      MESSAGE_BUFFER_DELAY: '1.5',
      MESSAGE_BUFFER_MAX_WAIT: '10',
      ...secrets,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = once(service, 'exit');
  cleanups.push(async () => {
    if (service.exitCode === null && service.signalCode === null) service.kill('SIGTERM');
    await exited;
  });
  const base = `http://127.0.0.1:${port}`;
  const ready = await waitUntil(
    async () =>
      service.exitCode !== null ||
      (await fetch(`${base}/health/ready`).then(
        (r) => r.ok,
        () => false,
      )),
    15_000,
    100,
  );
  if (!ready || service.exitCode !== null) throw new Error('the service did not start');
  show(`service on ${base} (docs at ${base}/docs), simulator on ${platform.url}`);
  show(`database ${database.name} and Redis prefix ${redisPrefix}: removed when the demo ends`);

  step('Admin logs in and connects a number (the simulator checks the token)');
  const { token } = await api<{ token: string }>(`${base}/admin/auth/login`, 'POST', {
    username: 'admin',
    password: secrets.ADMIN_PASSWORD,
  });
  const instance = await api<{ id: string; status: string }>(
    `${base}/admin/instances`,
    'POST',
    {
      name: 'Demo Store',
      phone_number_id: PHONE_NUMBER_ID,
      channel_account_id: '102290129340398',
      access_token: VALID_TOKEN,
      token_type: 'system_user',
    },
    token,
  );
  show(`instance ${instance.id} is ${instance.status}`);
  const { key } = await api<{ key: string }>(
    `${base}/admin/api-keys`,
    'POST',
    { name: 'demo', instance_id: instance.id },
    token,
  );
  show(`API key ${key.slice(0, 12)}… issued (shown once)`);

  step('A client system subscribes to events (signed webhooks to its own URL)');
  const receiver = await EventReceiver.start();
  cleanups.push(() => receiver.stop());
  const subscription = await api<{ id: string; secret: string }>(
    `${base}/admin/event-subscriptions`,
    'POST',
    {
      url: receiver.url,
      event_types: ['message.received', 'message.sent', 'message.status', 'contact.handoff'],
      instance_id: instance.id,
      description: 'demo CRM',
    },
    token,
  );
  show(
    `subscription ${subscription.id} → ${receiver.url}, secret ${subscription.secret.slice(0, 12)}… (shown once)`,
  );

  step('A user writes three messages in a row (signed webhooks from the simulator)');
  const target: WebhookTarget = {
    url: `${base}/webhooks/messenger`,
    appSecret: secrets.PLATFORM_APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  };
  for (const text of ['Oi!', 'Vocês entregam hoje?', 'Moro em Pinheiros.']) {
    const { wamid, status } = await simulateMessage(target, USER, text);
    show(`user → "${text}" (${wamid}) — webhook answered ${status}`);
    await sleep(300);
  }

  step('The burst is buffered, handed to the agent as one batch, and the answer sent');
  const answer = await readUntil(
    () =>
      platform.accepted.find(
        (sent) => sent.message.type === 'text' && sent.message.to === USER.waId,
      ),
    (found) => found !== undefined,
    15_000,
    100,
  );
  if (!answer) throw new Error('the agent answer was not sent');
  const replyText = (answer.message.text as { body: string }).body;
  show(`platform ← text to ${USER.waId} (${answer.wamid}): "${replyText}"`);

  step('The platform reports the answer delivered, then read');
  await simulateStatus(target, answer.wamid, 'delivered', USER);
  await simulateStatus(target, answer.wamid, 'read', USER);
  const stored = await readUntil(
    () => api<{ status: string }>(`${base}/messages/${answer.wamid}`, 'GET', undefined, key),
    ({ status }) => status === 'read',
    5000,
    100,
  );
  show(`GET /messages/${answer.wamid} → status "${stored.status}"`);

  step('A client system sends a message through the API');
  const sent = await api<{ success: boolean; wamid: string }>(
    `${base}/send/text`,
    'POST',
    { to: USER.waId, body: 'Seu pedido saiu para entrega 🚚' },
    key,
  );
  show(`POST /send/text → ${JSON.stringify(sent)}`);

  step('A person answered through the API: the agent pauses for Ana (handoff)');
  const paused = await api<{
    data: Array<{ handoff: { active: boolean; by: string; until: string } }>;
  }>(`${base}/contacts?q=${USER.waId}`, 'GET', undefined, key);
  const handoff = paused.data[0].handoff;
  show(
    `GET /contacts → handoff ${handoff.active ? 'active' : 'off'} (by ${handoff.by}) until ${handoff.until}`,
  );
  const callsBefore = agent.callCount;
  await simulateMessage(target, USER, 'Obrigada, Ana!');
  show('user → "Obrigada, Ana!": stored and forwarded, the agent stays quiet');
  await sleep(2500);
  if (agent.callCount !== callsBefore) throw new Error('the agent answered during the handoff');
  show('(no agent call in 2.5 s)');

  step('The person hands Ana back to the agent, which answers her next message');
  await api(`${base}/contacts/${USER.waId}/handoff`, 'DELETE', {}, key);
  show(`DELETE /contacts/${USER.waId}/handoff → the agent is back`);
  await simulateMessage(target, USER, 'Até amanhã!');
  const resumed = await readUntil(
    () =>
      platform.accepted.filter(
        (sent) => sent.message.type === 'text' && sent.message.to === USER.waId,
      ),
    (sends) =>
      sends.some((sent) => (sent.message.text as { body: string }).body.includes('Até amanhã')),
    15_000,
    100,
  );
  const last = resumed.at(-1);
  show(
    `platform ← text to ${USER.waId}: "${last ? (last.message.text as { body: string }).body : '?'}"`,
  );

  step('A user who hides the number behind a username writes (no from, only a user id)');
  const hidden = await simulateMessage(target, HIDDEN_USER, 'Oi, sou a Bia!');
  show(`@${HIDDEN_USER.username} (${HIDDEN_USER.userId}) → "Oi, sou a Bia!" (${hidden.wamid})`);
  const hiddenAnswer = await readUntil(
    () => platform.accepted.find((sent) => sent.message.recipient === HIDDEN_USER.userId),
    (found) => found !== undefined,
    15_000,
    100,
  );
  if (!hiddenAnswer) throw new Error('the answer to the username user was not sent');
  show(
    `platform ← text to recipient ${HIDDEN_USER.userId}: "${(hiddenAnswer.message.text as { body: string }).body}"`,
  );

  step('A client system sends a small campaign: a template of the catalogue to five customers');
  const catalogue = await readUntil(
    () =>
      api<{ data: Array<{ name: string; status: string; parameters: unknown[] }> }>(
        `${base}/templates?name=shipping_update&language=pt_BR`,
        'GET',
        undefined,
        key,
      ),
    (page) => page.data.length === 1,
    15_000,
    200,
  );
  show(
    `GET /templates → shipping_update (pt_BR) ${catalogue.data[0]?.status}, ${catalogue.data[0]?.parameters.length} places to fill`,
  );
  const campaign = await api<{ id: string; recipients: number; duplicates: number }>(
    `${base}/campaigns`,
    'POST',
    {
      name: 'Entregas de hoje',
      template_name: 'shipping_update',
      language: 'pt_BR',
      rate_per_s: 5,
      start: true,
      recipients: [
        '5511900000101',
        '5511900000102',
        '5511900000103',
        '5511900000104',
        '5511900000105',
        '5511900000105',
      ].map((to, n) => ({
        to,
        parameters: {
          '1': `Cliente ${n + 1}`,
          '2': 'hoje',
          'header.1': `#${1040 + n}`,
          'button.0': String(1040 + n),
        },
      })),
    },
    key,
  );
  show(
    `POST /campaigns → ${campaign.recipients} recipients (${campaign.duplicates} duplicate left out), 5 a second`,
  );
  const done = await readUntil(
    () =>
      api<{ state: string; progress: { sent: number } }>(
        `${base}/campaigns/${campaign.id}`,
        'GET',
        undefined,
        key,
      ),
    (found) => found.state === 'completed',
    30_000,
    250,
  );
  show(`GET /campaigns/${campaign.id} → ${done.state}, ${done.progress.sent} sent, each once`);

  step('The events the client system received, in order, each signature checked');
  const wanted = (events: ReceivedEvent[], type: string) =>
    events.filter((event) => event.event.type === type).length;
  const events = await readUntil(
    () => receiver.received,
    (all) =>
      wanted(all, 'message.received') >= 4 &&
      wanted(all, 'message.sent') >= 4 &&
      wanted(all, 'contact.handoff') >= 2 &&
      all.some(
        (event) => event.event.type === 'message.status' && event.event.data.status === 'read',
      ),
    15_000,
    100,
  );
  for (const received of events) {
    const signature = signatureValid(subscription.secret, received)
      ? '✓ signed'
      : '✗ BAD SIGNATURE';
    show(`${received.event.type.padEnd(16)} ${signature}  ${describeEvent(received)}`);
  }
  if (!events.every((received) => signatureValid(subscription.secret, received))) {
    throw new Error('an event arrived without a valid signature');
  }

  step('Done');
  show(`agent answer: "${replyText}"`);
}

main().then(
  () => cleanUp().then(() => process.exit(0)),
  (error: unknown) => {
    process.stderr.write(
      `demo failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    void cleanUp().finally(() => process.exit(1));
  },
);
