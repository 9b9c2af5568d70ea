import { FakeAgent } from './support/fake-agent.js';
import { deliverSigned, envelope, type WebhookTarget } from './support/fake-platform.js';
import { holdSends } from './support/send-hold.js';
import {
  APP_SECRET,
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

const PHONE_NUMBER_ID = '106540352288301';
/**
 * A long auto-pause (its slack a minute), so no step outruns a pause however
 * slow the machine: time passing is written to the database instead (a
 * pause's end moved earlier), never waited for.
 */
const PAUSE_S = 600;

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
    agent: true,
    env: {
      MESSAGE_BUFFER_DELAY: '0.2',
      MESSAGE_BUFFER_MAX_WAIT: '1',
      AGENT_TYPING_INDICATOR: 'false',
      HANDOFF_AUTO_PAUSE_S: String(PAUSE_S),
      // The sweeper clears ended pauses only at start: a pause that ended is still on the row.
      SWEEP_INTERVAL_S: '3600',
    },
  });
  let service: TestApp;
  let db: TestDatabase;
  let agent: FakeAgent;
  let token: string;
  let instanceId: string;
  let key: string;

  const target = (): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
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
  /** As if time had passed: the contact's pause ends `seconds` from now (in the past when negative). */
  const pauseEndsIn = async (waId: string, seconds: number): Promise<number> => {
    const [row] = await db.query<{ until: Date }>(
      `UPDATE contacts SET handoff_until = now() + $2::float8 * interval '1 second'
       WHERE wa_id = $1 RETURNING handoff_until AS until`,
      [waId, seconds],
    );
    return row.until.getTime();
  };
  /** A person's send, tried again while the pacer refuses it (held past its longest wait). */
  const sendThroughHold = async (to: string, body: string): Promise<void> => {
    for (;;) {
      const answer = await http(service.url, 'POST', '/send/text', {
        token: key,
        body: { to, body },
      });
      if (answer.status === 200) return;
      expect(answer.status).toBe(429);
    }
  };
  /** A contact that wrote (its window open) and was answered by the agent once. */
  const answeredContact = async (waId: string): Promise<void> => {
    await inbound(waId, 'oi');
    await readUntil(
      () => agent.callsFor(waId),
      (calls) => calls.length >= 1,
    );
  };

  beforeAll(async () => {
    ({ service, db, agent } = context);
    token = await adminToken(service.url);
    instanceId = await createInstance(service.url, token, PHONE_NUMBER_ID, 'Timers');
    key = await createApiKey(service.url, token, instanceId, 'timers');
  });

  beforeEach(() => {
    agent.reset();
  });

  it("a further send during the pause moves its end to the person's last send", async () => {
    const who = '5511900083001';
    await answeredContact(who);
    await send(who, 'Oi, aqui é a Ana.');
    const first = await handoff(who);
    expect(first).toMatchObject({ active: true, by: 'auto' });

    // Ninety seconds later, as far as the pause knows: its end would move by less than a minute.
    const moved = await pauseEndsIn(who, PAUSE_S - 30);
    const beforeSecond = Date.now();
    await send(who, 'Já vejo o seu pedido.');
    const second = await handoff(who);
    expect(second).toMatchObject({ active: true, by: 'auto', since: first.since });
    expect(untilOf(second)).toBeGreaterThan(moved);
    expect(untilOf(second)).toBeGreaterThanOrEqual(beforeSecond + PAUSE_S * 1000);
  });

  it('a send just after a pause ended pauses the agent again', async () => {
    const who = '5511900083002';
    await answeredContact(who);
    await send(who, 'Oi!');
    const first = await handoff(who);
    expect(first.active).toBe(true);
    // The pause ended a moment ago (the sweeper has not cleared it).
    await pauseEndsIn(who, -1);
    expect((await handoff(who)).active).toBe(false);

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
    // The first pause is about to end when the person writes again.
    const firstEnd = await pauseEndsIn(who, 1);
    await send(who, 'Um momento.');

    // After the first send's pause ended, within the second's.
    await waitFor(() => Date.now() > firstEnd + 100);
    const during = await inbound(who, 'alguém aí?');
    expect((await handoff(who)).active).toBe(true);

    // The pause ends; the contact writes again: the agent gets that message alone.
    await pauseEndsIn(who, -1);
    expect((await handoff(who)).active).toBe(false);
    const after = await inbound(who, 'voltei');
    const calls = await readUntil(
      () => agent.callsFor(who),
      (list) => list.length >= 2,
    );
    expect(calls.slice(1).map((call) => call.body.messages.map((m) => m.id))).toEqual([[after]]);
    expect(calls.flatMap((call) => call.body.messages.map((m) => m.id))).not.toContain(during);
  });

  it("a person's own pause is extended by their sends, never shortened", async () => {
    // A client's pause shorter than a person's: a send goes past its end, so the pause follows the send.
    const short = '5511900083004';
    await answeredContact(short);
    const paused = await http<{ handoff: Handoff }>(
      service.url,
      'POST',
      `/contacts/${short}/handoff`,
      {
        token: key,
        body: {
          until: new Date(Date.now() + (PAUSE_S / 2) * 1000).toISOString(),
          reason: 'the manager answers',
        },
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

  it("a reply part the pacer holds is not sent once a person's send paused the agent", async () => {
    const who = '5511900083007';
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    agent.answerNext({ release: held, body: { reply: 'Sou o assistente.' } });
    await inbound(who, 'oi');
    await readUntil(
      () => agent.callsFor(who),
      (calls) => calls.length >= 1,
    );

    const releaseSends = await holdSends(service, PHONE_NUMBER_ID);
    release();
    await waitFor(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM turn_parts p JOIN turns t ON t.id = p.turn_id
             JOIN contacts c ON c.id = t.contact_id WHERE c.wa_id = $1`,
            [who],
          )
        ).length > 0,
    );
    // The person writes while the agent's reply waits for its turn to go out.
    const sending = sendThroughHold(who, 'Aqui é a Ana, eu respondo.');
    await readUntil(
      () => handoff(who),
      (h) => h.active,
    );
    await releaseSends();
    await sending;

    await waitFor(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM turn_parts p JOIN turns t ON t.id = p.turn_id
             JOIN contacts c ON c.id = t.contact_id WHERE c.wa_id = $1 AND p.status = 'skipped'`,
            [who],
          )
        ).length > 0,
    );
    const sent = context.platform
      .sentMessages()
      .filter((m) => m.to === who)
      .map((m) => (m.text as { body: string }).body);
    expect(sent).toEqual(['Aqui é a Ana, eu respondo.']);
  });

  it("a person's pause lasts its full length after their message went out, however long it waited", async () => {
    const who = '5511900083008';
    await answeredContact(who);
    const releaseSends = await holdSends(service, PHONE_NUMBER_ID);
    const sending = sendThroughHold(who, 'Já vejo isso.');
    await readUntil(
      () => handoff(who),
      (h) => h.active,
    );
    // Ninety seconds in the pacer, as far as the pause knows.
    await pauseEndsIn(who, PAUSE_S - 90);
    await releaseSends();
    const released = Date.now();
    await sending;
    expect(untilOf(await handoff(who))).toBeGreaterThanOrEqual(released + PAUSE_S * 1000);
  });
});
