import {
  deliverSigned,
  envelope,
  simulateMessage,
  simulateUserPreference,
  type WebhookTarget,
} from './support/fake-platform.js';
import {
  APP_SECRET,
  adminToken,
  createCatalogueInstance,
  http,
  useTestService,
  waitFor,
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352270006';
const ACCOUNT = '102290129370006';

const number = (n: number) => `55119${String(n).padStart(8, '0')}`;

interface Campaign {
  id: string;
  state: string;
  progress: { sent: number; skipped: number; skipped_by_reason: Record<string, number> };
}

describe('marketing opt-outs (user_preferences, 131050)', () => {
  const context = useTestService({ env: { PLATFORM_SEND_RATE: '1000' } });
  let key: string;
  const target = (): WebhookTarget => ({
    url: `${context.service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
    channelAccountId: ACCOUNT,
  });
  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(context.service.url, method, path, { token: key, body });
  const marketingOptOut = async (to: string) => {
    const listed = await api<{
      data: Array<{ wa_id: string; marketing_opted_out_at: string | null }>;
    }>('GET', `/contacts?q=${to}`);
    return listed.body.data.find((contact) => contact.wa_id === to)?.marketing_opted_out_at;
  };
  /** A marketing template to a number, or to `{ recipient }` (a user id). */
  const offer = (to: string | { recipient: string }) =>
    api('POST', '/send/template', {
      ...(typeof to === 'string' ? { to } : to),
      template_name: 'autumn_sale',
      language: 'pt_BR',
      components: [
        {
          type: 'body',
          parameters: [
            { type: 'text', parameter_name: 'first_name', text: 'Ana' },
            { type: 'text', parameter_name: 'code', text: 'OUTONO' },
          ],
        },
      ],
    });
  const runCampaign = async (templateName: string, recipients: unknown[]) => {
    const created = await api<Campaign>('POST', '/campaigns', {
      name: templateName,
      template_name: templateName,
      language: 'pt_BR',
      start: true,
      recipients,
    });
    expect(created.status).toBe(201);
    await waitFor(
      async () =>
        (await api<Campaign>('GET', `/campaigns/${created.body.id}`)).body.state === 'completed',
      30_000,
    );
    return (await api<Campaign>('GET', `/campaigns/${created.body.id}`)).body;
  };

  beforeAll(async () => {
    const admin = await adminToken(context.service.url);
    ({ key } = await createCatalogueInstance(
      context.service.url,
      admin,
      PHONE_NUMBER_ID,
      'Prefs',
      ACCOUNT,
    ));
  });

  it('marks a customer who stops marketing messages: marketing templates refused, campaigns pass over them; a resume lifts it', async () => {
    const stopAt = Math.floor(Date.now() / 1000) - 60;
    expect(await simulateUserPreference(target(), number(1), 'stop', stopAt)).toBe(200);
    await waitFor(async () => Boolean(await marketingOptOut(number(1))), 10_000);

    const refused = await offer(number(1));
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'contact_opted_out' });

    const marketing = await runCampaign('autumn_sale', [
      { to: number(1), parameters: { first_name: 'Ana', code: 'X' } },
      { to: number(2), parameters: { first_name: 'Bia', code: 'X' } },
    ]);
    expect(marketing.progress).toMatchObject({
      sent: 1,
      skipped: 1,
      skipped_by_reason: { marketing_opted_out: 1 },
    });
    // A utility template still reaches them.
    const utility = await runCampaign('shipping_update', [
      {
        to: number(1),
        parameters: { '1': 'Ana', '2': '2 dias', 'header.1': '#1', 'button.0': '1' },
      },
    ]);
    expect(utility.progress).toMatchObject({ sent: 1, skipped: 0 });

    // Resumed later: marketing goes again. An older stop delivered again changes nothing.
    expect(await simulateUserPreference(target(), number(1), 'resume', stopAt + 30)).toBe(200);
    await waitFor(async () => (await marketingOptOut(number(1))) === null, 10_000);
    // The older stop comes again, in one delivery with another customer's stop: once
    // that one is applied, so was it.
    expect(
      await deliverSigned(
        target(),
        envelope(target(), 'user_preferences', {
          user_preferences: [number(1), number(4)].map((waId, i) => ({
            wa_id: waId,
            category: 'marketing_messages',
            value: 'stop',
            timestamp: i === 0 ? stopAt : stopAt + 60,
          })),
        }),
      ),
    ).toBe(200);
    await waitFor(async () => Boolean(await marketingOptOut(number(4))), 10_000);
    expect(await marketingOptOut(number(1))).toBeNull();
    expect((await offer(number(1))).status).toBe(200);
  });

  it('marks a customer whose marketing template failed with 131050', async () => {
    const sent = await offer(number(3));
    expect(sent.status).toBe(200);
    const { wamid } = sent.body as { wamid: string };
    expect(await simulateFailedStatus(target(), wamid, number(3))).toBe(200);
    await waitFor(async () => Boolean(await marketingOptOut(number(3))), 10_000);
    expect((await offer(number(3))).status).toBe(422);
  });

  it('marks a customer who hides the number (a user id alone), by preference and by 131050', async () => {
    const userId = 'BR.PREFSHIDDEN0001';
    const marketingOptOutOf = async (id: string) => {
      const listed = await api<{
        data: Array<{ user_id: string | null; marketing_opted_out_at: string | null }>;
      }>('GET', '/contacts?limit=100');
      return listed.body.data.find((contact) => contact.user_id === id)?.marketing_opted_out_at;
    };
    expect(await simulateUserPreference(target(), { userId }, 'stop')).toBe(200);
    await waitFor(async () => Boolean(await marketingOptOutOf(userId)), 10_000);
    const refused = await offer({ recipient: userId });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'contact_opted_out' });
    const marketing = await runCampaign('autumn_sale', [
      { recipient: userId, parameters: { first_name: 'Ana', code: 'X' } },
    ]);
    expect(marketing.progress).toMatchObject({
      sent: 0,
      skipped: 1,
      skipped_by_reason: { marketing_opted_out: 1 },
    });

    // Another, who wrote by user id, whose marketing template the platform failed with 131050.
    const other = 'BR.PREFSHIDDEN0002';
    expect((await simulateMessage(target(), { userId: other }, 'Oi')).status).toBe(200);
    await waitFor(async () => (await marketingOptOutOf(other)) === null, 10_000);
    const sent = await offer({ recipient: other });
    expect(sent.status).toBe(200);
    expect(
      await simulateFailedStatus(target(), (sent.body as { wamid: string }).wamid, {
        userId: other,
      }),
    ).toBe(200);
    await waitFor(async () => Boolean(await marketingOptOutOf(other)), 10_000);
    expect((await offer({ recipient: other })).status).toBe(422);
  });
});

/** The platform failing a marketing template with 131050 (the user stopped marketing messages). */
function simulateFailedStatus(
  target: WebhookTarget,
  wamid: string,
  to: string | { userId: string },
) {
  return deliverSigned(
    target,
    envelope(target, 'messages', {
      statuses: [
        {
          id: wamid,
          status: 'failed',
          timestamp: String(Math.floor(Date.now() / 1000)),
          ...(typeof to === 'string' ? { recipient_id: to } : { recipient_user_id: to.userId }),
          errors: [
            {
              code: 131050,
              title:
                'Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business',
            },
          ],
        },
      ],
    }),
  );
}
