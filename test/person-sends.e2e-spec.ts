import { EventReceiver, type ReceivedEvent } from './support/event-receiver.js';
import { deliverSigned, envelope, type WebhookTarget } from './support/fake-platform.js';
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
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352288101';
const OTHER_NUMBER_ID = '106540352288102';
const PASSWORD = 'correct horse battery staple';

interface Person {
  id: string | null;
  display_name: string;
}

interface ConversationMessage {
  wamid: string;
  direction: string;
  sent_by: string | null;
  sent_by_account: Person | null;
}

interface Handoff {
  active: boolean;
  by: string | null;
  account: Person | null;
}

let sequence = 0;

describe('What a person who logged in sends, and the pauses they start, are recorded as theirs', () => {
  const context = useTestService();
  let service: TestApp;
  let receiver: EventReceiver;
  let admin: string;
  let operator: string;
  let accountId: string;
  let apiKey: string;
  let instanceId: string;
  let otherId: string;

  const ana = (): Person => ({ id: accountId, display_name: 'Ana Souza' });
  const target = (): WebhookTarget => ({
    url: `${service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
  });
  /** A customer writes (their window opens); resolves once the message is stored. */
  const customerWrites = async (from: string): Promise<void> => {
    const wamid = `wamid.person${++sequence}`;
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
            text: { body: 'hello' },
          },
        ],
      }),
    );
    expect(status).toBe(200);
    await waitFor(
      async () =>
        (await http(service.url, 'GET', `/messages/${wamid}`, { token: apiKey })).status === 200,
    );
  };
  const as = <T = Record<string, unknown>>(
    token: string,
    method: string,
    path: string,
    body?: unknown,
  ) => http<T>(service.url, method, path, { token, body });
  const conversation = async (waId: string): Promise<ConversationMessage[]> =>
    (await as<{ data: ConversationMessage[] }>(apiKey, 'GET', `/contacts/${waId}/messages`)).body
      .data;
  const eventOf = (type: string, match: (data: Record<string, unknown>) => boolean) =>
    readUntil(
      () => receiver.ofType(type).find((r: ReceivedEvent) => match(r.event.data)),
      (found) => found !== undefined,
    );

  beforeAll(async () => {
    ({ service } = context);
    receiver = await EventReceiver.start();
    admin = await adminToken(service.url);
    instanceId = await createInstance(service.url, admin, PHONE_NUMBER_ID, 'Store');
    otherId = await createInstance(service.url, admin, OTHER_NUMBER_ID, 'Other store');
    apiKey = await createApiKey(service.url, admin, instanceId, 'people');
    const created = await as<{ id: string }>(admin, 'POST', '/admin/accounts', {
      username: 'ana',
      display_name: 'Ana Souza',
      role: 'operator',
      password: PASSWORD,
      instance_ids: [instanceId],
    });
    expect(created.status).toBe(201);
    accountId = created.body.id;
    const login = await http<{ token: string }>(service.url, 'POST', '/admin/auth/login', {
      body: { username: 'ana', password: PASSWORD },
    });
    operator = login.body.token;
    const subscribed = await as(admin, 'POST', '/admin/event-subscriptions', {
      url: receiver.url,
      event_types: ['message.sent', 'contact.handoff'],
    });
    expect(subscribed.status).toBe(201);
  });

  afterAll(async () => {
    await receiver?.stop();
  });

  it("an operator's send is sent_by person with their account everywhere it is read; its pause names them", async () => {
    await customerWrites('5511977770001');
    const sent = await as<{ wamid: string }>(operator, 'POST', '/send/text', {
      to: '5511977770001',
      body: 'Ana here, how can I help?',
    });
    expect(sent.status).toBe(200);
    const { wamid } = sent.body;

    const shown = await readUntil(
      async () => (await conversation('5511977770001')).find((m) => m.wamid === wamid),
      (m) => m !== undefined,
    );
    expect(shown).toMatchObject({ direction: 'outbound', sent_by: 'person' });
    expect(shown?.sent_by_account).toEqual(ana());

    for (const token of [apiKey, operator]) {
      const one = await as(token, 'GET', `/messages/${wamid}`);
      expect(one.body).toMatchObject({ sent_by: 'person', sent_by_account: ana() });
    }

    const event = await eventOf(
      'message.sent',
      (data) => (data.message as { wamid: string }).wamid === wamid,
    );
    expect(event?.event.data).toMatchObject({ sent_by: 'person', sent_by_account: ana() });

    // The send paused the agent, by the send (auto), and says whose send it was.
    const contact = await as<{ data: Array<{ handoff: Handoff }> }>(
      operator,
      'GET',
      '/contacts?q=5511977770001',
    );
    expect(contact.body.data[0].handoff).toEqual(
      expect.objectContaining({ active: true, by: 'auto', account: ana() }),
    );
    const pause = await eventOf(
      'contact.handoff',
      (data) => (data.contact as { wa_id: string }).wa_id === '5511977770001',
    );
    expect(pause?.event.data).toMatchObject({ paused: true, by: 'auto', account: ana() });
  });

  it('a send through an API key stays api, with no account', async () => {
    await customerWrites('5511977770002');
    const sent = await as<{ wamid: string }>(apiKey, 'POST', '/send/text', {
      to: '5511977770002',
      body: 'From the shop system',
    });
    expect(sent.status).toBe(200);
    const one = await as(apiKey, 'GET', `/messages/${sent.body.wamid}`);
    expect(one.body).toMatchObject({ sent_by: 'api', sent_by_account: null });
    const event = await eventOf(
      'message.sent',
      (data) => (data.message as { wamid: string }).wamid === sent.body.wamid,
    );
    expect(event?.event.data).toMatchObject({ sent_by: 'api', sent_by_account: null });
    const contact = await as<{ data: Array<{ handoff: Handoff }> }>(
      apiKey,
      'GET',
      '/contacts?q=5511977770002',
    );
    expect(contact.body.data[0].handoff).toMatchObject({ by: 'auto', account: null });
  });

  it('taking over and handing back with a person’s token record the person (ADMIN_USERNAME by name)', async () => {
    await customerWrites('5511977770003');
    const taken = await as<{ handoff: Handoff }>(
      operator,
      'POST',
      '/contacts/5511977770003/handoff',
      { reason: 'a person answers' },
    );
    expect(taken.status).toBe(200);
    expect(taken.body.handoff).toMatchObject({ active: true, by: 'person', account: ana() });
    const event = await eventOf(
      'contact.handoff',
      (data) =>
        (data.contact as { wa_id: string }).wa_id === '5511977770003' && data.by === 'person',
    );
    expect(event?.event.data).toMatchObject({ paused: true, account: ana() });

    const back = await as<{ handoff: Handoff }>(
      operator,
      'DELETE',
      '/contacts/5511977770003/handoff',
    );
    expect(back.body.handoff).toMatchObject({ active: false, by: 'person', account: ana() });

    const byAdmin = await as<{ handoff: Handoff }>(
      admin,
      'POST',
      `/contacts/5511977770003/handoff?instance_id=${instanceId}`,
    );
    expect(byAdmin.body.handoff).toMatchObject({
      active: true,
      by: 'person',
      account: { id: null, display_name: 'admin' },
    });
    // Through the admin route: by the admin, named.
    const adminRoute = `/admin/instances/${instanceId}/contacts/5511977770003/handoff`;
    const viaAdmin = await as<{ handoff: Handoff }>(admin, 'POST', adminRoute);
    expect(viaAdmin.body.handoff).toMatchObject({
      active: true,
      by: 'admin',
      account: { id: null, display_name: 'admin' },
    });
    const backViaAdmin = await as<{ handoff: Handoff }>(admin, 'DELETE', adminRoute);
    expect(backViaAdmin.body.handoff).toMatchObject({
      active: false,
      by: 'admin',
      account: { id: null, display_name: 'admin' },
    });
    // A client's key takes it over as api: the person is no longer named.
    const byKey = await as<{ handoff: Handoff }>(apiKey, 'POST', '/contacts/5511977770003/handoff');
    expect(byKey.body.handoff).toMatchObject({ active: true, by: 'api', account: null });
  });

  it('an operator sends and uploads for its instances only', async () => {
    const elsewhere = await as(operator, 'POST', `/send/text?instance_id=${otherId}`, {
      to: '5511977770004',
      body: 'no',
    });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body).toMatchObject({ code: 'instance_forbidden' });
    const inBody = await as(operator, 'POST', '/send/text', {
      instance_id: otherId,
      to: '5511977770004',
      body: 'no',
    });
    expect(inBody.status).toBe(403);

    const upload = async (fields: Record<string, string>) => {
      const data = new FormData();
      for (const [name, value] of Object.entries(fields)) data.append(name, value);
      data.append('file', new Blob([Buffer.from('png')], { type: 'image/png' }), 'a.png');
      const response = await fetch(`${service.url}/media/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${operator}` },
        body: data,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const mine = await upload({});
    expect(mine.status).toBe(200);
    expect(mine.body.id).toEqual(expect.any(String));
    const named = await upload({ instance_id: instanceId });
    expect(named.status).toBe(200);
    const other = await upload({ instance_id: otherId });
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ code: 'instance_forbidden' });
  });
});
