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
  createInstance,
  http,
  useTestService,
  type TestApp,
  type TestDatabase,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352200001';

let sequence = 0;
function textMessage(from: string, body: string, timestamp = Math.floor(Date.now() / 1000)) {
  return {
    from,
    id: `wamid.agent${++sequence}`,
    timestamp: String(timestamp),
    type: 'text',
    text: { body },
  };
}

describe('buffering and the agent', () => {
  let agent: FakeAgent;
  const context = useTestService({
    agent: true,
    env: {
      AGENT_MODULE_TOKEN: 'agent-secret-token',
      // Quiet long enough that the tests' bursts (deliveries 150 ms apart) stay one
      // batch on a loaded machine (0.4 s split one beside a CPU hog).
      MESSAGE_BUFFER_DELAY: '2',
      MESSAGE_BUFFER_MAX_WAIT: '5',
      AGENT_RETRY_MAX_S: '4',
    },
  });
  let service: TestApp;
  let platform: FakePlatform;
  let db: TestDatabase;
  let instanceId: string;

  const deliver = async (messages: unknown[], contacts: unknown[] = []) => {
    const target: WebhookTarget = {
      url: `${service.url}/webhooks/messenger`,
      appSecret: APP_SECRET,
      phoneNumberId: PHONE_NUMBER_ID,
      displayPhoneNumber: '15550001111',
    };
    expect(await deliverSigned(target, envelope(target, 'messages', { contacts, messages }))).toBe(
      200,
    );
  };
  const sentTexts = (to: string) =>
    platform
      .sentMessages()
      .filter((m) => m.to === to && m.type === 'text')
      .map((m) => (m.text as { body: string }).body);

  beforeAll(async () => {
    ({ service, platform, db, agent } = context);
    instanceId = await createInstance(
      service.url,
      await adminToken(service.url),
      PHONE_NUMBER_ID,
      'Agent store',
    );
  });

  beforeEach(() => {
    agent.reset();
    platform.reset();
  });

  it('gives one message to the agent with the contract body and headers, and sends the reply', async () => {
    const message = textMessage('5511911110001', 'Oi, tudo bem?');
    await deliver(
      [message],
      [{ wa_id: '5511911110001', user_id: 'BR.123', profile: { name: 'Ana' } }],
    );
    await waitFor(() => sentTexts('5511911110001').length === 1);
    expect(agent.calls).toHaveLength(1);
    const [call] = agent.calls;
    expect(call.headers['content-type']).toMatch(/^application\/json/);
    expect(call.headers['idempotency-key']).toBe(call.body.batch_id);
    expect(call.headers.authorization).toBe('Bearer agent-secret-token');
    expect(call.body).toEqual({
      batch_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      instance: {
        id: instanceId,
        name: 'Agent store',
        phone_number_id: PHONE_NUMBER_ID,
        display_phone_number: '+55 11 99999-0000',
      },
      contact: {
        wa_id: '5511911110001',
        user_id: 'BR.123',
        parent_user_id: null,
        username: null,
        name: 'Ana',
      },
      messages: [
        {
          id: message.id,
          type: 'text',
          timestamp: message.timestamp,
          text: 'Oi, tudo bem?',
          content: { body: 'Oi, tudo bem?' },
        },
      ],
      text: 'Oi, tudo bem?',
      payload_version: 2,
      // Nothing was said before: no context; the window the message opened.
      context: [],
      contact_state: {
        wa_id: '5511911110001',
        user_id: 'BR.123',
        window: { open: true, until: expect.any(String) },
        opted_out: false,
        marketing_opted_out: false,
        handoff: { active: false, since: null, until: null, by: null, reason: null },
        handoffs: [],
      },
    });
    expect(sentTexts('5511911110001')).toEqual(['echo: Oi, tudo bem?']);
    // The typing indicator marked the message read.
    expect(platform.sentMessages()).toContainEqual({
      messaging_product: 'messenger',
      status: 'read',
      message_id: message.id,
      typing_indicator: { type: 'text' },
    });
    // The reply reaches the platform before the turn records it: wait for the record.
    const status = async () =>
      (
        await db.query<{ status: string }>('SELECT status FROM turns WHERE id = $1', [
          call.body.batch_id,
        ])
      )[0]?.status;
    await waitFor(async () => (await status()) === 'done');
    expect(await status()).toBe('done');
  });

  it('gives a message the platform cannot show (131060) to the agent as a placeholder with its reason, and answers the lead', async () => {
    const unavailable = {
      from: '5511911110077',
      id: `wamid.unsupported${++sequence}`,
      timestamp: String(Math.floor(Date.now() / 1000)),
      errors: [
        {
          code: 131060,
          title: 'This message is currently unavailable.',
          message: 'This message is currently unavailable.',
          error_data: { details: 'Message is currently unavailable.' },
        },
      ],
      type: 'unsupported',
    };
    await deliver(
      [unavailable],
      [{ wa_id: '5511911110077', user_id: 'BR.13491208655302741918', profile: { name: 'Lead' } }],
    );
    await waitFor(() => sentTexts('5511911110077').length === 1);
    const call = agent.calls.find((c) => c.body.contact.wa_id === '5511911110077')!;
    expect(call.body.contact).toMatchObject({ name: 'Lead', user_id: 'BR.13491208655302741918' });
    expect(call.body.messages).toEqual([
      {
        id: unavailable.id,
        type: 'unsupported',
        timestamp: unavailable.timestamp,
        text: '[a message the platform cannot show: This message is currently unavailable.]',
        content: {},
        placeholder: { reason: 'This message is currently unavailable.', code: 131060 },
      },
    ]);
    // The conversation keeps it, with the platform's reason.
    const [stored] = await db.query<{ type: string; body: { errors: Array<{ code: number }> } }>(
      'SELECT type, body FROM messages WHERE wamid = $1',
      [unavailable.id],
    );
    expect(stored).toMatchObject({ type: 'unsupported', body: { errors: [{ code: 131060 }] } });
  });

  it("gives the next burst the conversation so far: the customer's message and the agent's answer, marked by whom", async () => {
    const first = textMessage('5511911110088', 'Quanto custa?');
    await deliver([first]);
    await waitFor(() => sentTexts('5511911110088').length === 1);
    const second = textMessage('5511911110088', 'E a entrega?');
    await deliver([second]);
    await waitFor(() => sentTexts('5511911110088').length === 2);
    const call = agent.calls.filter((c) => c.body.contact.wa_id === '5511911110088')[1];
    expect((call.body as unknown as { context: unknown[] }).context).toEqual([
      expect.objectContaining({ id: first.id, from: 'customer', text: 'Quanto custa?' }),
      expect.objectContaining({ from: 'agent', text: 'echo: Quanto custa?', imported: false }),
    ]);
  });

  it("gives the agent the contact's handoff history: each pause, by whom, why, and who ended it", async () => {
    const to = '5511911110089';
    const admin = await adminToken(service.url);
    const handoff = (method: string, body?: unknown) =>
      http(service.url, method, `/admin/instances/${instanceId}/contacts/${to}/handoff`, {
        token: admin,
        body,
      });
    await deliver([textMessage(to, 'Oi')]);
    await waitFor(() => sentTexts(to).length === 1);
    // An admin takes the customer over and hands them back, twice.
    for (const reason of ['reclamação', 'reembolso']) {
      expect((await handoff('POST', { reason })).status).toBe(200);
      expect((await handoff('DELETE')).status).toBe(200);
    }
    await deliver([textMessage(to, 'Voltei')]);
    await waitFor(() => sentTexts(to).length === 2);
    const call = agent.calls.filter((c) => c.body.contact.wa_id === to)[1];
    const state = (call.body as unknown as { contact_state: { handoffs: unknown[] } })
      .contact_state;
    expect(state.handoffs).toEqual([
      expect.objectContaining({
        by: 'admin',
        reason: 'reembolso',
        active: false,
        ended_by: 'admin',
      }),
      expect.objectContaining({
        by: 'admin',
        reason: 'reclamação',
        active: false,
        ended_by: 'admin',
      }),
    ]);
  });

  it('gathers a burst into one batch in timestamp order', async () => {
    const from = '5511911110002';
    const now = Math.floor(Date.now() / 1000);
    await deliver([textMessage(from, 'primeira', now)]);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await deliver([textMessage(from, 'terceira', now + 2), textMessage(from, 'segunda', now + 1)]);
    await waitFor(() => agent.callsFor(from).length >= 1);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(agent.callsFor(from)).toHaveLength(1);
    expect(agent.callsFor(from)[0].body.messages.map((m) => m.text)).toEqual([
      'primeira',
      'segunda',
      'terceira',
    ]);
    expect(agent.callsFor(from)[0].body.text).toBe('primeira\nsegunda\nterceira');
  });

  it('calls the agent once for a delivery re-sent several times, now and later', async () => {
    const from = '5511911110003';
    const message = textMessage(from, 'só uma vez');
    await Promise.all([deliver([message]), deliver([message]), deliver([message])]);
    await waitFor(() => agent.callsFor(from).length >= 1);
    await deliver([message]);
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(agent.callsFor(from)).toHaveLength(1);
    expect(sentTexts(from)).toHaveLength(1);
  });

  it('keeps interleaved contacts in separate batches', async () => {
    const [a, b] = ['5511911110004', '5511911110005'];
    await deliver([textMessage(a, 'a1'), textMessage(b, 'b1')]);
    await deliver([textMessage(b, 'b2'), textMessage(a, 'a2')]);
    await waitFor(() => agent.callsFor(a).length === 1 && agent.callsFor(b).length === 1);
    expect(
      agent
        .callsFor(a)[0]
        .body.messages.map((m) => m.text)
        .sort(),
    ).toEqual(['a1', 'a2']);
    expect(
      agent
        .callsFor(b)[0]
        .body.messages.map((m) => m.text)
        .sort(),
    ).toEqual(['b1', 'b2']);
  });

  it('sends a batch at the latest MESSAGE_BUFFER_MAX_WAIT after its first message', async () => {
    const from = '5511911110006';
    const timestamp = Math.floor(Date.now() / 1000);
    // A message every 250 ms (shorter than the 2 s delay) until the agent has a
    // batch: while the user keeps typing, only the max wait (5 s) sends one. The
    // cap (80 messages, over 20 s) is only there to end the test if it never does.
    const sent: string[] = [];
    while (agent.callsFor(from).length === 0 && sent.length < 80) {
      sent.push(`m${sent.length}`);
      await deliver([textMessage(from, sent.at(-1)!, timestamp)]);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(agent.callsFor(from)).not.toHaveLength(0);
    const first = agent.callsFor(from)[0].body.messages.map((m) => m.text);
    expect(first).toEqual(sent.slice(0, first.length));
    // The rest follows in later batches: every message once, in order.
    const given = () => agent.callsFor(from).flatMap((c) => c.body.messages.map((m) => m.text));
    await waitFor(() => given().length >= sent.length);
    expect(given()).toEqual(sent);
  });

  it('retries the agent on 5xx with the same Idempotency-Key, then sends', async () => {
    const from = '5511911110007';
    agent.answerNext({ status: 500 }, { status: 503 }, { body: { reply: 'third time' } });
    await deliver([textMessage(from, 'retry me')]);
    await waitFor(() => sentTexts(from).length === 1);
    expect(agent.callsFor(from)).toHaveLength(3);
    expect(new Set(agent.callsFor(from).map((c) => c.headers['idempotency-key'])).size).toBe(1);
    expect(sentTexts(from)).toEqual(['third time']);
  });

  it('keeps retrying 5xx until AGENT_RETRY_MAX_S, then fails the turn and sends nothing', async () => {
    const from = '5511911110008';
    agent.answerAlways(() => ({ status: 500 }));
    await deliver([textMessage(from, 'doomed')]);
    await waitFor(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM turns t JOIN contacts c ON c.id = t.contact_id
           WHERE c.wa_id = $1 AND t.status = 'failed'`,
            [from],
          )
        ).length === 1,
      20_000,
    );
    const calls = agent.callsFor(from);
    expect(calls.length).toBeGreaterThanOrEqual(3);
    // Retried, all with the same Idempotency-Key, until the horizon ended the turn:
    // the attempts it counts are the calls the agent got, none after it gave up.
    expect(new Set(calls.map((c) => c.headers['idempotency-key'])).size).toBe(1);
    const [turn] = await db.query<{ last_error: string }>(
      'SELECT last_error FROM turns t JOIN contacts c ON c.id = t.contact_id WHERE c.wa_id = $1',
      [from],
    );
    expect(turn.last_error).toBe(
      `agent answered HTTP 500 (gave up after ${calls.length} attempts)`,
    );
    expect(sentTexts(from)).toHaveLength(0);
  });

  it('fails the turn at once when the agent answers a 4xx other than 408 and 429', async () => {
    const from = '5511911110012';
    agent.answerNext({ status: 422, body: { error: 'no' } });
    await deliver([textMessage(from, 'refused')]);
    await waitFor(
      async () =>
        (
          await db.query(
            `SELECT 1 FROM turns t JOIN contacts c ON c.id = t.contact_id
           WHERE c.wa_id = $1 AND t.status = 'failed'`,
            [from],
          )
        ).length === 1,
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(agent.callsFor(from)).toHaveLength(1);
    expect(sentTexts(from)).toHaveLength(0);
  });

  it('sends nothing for 204, and each valid reply of a list in order', async () => {
    const quiet = '5511911110009';
    agent.answerNext({ status: 204 });
    await deliver([textMessage(quiet, 'shh')]);
    await waitFor(() => agent.callsFor(quiet).length === 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(platform.sentMessages().filter((m) => m.to === quiet && m.type)).toHaveLength(0);

    const chatty = '5511911110010';
    agent.answerNext({
      body: {
        replies: [
          { send: 'text', body: 'Pick one:' },
          {
            send: 'interactive',
            type: 'buttons',
            body: 'Confirm?',
            buttons: [{ type: 'reply', reply: { id: 'y', title: 'Yes' } }],
          },
          { send: 'interactive', type: 'buttons', body: 'Broken', buttons: [] },
          { send: 'teleport', body: 'nope' },
          { send: 'text', body: 'Done.', to: '5599999999999' },
        ],
      },
    });
    await deliver([textMessage(chatty, 'menu')]);
    await waitFor(
      () => platform.sentMessages().filter((m) => m.to === chatty && m.type).length === 3,
    );
    const sent = platform
      .sentMessages()
      .filter((m) => m.type && (m.to === chatty || m.to === '5599999999999'));
    expect(sent.map((m) => m.type)).toEqual(['text', 'interactive', 'text']);
    expect(sent.every((m) => m.to === chatty)).toBe(true);
  });

  it('splits a reply longer than 4096 characters into ordered messages', async () => {
    const from = '5511911110011';
    const long = Array.from({ length: 300 }, (_, i) => `Frase número ${i} do agente.`).join(' ');
    agent.answerNext({ body: { reply: long } });
    await deliver([textMessage(from, 'conte tudo')]);
    await waitFor(() => sentTexts(from).length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const parts = sentTexts(from);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(4096);
    expect(parts.join(' ')).toBe(long);
  });
});
