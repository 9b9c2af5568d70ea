import { setTimeout as sleep } from 'node:timers/promises';
import { FakeAgent } from './support/fake-agent.js';
import { deliverSigned, envelope, type WebhookTarget } from './support/fake-platform.js';
import {
  adminToken,
  createApiKey,
  createInstance,
  http,
  readUntil,
  useTestService,
  waitFor,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

const SECRET = 'test-app-secret-1';
const PHONE_NUMBER_ID = '106540352288301';
/** A short auto-pause, so its timers run out within a test. */
const PAUSE_S = 8;

interface Handoff {
  active: boolean;
  until: string | null;
  since: string | null;
  reason: string | null;
  by: string | null;
}

let sequence = 0;

describe('handoff timers: a pause follows the last send of a person', () => {
  const context = useTestService({
    PLATFORM_APP_SECRET: SECRET,
    AGENT_MODULE_URL: 'http://127.0.0.1:1/agent', // replaced in beforeAll
    MESSAGE_BUFFER_DELAY: '0.2',
    MESSAGE_BUFFER_MAX_WAIT: '1',
    AGENT_TYPING_INDICATOR: 'false',
    HANDOFF_AUTO_PAUSE_S: String(PAUSE_S),
    // The sweeper clears ended pauses only at start: a pause that ended is still on the row.
    SWEEP_INTERVAL_S: '3600',
  });
  let service: TestApp;
  let db: TestDatabase;
  let agent: FakeAgent;
  let token: string;
  let instanceId: string;
  let key: string;

  const target = (): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  });
  /** An inbound text, once it is stored. */
  const inbound = async (from: string, text: string): Promise<string> => {
    const wamid = `wamid.timers${++sequence}`;
    const status = await deliverSigned(
      target(),
      envelope(target(), 'messages', {
        contacts: [{ profile: { name: `User ${from}` }, wa_id: from }],
        messages: [
          {
            from,
            id: wamid,
            timestamp: String(Math.floor(Date.now() / 1000)),
            type: 'text',
            text: { body: text },
          },
        ],
      }),
    );
    expect(status).toBe(200);
    await waitFor(
      async () => (await db.query('SELECT 1 FROM messages WHERE wamid = $1', [wamid])).length > 0,
    );
    return wamid;
  };
  const send = async (to: string, body: string): Promise<void> => {
    const answer = await http(service.url, 'POST', '/send/text', {
      token: key,
      body: { to, body },
    });
    expect(answer.status).toBe(200);
  };
  const handoff = async (waId: string): Promise<Handoff> => {
    const page = await http<{ data: Array<{ wa_id: string; handoff: Handoff }> }>(
      service.url,
      'GET',
      `/contacts?q=${waId}`,
      { token: key },
    );
    return page.body.data[0].handoff;
  };
  const untilOf = (h: Handoff): number => Date.parse(h.until!);
  /** A contact that wrote (its window open) and was answered by the agent once. */
  const answeredContact = async (waId: string): Promise<void> => {
    await inbound(waId, 'oi');
    await readUntil(
      () => agent.callsFor(waId),
      (calls) => calls.length >= 1,
    );
  };

  beforeAll(async () => {
    agent = await FakeAgent.start();
    (context.service.config as { AGENT_MODULE_URL?: string }).AGENT_MODULE_URL = agent.url;
    ({ service, db } = context);
    token = await adminToken(service.url);
    instanceId = await createInstance(service.url, token, PHONE_NUMBER_ID, 'Timers');
    key = await createApiKey(service.url, token, instanceId, 'timers');
  });

  beforeEach(() => {
    agent.reset();
  });

  afterAll(async () => {
    await agent?.stop();
  });

  it("a further send during the pause moves its end to the person's last send", async () => {
    const who = '5511900083001';
    await answeredContact(who);
    await send(who, 'Oi, aqui é a Ana.');
    const first = await handoff(who);
    expect(first).toMatchObject({ active: true, by: 'auto' });

    await sleep(1500);
    const beforeSecond = Date.now();
    await send(who, 'Já vejo o seu pedido.');
    const second = await handoff(who);
    expect(second).toMatchObject({ active: true, by: 'auto', since: first.since });
    expect(untilOf(second)).toBeGreaterThan(untilOf(first));
    expect(untilOf(second)).toBeGreaterThanOrEqual(beforeSecond + PAUSE_S * 1000);
  });

  it('a send just after a pause ended pauses the agent again', async () => {
    const who = '5511900083002';
    await answeredContact(who);
    await send(who, 'Oi!');
    const first = await handoff(who);
    expect(first.active).toBe(true);
    await readUntil(
      () => handoff(who),
      (h) => !h.active,
      (PAUSE_S + 10) * 1000,
    );

    const beforeAgain = Date.now();
    await send(who, 'Ainda estou aqui.');
    const again = await handoff(who);
    expect(again).toMatchObject({ active: true, by: 'auto' });
    expect(untilOf(again)).toBeGreaterThanOrEqual(beforeAgain + PAUSE_S * 1000);
  });

  it("a message after the first pause's end, before the extended end, is not given to the agent", async () => {
    const who = '5511900083003';
    await answeredContact(who);
    await send(who, 'Oi, aqui é a Ana.');
    const first = await handoff(who);
    // Half a pause: the message below has about 3 s to be stored in between.
    await sleep(4000);
    const secondSent = Date.now();
    await send(who, 'Um momento.');

    // After the first send's pause would have ended, within the second's.
    await waitFor(() => Date.now() > untilOf(first) + 100, (PAUSE_S + 10) * 1000);
    const during = await inbound(who, 'alguém aí?');
    if (Date.now() >= secondSent + PAUSE_S * 1000) {
      throw new Error('the machine was too slow to store the message within the second pause');
    }

    // The pause ends; the contact writes again: the agent gets that message alone.
    await readUntil(
      () => handoff(who),
      (h) => !h.active,
      (PAUSE_S + 10) * 1000,
    );
    const after = await inbound(who, 'voltei');
    const calls = await readUntil(
      () => agent.callsFor(who),
      (list) => list.length >= 2,
    );
    expect(calls.slice(1).map((call) => call.body.messages.map((m) => m.id))).toEqual([[after]]);
    expect(calls.flatMap((call) => call.body.messages.map((m) => m.id))).not.toContain(during);
  });

  it("a person's own pause is extended by their sends, never shortened", async () => {
    // A client's short pause: a send goes past its end, so the pause follows the send.
    const short = '5511900083004';
    await answeredContact(short);
    const paused = await http<{ handoff: Handoff }>(
      service.url,
      'POST',
      `/contacts/${short}/handoff`,
      {
        token: key,
        body: { until: new Date(Date.now() + 1500).toISOString(), reason: 'the manager answers' },
      },
    );
    expect(paused.status).toBe(200);
    const beforeSend = Date.now();
    await send(short, 'Sou o gerente.');
    const extended = await handoff(short);
    expect(extended).toMatchObject({
      active: true,
      by: 'api',
      reason: 'the manager answers',
      since: paused.body.handoff.since,
    });
    expect(untilOf(extended)).toBeGreaterThanOrEqual(beforeSend + PAUSE_S * 1000);

    // An admin's long pause: a send does not bring its end closer.
    const long = '5511900083005';
    await answeredContact(long);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const adminPaused = await http<{ handoff: Handoff }>(
      service.url,
      'POST',
      `/admin/instances/${instanceId}/contacts/${long}/handoff`,
      { token, body: { until, reason: 'complaint' } },
    );
    expect(adminPaused.status).toBe(200);
    await send(long, 'Estamos vendo o seu caso.');
    expect(await handoff(long)).toMatchObject({
      active: true,
      until,
      by: 'admin',
      reason: 'complaint',
    });
  });

  it('a person who answers takes over the pause the agent asked for, its end kept', async () => {
    const who = '5511900083006';
    agent.answerAlways(() => ({
      body: { handoff: true, reason: 'wants a person', reply: 'Já chamo.' },
    }));
    await answeredContact(who);
    const asked = await readUntil(
      () => handoff(who),
      (h) => h.active && h.by === 'agent',
    );
    await send(who, 'Oi, sou a Ana.');
    expect(await handoff(who)).toMatchObject({
      active: true,
      by: 'auto',
      until: asked.until,
      since: asked.since,
    });
  });
});
