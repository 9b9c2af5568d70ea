import { simulateMessage, type WebhookTarget } from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createCatalogueInstance,
  http,
  useTestService,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352270003';
const ACCOUNT = '102290129370003';

const number = (n: number) => `55119${String(n).padStart(8, '0')}`;

interface Answering {
  message_id: string;
  template: { name: string; language: string | null };
  campaign: { id: string; name: string } | null;
  sent_at: string;
}

describe("a campaign's replies reach the agent attributed", () => {
  const context = useTestService({
    agent: true,
    env: { PLATFORM_SEND_RATE: '1000', MESSAGE_BUFFER_DELAY: '1', MESSAGE_BUFFER_MAX_WAIT: '3' },
  });
  let key: string;
  const target = (): WebhookTarget => ({
    url: `${context.service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
    channelAccountId: ACCOUNT,
  });
  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(context.service.url, method, path, { token: key, body });
  /** The agent's call for the burst holding this text. */
  const callFor = async (text: string) => {
    await waitFor(() => context.agent.calls.some((call) => call.body.text === text), 20_000);
    return context.agent.calls.find((call) => call.body.text === text)!.body as {
      answering?: Answering;
    };
  };
  const wamidTo = (to: string) =>
    context.platform.accepted.find((accepted) => accepted.message.to === to)?.wamid;

  beforeAll(async () => {
    const admin = await adminToken(context.service.url);
    ({ key } = await createCatalogueInstance(
      context.service.url,
      admin,
      PHONE_NUMBER_ID,
      'Replies',
      ACCOUNT,
    ));
  });

  it('names the campaign and template a recipient answers; a template sent alone has no campaign', async () => {
    const parameters = (n: number) => ({
      '1': `Cliente ${n}`,
      '2': '2 dias',
      'header.1': `#${n}`,
      'button.0': String(n),
    });
    const created = await api<{ id: string }>('POST', '/campaigns', {
      name: 'Black Friday',
      template_name: 'shipping_update',
      language: 'pt_BR',
      start: true,
      recipients: [{ to: number(1), parameters: parameters(1) }],
    });
    expect(created.status).toBe(201);
    await waitFor(
      async () =>
        (await api<{ state: string }>('GET', `/campaigns/${created.body.id}`)).body.state ===
        'completed',
      30_000,
    );
    const single = await api('POST', '/send/template', {
      to: number(2),
      template_name: 'shipping_update',
      language: 'en_US',
      components: [
        { type: 'header', parameters: [{ type: 'text', text: '#2' }] },
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'Ana' },
            { type: 'text', text: '2 days' },
          ],
        },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '2' }] },
      ],
    });
    expect(single.status).toBe(200);

    expect((await simulateMessage(target(), { waId: number(1) }, 'Quero saber mais')).status).toBe(
      200,
    );
    expect((await simulateMessage(target(), { waId: number(2) }, 'Thanks')).status).toBe(200);
    expect((await simulateMessage(target(), { waId: number(3) }, 'Olá')).status).toBe(200);

    const fromCampaign = await callFor('Quero saber mais');
    expect(fromCampaign.answering).toEqual({
      message_id: wamidTo(number(1)),
      template: { name: 'shipping_update', language: 'pt_BR' },
      campaign: { id: created.body.id, name: 'Black Friday' },
      sent_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const alone = await callFor('Thanks');
    expect(alone.answering).toEqual({
      message_id: wamidTo(number(2)),
      template: { name: 'shipping_update', language: 'en_US' },
      campaign: null,
      sent_at: expect.any(String),
    });
    expect((await callFor('Olá')).answering).toBeUndefined();
  });
});
