import { FakeAgent } from './support/fake-agent.js';
import {
  deliverSigned,
  envelope,
  type FakePlatform,
  type WebhookTarget,
} from './support/fake-platform.js';
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

const PHONE_NUMBER_ID = '106540352288001';

interface Contact {
  wa_id: string | null;
  name: string | null;
  last_inbound_at: string | null;
  last_outbound_at: string | null;
  window: { open: boolean; until: string | null };
  handoff: { active: boolean; until: string | null; reason: string | null; by: string | null };
  opted_out_at: string | null;
  unread: number;
  last_message: {
    wamid: string;
    direction: string;
    text: string | null;
    sent_by: string | null;
  } | null;
}

interface ConversationPage {
  contact: Contact;
  data: Array<{
    wamid: string;
    direction: string;
    sent_by: string | null;
    turn_id: string | null;
    content: Record<string, unknown>;
    status: string;
  }>;
  older: string | null;
  newer: string | null;
}

let sequence = 0;

describe('conversations, handoff and opt-out', () => {
  const context = useTestService({
    agent: true,
    env: {
      MESSAGE_BUFFER_DELAY: '0.2',
      MESSAGE_BUFFER_MAX_WAIT: '1',
      AGENT_RETRY_MAX_S: '0',
      SWEEP_INTERVAL_S: '1',
      AGENT_TYPING_INDICATOR: 'false',
    },
  });
  let service: TestApp;
  let platform: FakePlatform;
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
  const inbound = async (
    from: string,
    text: string,
    name = `User ${from}`,
    at = Math.floor(Date.now() / 1000),
    wamid = `wamid.conv${++sequence}`,
  ): Promise<string> => {
    const status = await deliverSigned(
      target(),
      envelope(target(), 'messages', {
        contacts: [{ profile: { name }, wa_id: from }],
        messages: [
          {
            from,
            id: wamid,
            timestamp: String(at),
            type: 'text',
            text: { body: text },
          },
        ],
      }),
    );
    expect(status).toBe(200);
    return wamid;
  };
  const client = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(service.url, method, path, { token: key, body });
  const contact = async (waId: string): Promise<Contact> =>
    (await client<{ data: Contact[] }>('GET', `/contacts?q=${waId}`)).body.data[0];
  const stored = (wamid: string) =>
    waitFor(
      async () => (await db.query('SELECT 1 FROM messages WHERE wamid = $1', [wamid])).length > 0,
    );
  const sentTo = (to: string) =>
    platform
      .sentMessages()
      .filter((m) => m.to === to && m.type === 'text')
      .map((m) => (m.text as { body: string }).body);

  beforeAll(async () => {
    ({ service, platform, db, agent } = context);
    token = await adminToken(service.url);
    instanceId = await createInstance(service.url, token, PHONE_NUMBER_ID, 'Conversations');
    key = await createApiKey(service.url, token, instanceId, 'conversations');
    // Events are recorded only for a subscription that wants them; a disabled one does.
    const subscribed = await http(service.url, 'POST', '/admin/event-subscriptions', {
      token,
      body: {
        url: 'http://127.0.0.1:1/events',
        instance_id: instanceId,
        event_types: ['contact.handoff'],
        enabled: false,
      },
    });
    expect(subscribed.status).toBe(201);
  });

  beforeEach(() => {
    agent.reset();
    platform.reset();
  });

  it('lists contacts newest activity first, searched by number or name, page by page', async () => {
    agent.answerAlways(() => ({ status: 204 })); // no replies: activity is the inbound times
    const now = Math.floor(Date.now() / 1000);
    await inbound('5511900080001', 'oi', 'Beatriz Souza', now - 30);
    await inbound('5511900080002', 'olá', 'Carlos Lima', now - 20);
    const last = await inbound('5521900080003', 'bom dia', 'Bruno Alves', now - 10);
    await stored(last);

    const all = await client<{ data: Contact[]; next_cursor: string | null }>('GET', '/contacts');
    expect(all.status).toBe(200);
    const ours = all.body.data.filter(
      (c) =>
        c.wa_id?.endsWith('0080001') ||
        c.wa_id?.endsWith('0080002') ||
        c.wa_id?.endsWith('0080003'),
    );
    expect(ours.map((c) => c.wa_id)).toEqual(['5521900080003', '5511900080002', '5511900080001']);
    expect(ours[0]).toMatchObject({
      name: 'Bruno Alves',
      window: { open: true },
      handoff: { active: false },
      opted_out_at: null,
    });

    const byNumber = await client<{ data: Contact[] }>('GET', '/contacts?q=55119000800');
    expect(byNumber.body.data.map((c) => c.wa_id).sort()).toEqual([
      '5511900080001',
      '5511900080002',
    ]);
    const byName = await client<{ data: Contact[] }>('GET', '/contacts?q=b');
    expect(byName.body.data.map((c) => c.name)).toEqual(['Bruno Alves', 'Beatriz Souza']);

    const first = await client<{ data: Contact[]; next_cursor: string }>(
      'GET',
      '/contacts?limit=2',
    );
    expect(first.body.data).toHaveLength(2);
    const second = await client<{ data: Contact[]; next_cursor: string | null }>(
      'GET',
      `/contacts?limit=2&cursor=${first.body.next_cursor}`,
    );
    const seen = [...first.body.data, ...second.body.data].map((c) => c.wa_id);
    expect(new Set(seen).size).toBe(seen.length);
    expect((await client('GET', '/contacts?cursor=nope')).status).toBe(400);
  });

  it('shows the 24-hour window right at its edge, as sends see it', async () => {
    await stored(await inbound('5511900080011', 'a'));
    await stored(await inbound('5511900080012', 'b'));
    await db.query(
      `UPDATE contacts SET last_inbound_at = now() - interval '24 hours' + interval '1 minute'
       WHERE wa_id = '5511900080011'`,
    );
    await db.query(
      `UPDATE contacts SET last_inbound_at = now() - interval '24 hours' - interval '1 minute'
       WHERE wa_id = '5511900080012'`,
    );
    const open = await contact('5511900080011');
    const closed = await contact('5511900080012');
    // The window ends 24 hours after the last inbound message, to the millisecond.
    const lastInbound = async (waId: string) =>
      (
        await db.query<{ at: Date }>(
          'SELECT last_inbound_at AS at FROM contacts WHERE wa_id = $1',
          [waId],
        )
      )[0].at.getTime();
    const DAY = 24 * 3600 * 1000;
    expect(open.window.open).toBe(true);
    expect(Date.parse(open.window.until!)).toBe((await lastInbound('5511900080011')) + DAY);
    expect(closed.window.open).toBe(false);
    expect(Date.parse(closed.window.until!)).toBe((await lastInbound('5511900080012')) + DAY);
    expect(Date.parse(closed.window.until!)).toBeLessThan(Date.now());
    const sendOpen = await client('POST', '/send/text', { to: '5511900080011', body: 'ok' });
    expect(sendOpen.status).toBe(200);
    const sendClosed = await client<{ code: string }>('POST', '/send/text', {
      to: '5511900080012',
      body: 'late',
    });
    expect(sendClosed.body.code).toBe('service_window_closed');
  });

  it('reads a conversation in order, both directions, with pages that stay put as messages arrive', async () => {
    const who = '5511900080021';
    const first = await inbound(who, 'quero um bolo');
    await readUntil(
      () => sentTo(who),
      (texts) => texts.length >= 1,
    );
    const sent = await client<{ wamid: string }>('POST', '/send/text', {
      to: who,
      body: 'Sou a Ana, da loja: de qual sabor?',
    });
    expect(sent.status).toBe(200);
    await waitFor(
      async () =>
        (await client<ConversationPage>('GET', `/contacts/${who}/messages`)).body.data.length === 3,
    );
    const page = (await client<ConversationPage>('GET', `/contacts/${who}/messages`)).body;
    expect(page.data.map((m) => [m.direction, m.sent_by])).toEqual([
      ['inbound', null],
      ['outbound', 'agent'],
      ['outbound', 'api'],
    ]);
    expect(page.data[0]).toMatchObject({
      wamid: first,
      content: { text: { body: 'quero um bolo' } },
    });
    expect(page.data[0].turn_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(page.data[2]).toMatchObject({ wamid: sent.body.wamid, status: 'sent' });
    expect(page.contact.handoff).toMatchObject({ active: true, by: 'auto' }); // the person's send

    // Older pages, then new messages arrive: the pages read before do not move.
    const newest = await client<ConversationPage>('GET', `/contacts/${who}/messages?limit=2`);
    expect(newest.body.data.map((m) => m.direction)).toEqual(['outbound', 'outbound']);
    const older = await client<ConversationPage>(
      'GET',
      `/contacts/${who}/messages?limit=2&before=${newest.body.older}`,
    );
    expect(older.body.data.map((m) => m.wamid)).toEqual([first]);
    expect(older.body.older).toBeNull();
    const later = [await inbound(who, 'chocolate'), await inbound(who, 'para sábado')];
    await stored(later[1]);
    const again = await client<ConversationPage>(
      'GET',
      `/contacts/${who}/messages?limit=2&before=${newest.body.older}`,
    );
    expect(again.body.data.map((m) => m.wamid)).toEqual([first]);
    // Followers get a message once every transaction that began writing before it has ended.
    const followed = await readUntil(
      () => client<ConversationPage>('GET', `/contacts/${who}/messages?after=${newest.body.newer}`),
      (answer) => answer.body.data.length >= later.length,
    );
    expect(followed.body.data.map((m) => m.wamid)).toEqual(later);
    const none = await client<ConversationPage>(
      'GET',
      `/contacts/${who}/messages?after=${followed.body.newer}`,
    );
    expect(none.body.data).toEqual([]);
    expect(none.body.newer).toBe(followed.body.newer);

    const missing = await client<{ code: string }>('GET', '/contacts/5599999999999/messages');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('contact_not_found');
  });

  it('a handoff stops turns; it ends by itself at until, and what came meanwhile is not given to the agent', async () => {
    const who = '5511900080031';
    await stored(await inbound(who, 'oi'));
    await readUntil(
      () => agent.callsFor(who),
      (calls) => calls.length >= 1,
    );
    const paused = await client<Contact>('POST', `/contacts/${who}/handoff`, {
      until: new Date(Date.now() + 2500).toISOString(),
      reason: 'complaint',
    });
    expect(paused.status).toBe(200);
    expect(paused.body.handoff).toMatchObject({ active: true, reason: 'complaint', by: 'api' });

    const during = await inbound(who, 'quero falar com alguém');
    await stored(during);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(agent.callsFor(who)).toHaveLength(1);

    // The pause ends at until (the sweeper ends it); the agent answers again.
    await readUntil(
      () => contact(who),
      (c) => !c.handoff.active && c.handoff.by === 'timer',
      8000,
    );
    await inbound(who, 'ainda aí?');
    const calls = await readUntil(
      () => agent.callsFor(who),
      (list) => list.length >= 2,
    );
    const given = calls.flatMap((call) => call.body.messages.map((m) => m.id));
    expect(given).not.toContain(during);
  });

  it('a hand-back with include_pending gives the agent what came during the pause', async () => {
    const who = '5511900080041';
    await stored(await inbound(who, 'oi'));
    await readUntil(
      () => agent.callsFor(who),
      (calls) => calls.length >= 1,
    );
    await client('POST', `/contacts/${who}/handoff`, {});
    const during = await inbound(who, 'me liga?');
    await stored(during);
    const resumed = await client<Contact>('DELETE', `/contacts/${who}/handoff`, {
      include_pending: true,
    });
    expect(resumed.body.handoff).toMatchObject({ active: false, by: 'api' });
    const calls = await readUntil(
      () => agent.callsFor(who),
      (list) => list.length >= 2,
      8000,
    );
    expect(calls[1].body.messages.map((m) => m.id)).toEqual([during]);
  });

  it("a person's send pauses the agent, and the reply it had in flight is not sent after theirs", async () => {
    const who = '5511900080051';
    agent.answerAlways(() => ({ delayMs: 1200, body: { reply: 'resposta do robô' } }));
    await stored(await inbound(who, 'oi'));
    await readUntil(
      () => agent.callsFor(who),
      (calls) => calls.length >= 1,
    );
    // The agent is thinking; a person answers meanwhile.
    const human = await client('POST', '/send/text', { to: who, body: 'Oi! Aqui é a Ana.' });
    expect(human.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(sentTo(who)).toEqual(['Oi! Aqui é a Ana.']);
    const paused = await contact(who);
    expect(paused.handoff).toMatchObject({ active: true, by: 'auto' });
    const [turn] = await db.query<{ status: string; last_error: string }>(
      `SELECT t.status, t.last_error FROM turns t JOIN contacts c ON c.id = t.contact_id
       WHERE c.wa_id = $1`,
      [who],
    );
    expect(turn).toMatchObject({
      status: 'skipped',
      last_error: 'a person has the contact, or it opted out',
    });
  });

  it('the agent can ask for a person: its reply goes, then it pauses', async () => {
    const who = '5511900080061';
    agent.answerAlways(() => ({
      body: { handoff: true, reason: 'wants a refund', reply: 'Vou chamar um atendente.' },
    }));
    await stored(await inbound(who, 'quero meu dinheiro de volta'));
    await readUntil(
      () => sentTo(who),
      (texts) => texts.length >= 1,
    );
    expect(sentTo(who)).toEqual(['Vou chamar um atendente.']);
    expect((await contact(who)).handoff).toMatchObject({
      active: true,
      by: 'agent',
      reason: 'wants a refund',
    });
    await stored(await inbound(who, 'alô?'));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(agent.callsFor(who)).toHaveLength(1);
  });

  it("the agent asking for a person does not replace a person's own pause, nor speak over them", async () => {
    const who = '5511900080062';
    agent.answerAlways(() => ({
      delayMs: 1000,
      body: { handoff: true, reason: 'agent gives up', reply: 'Vou chamar um atendente.' },
    }));
    await stored(await inbound(who, 'oi'));
    await readUntil(
      () => agent.callsFor(who),
      (calls) => calls.length >= 1,
    );
    // A person takes over while the agent is thinking.
    await client('POST', `/contacts/${who}/handoff`, { reason: 'the manager answers' });
    await new Promise((resolve) => setTimeout(resolve, 1800));
    expect(sentTo(who)).toEqual([]);
    expect((await contact(who)).handoff).toMatchObject({
      active: true,
      by: 'api',
      reason: 'the manager answers',
    });
  });

  it('a stop word while the agent is thinking: its reply is not sent', async () => {
    const who = '5511900080063';
    agent.answerAlways(() => ({ delayMs: 1000, body: { reply: 'resposta' } }));
    await stored(await inbound(who, 'oi'));
    await readUntil(
      () => agent.callsFor(who),
      (calls) => calls.length >= 1,
    );
    await stored(await inbound(who, 'SAIR'));
    await new Promise((resolve) => setTimeout(resolve, 1800));
    expect(sentTo(who)).toEqual([]);
    expect((await contact(who)).opted_out_at).not.toBeNull();
  });

  it('a stop word opts the contact out: no answer, no sends but templates; a start word or an admin lifts it', async () => {
    const who = '5511900080071';
    const stop = await inbound(who, 'Stop');
    await stored(stop);
    await readUntil(
      () => contact(who),
      (c) => c.opted_out_at !== null,
    );
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(agent.callsFor(who)).toHaveLength(0);
    const refused = await client<{ code: string }>('POST', '/send/text', { to: who, body: 'oi' });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('contact_opted_out');
    const template = await client('POST', '/send/template', {
      to: who,
      template_name: 'order_update',
      language: 'pt_BR',
    });
    expect(template.status).toBe(200);

    await stored(await inbound(who, ' start '));
    await readUntil(
      () => contact(who),
      (c) => c.opted_out_at === null,
    );
    expect(
      (await client('POST', '/send/text', { to: who, body: 'bem-vindo de volta' })).status,
    ).toBe(200);
    // The platform re-sends the old STOP: stored once already, it changes nothing.
    await inbound(who, 'Stop', undefined, undefined, stop);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await contact(who)).opted_out_at).toBeNull();

    await stored(await inbound(who, 'PARAR'));
    await readUntil(
      () => contact(who),
      (c) => c.opted_out_at !== null,
    );
    const lifted = await http<Contact>(
      service.url,
      'DELETE',
      `/admin/instances/${instanceId}/contacts/${who}/opt-out`,
      { token },
    );
    expect(lifted.status).toBe(200);
    expect(lifted.body.opted_out_at).toBeNull();
    expect((await client('POST', '/send/text', { to: who, body: 'ok' })).status).toBe(200);
  });

  it('emits contact.handoff events for every change', async () => {
    const rows = await db.query<{ data: { paused: boolean; by: string } }>(
      `SELECT data FROM events WHERE type = 'contact.handoff' ORDER BY seq`,
    );
    const kinds = new Set(rows.map((r) => `${r.data.by}:${r.data.paused}`));
    for (const kind of ['api:true', 'timer:false', 'api:false', 'auto:true', 'agent:true']) {
      expect(kinds).toContain(kind);
    }
  });
  it('lists each contact’s unread count and last message; a read clears the count; the list filters by state', async () => {
    const reader = '5511900080091';
    agent.answerAlways((call) => ({ body: { reply: `echo: ${call.body.text}` } }));
    await stored(await inbound(reader, 'first'));
    await stored(await inbound(reader, 'second'));
    await readUntil(
      async () => (await contact(reader)).last_message,
      (last) => last?.direction === 'outbound',
    );
    const before = await contact(reader);
    expect(before.unread).toBe(2);
    expect(before.last_message).toMatchObject({ direction: 'outbound', sent_by: 'agent' });
    expect(before.last_message!.text).toMatch(/^echo: /);

    // Read up to the newest message on screen (the agent's answer).
    const read = await client<Contact>('POST', `/contacts/${reader}/read`, {
      wamid: before.last_message!.wamid,
    });
    expect(read.status).toBe(200);
    expect(read.body.unread).toBe(0);
    expect((await contact(reader)).unread).toBe(0);
    const third = await inbound(reader, 'third');
    await stored(third);
    expect((await contact(reader)).unread).toBe(1);
    // Marking an older message does not take the mark back.
    const firstPage = await client<ConversationPage>('GET', `/contacts/${reader}/messages`);
    await client('POST', `/contacts/${reader}/read`, { wamid: firstPage.body.data[0].wamid });
    expect((await contact(reader)).unread).toBe(1);
    await client('POST', `/contacts/${reader}/read`, { wamid: third });
    expect((await contact(reader)).unread).toBe(0);
    expect(
      (await client('POST', '/contacts/5511900089999/read', { wamid: third })).body,
    ).toMatchObject({ code: 'contact_not_found' });
    expect(
      (await client('POST', `/contacts/${reader}/read`, { wamid: 'wamid.elsewhere' })).body,
    ).toMatchObject({ code: 'message_not_found' });
    expect((await client('POST', `/contacts/${reader}/read`, {})).status).toBe(400);

    // The agent hands one over: it is waiting (and paused); the reader is the agent's.
    const waiting = '5511900080092';
    agent.answerAlways((call) =>
      call.body.contact.wa_id === waiting
        ? { body: { handoff: true, reason: 'a person, please' } }
        : { body: { reply: `echo: ${call.body.text}` } },
    );
    await stored(await inbound(waiting, 'a person, please'));
    await readUntil(
      async () => (await contact(waiting)).handoff.active,
      (active) => active,
    );
    const keys = async (state: string) =>
      (
        await client<{ data: Contact[] }>('GET', `/contacts?state=${state}&limit=100`)
      ).body.data.map((c) => c.wa_id);
    expect(await keys('waiting')).toContain(waiting);
    expect(await keys('waiting')).not.toContain(reader);
    expect(await keys('paused')).toContain(waiting);
    expect(await keys('agent')).toContain(reader);
    expect(await keys('agent')).not.toContain(waiting);
    expect(await keys('window_open')).toEqual(expect.arrayContaining([reader, waiting]));
    expect(await keys('opted_out')).not.toContain(reader);
    const bad = await client('GET', '/contacts?state=sleeping');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      code: 'validation_failed',
      details: [
        {
          field: 'state',
          message: 'must be one of waiting, paused, agent, window_open, opted_out',
        },
      ],
    });
  });
});

describe('per-instance agent settings', () => {
  const context = useTestService({
    env: {
      AGENT_MODULE_URL: 'http://127.0.0.1:1/agent', // replaced in beforeAll
      AGENT_MODULE_TOKEN: 'global-agent-token',
      MESSAGE_BUFFER_DELAY: '0.2',
      MESSAGE_BUFFER_MAX_WAIT: '1',
      AGENT_TYPING_INDICATOR: 'false',
    },
  });
  let first: FakeAgent;
  let second: FakeAgent;

  beforeAll(async () => {
    [first, second] = await Promise.all([FakeAgent.start(), FakeAgent.start()]);
    (context.service.config as { AGENT_MODULE_URL?: string }).AGENT_MODULE_URL = first.url;
  });

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
  });

  it('routes two numbers to two agents, each with its token; a number with the agent off is not answered', async () => {
    const { service, db } = context;
    const token = await adminToken(service.url);
    const numbers = ['106540352288101', '106540352288102', '106540352288103', '106540352288104'];
    const ids = [];
    for (const number of numbers) ids.push(await createInstance(service.url, token, number));
    const patched = await http<{ agent: Record<string, unknown> }>(
      service.url,
      'PATCH',
      `/admin/instances/${ids[1]}`,
      {
        token,
        body: { agent: { url: second.url, token: 'store-b-agent-token', buffer_delay_s: 0.1 } },
      },
    );
    expect(patched.status).toBe(200);
    await http(service.url, 'PATCH', `/admin/instances/${ids[2]}`, {
      token,
      body: { agent: { enabled: false } },
    });
    // Its own URL and no token: the global token is not sent to another host.
    await http(service.url, 'PATCH', `/admin/instances/${ids[3]}`, {
      token,
      body: { agent: { url: second.url } },
    });
    const nullEnabled = await http<{ code: string }>(
      service.url,
      'PATCH',
      `/admin/instances/${ids[3]}`,
      { token, body: { agent: { enabled: null } } },
    );
    expect(nullEnabled.status).toBe(400);
    const detail = await http<{ agent: Record<string, unknown> }>(
      service.url,
      'GET',
      `/admin/instances/${ids[1]}`,
      { token },
    );
    expect(detail.body.agent).toEqual({
      enabled: true,
      url: second.url,
      token_set: true,
      buffer_delay_s: 0.1,
      buffer_max_wait_s: null,
      typing_indicator: null,
    });
    expect(detail.text).not.toContain('store-b-agent-token');
    const [stored] = await db.query<{ agent_token_encrypted: string }>(
      'SELECT agent_token_encrypted FROM instances WHERE id = $1',
      [ids[1]],
    );
    expect(stored.agent_token_encrypted).not.toContain('store-b-agent-token');

    for (const [n, number] of numbers.entries()) {
      const t: WebhookTarget = {
        url: `${service.url}/webhooks/messenger`,
        appSecret: APP_SECRET,
        phoneNumberId: number,
      };
      expect(
        await deliverSigned(
          t,
          envelope(t, 'messages', {
            messages: [
              {
                from: `55119000882${n}0`,
                id: `wamid.agents${n}`,
                timestamp: String(Math.floor(Date.now() / 1000)),
                type: 'text',
                text: { body: `to store ${n}` },
              },
            ],
          }),
        ),
      ).toBe(200);
    }
    await readUntil(
      () => first.calls.length + second.calls.length,
      (calls) => calls >= 3,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(first.calls.map((c) => c.body.text)).toEqual(['to store 0']);
    expect(first.calls[0].headers.authorization).toBe('Bearer global-agent-token');
    const byText = new Map(second.calls.map((c) => [c.body.text, c.headers.authorization]));
    expect([...byText.keys()].sort()).toEqual(['to store 1', 'to store 3']);
    expect(byText.get('to store 1')).toBe('Bearer store-b-agent-token');
    expect(byText.get('to store 3')).toBeUndefined();
    const [off] = await db.query<{ awaiting_turn: boolean; turn_id: string | null }>(
      `SELECT awaiting_turn, turn_id FROM messages WHERE wamid = 'wamid.agents2'`,
    );
    expect(off).toEqual({ awaiting_turn: false, turn_id: null });
  });
});
