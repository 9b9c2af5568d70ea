import { EventReceiver } from './support/event-receiver.js';
import { referenceBodyErrors } from './support/reference.js';
import {
  simulateMessage,
  simulateTemplateCategory,
  simulateTemplateEvent,
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
} from './support/test-app.js';

const PHONE_NUMBER_ID = '106540352270001';
const ACCOUNT = '102290129370001';
const MARKETING_PATH = '/{Version}/{Phone-Number-ID}/marketing_messages';

interface Campaign {
  id: string;
  state: string;
  pause_reason: string | null;
  recipients: number;
  duplicates: number;
  invalid: number;
  progress: {
    queued: number;
    sending: number;
    sent: number;
    failed: number;
    skipped: number;
    delivered: number;
    read: number;
    replied: number;
    failed_by_code: Record<string, number>;
    skipped_by_reason: Record<string, number>;
  };
}

const number = (n: number) => `55119${String(n).padStart(8, '0')}`;

describe('campaigns', () => {
  const context = useTestService({
    env: { PLATFORM_SEND_RATE: '1000', CAMPAIGN_LEASE_S: '5' },
  });
  let key: string;
  let receiver: EventReceiver;
  const target = (): WebhookTarget => ({
    url: `${context.service.url}/webhooks/messenger`,
    appSecret: APP_SECRET,
    phoneNumberId: PHONE_NUMBER_ID,
    channelAccountId: ACCOUNT,
  });
  const api = <T = Record<string, unknown>>(method: string, path: string, body?: unknown) =>
    http<T>(context.service.url, method, path, { token: key, body });
  const campaign = async (id: string) => (await api<Campaign>('GET', `/campaigns/${id}`)).body;
  /** The template sends the platform received, by recipient number. */
  const sendsTo = (templateName: string) => {
    const counts = new Map<string, number>();
    for (const request of context.platform.callsTo(/\/messages$/)) {
      const body = request.body as { to?: string; template?: { name?: string } };
      if (body.template?.name !== templateName || !body.to) continue;
      counts.set(body.to, (counts.get(body.to) ?? 0) + 1);
    }
    return counts;
  };
  const shipping = (n: number) => ({
    to: number(n),
    parameters: { '1': `Cliente ${n}`, '2': '2 dias', 'header.1': `#${n}`, 'button.0': String(n) },
  });

  beforeAll(async () => {
    receiver = await EventReceiver.start();
    const admin = await adminToken(context.service.url);
    const instanceId = await createInstance(
      context.service.url,
      admin,
      PHONE_NUMBER_ID,
      'Campaigns',
      {
        channelAccountId: ACCOUNT,
      },
    );
    key = await createApiKey(context.service.url, admin, instanceId, 'campaigns');
    expect(
      (
        await http(context.service.url, 'POST', '/admin/event-subscriptions', {
          token: admin,
          body: { url: receiver.url, event_types: ['campaign.status'] },
        })
      ).status,
    ).toBe(201);
    // The catalogue the campaigns check against.
    await waitFor(async () => {
      const listed = await api<{ data: unknown[] }>('GET', '/templates?name=shipping_update');
      return listed.body.data?.length === 2;
    }, 20_000);
  });

  afterAll(async () => {
    await receiver?.stop();
  });

  it('sends 5,000 recipients at the configured rate, exactly once each, and reports it done', async () => {
    const rate = 500;
    const created = await api<Campaign>('POST', '/campaigns', {
      name: 'Five thousand',
      template_name: 'shipping_update',
      language: 'pt_BR',
      rate_per_s: rate,
      recipients: Array.from({ length: 5000 }, (_, n) => shipping(n)),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      state: 'draft',
      recipients: 5000,
      progress: { queued: 5000 },
    });
    expect(context.platform.sentMessages()).toHaveLength(0);

    const started = await api<Campaign>('POST', `/campaigns/${created.body.id}/start`, {});
    expect(started.status).toBe(200);
    await waitFor(
      async () => (await campaign(created.body.id)).state === 'completed',
      120_000,
      500,
    );

    const sends = sendsTo('shipping_update');
    expect(sends.size).toBe(5000);
    expect([...sends.values()].every((count) => count === 1)).toBe(true);
    const done = await campaign(created.body.id);
    expect(done.progress).toMatchObject({
      queued: 0,
      sending: 0,
      sent: 5000,
      failed: 0,
      skipped: 0,
    });
    // Each recipient's own values went into the template.
    const sample = context.platform.sentMessages().find((m) => m.to === number(42)) as {
      template: { components: unknown[] };
    };
    expect(sample.template.components).toEqual([
      { type: 'header', parameters: [{ type: 'text', text: '#42' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Cliente 42' },
          { type: 'text', text: '2 dias' },
        ],
      },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '42' }] },
    ]);
    // Never faster than the rate: the pacing spaces each send at least 1/rate after the one before.
    const times = context.platform
      .callsTo(/\/messages$/)
      .filter((r) => (r.body as { template?: unknown }).template)
      .map((r) => r.at);
    expect(times[times.length - 1] - times[0]).toBeGreaterThanOrEqual(
      ((5000 - 1) / rate) * 1000 - 50,
    );

    const events = await readUntil(
      () =>
        receiver
          .ofType('campaign.status')
          .filter((e) => e.event.data.campaign_id === created.body.id),
      (received) => received.some((e) => e.event.data.state === 'completed'),
    );
    expect(events.map((e) => e.event.data.state)).toEqual(['draft', 'running', 'completed']);
    expect(events[2].event.data).toMatchObject({ counts: { sent: 5000 }, recipients: 5000 });
  }, 180_000);

  it('leaves out duplicates and invalid numbers, skips contacts who opted out, and counts each', async () => {
    expect((await simulateMessage(target(), { waId: number(90001) }, 'PARAR')).status).toBe(200);
    await waitFor(async () => {
      const contacts = await api<{ data: Array<{ opted_out_at: string | null }> }>(
        'GET',
        `/contacts?q=${number(90001)}`,
      );
      return Boolean(contacts.body.data?.[0]?.opted_out_at);
    }, 20_000);
    const created = await api<Campaign>('POST', '/campaigns', {
      name: 'Skips',
      template_name: 'autumn_sale',
      start: true,
      recipients: [
        { to: number(90001), parameters: { first_name: 'Ana', code: 'X1' } },
        { to: `+${number(90002)}`, parameters: { first_name: 'Bia', code: 'X2' } },
        { to: number(90002), parameters: { first_name: 'Bia', code: 'X2' } },
        { to: '12', parameters: { first_name: 'Cid', code: 'X3' } },
        { to: number(90003), parameters: { first_name: 'Dan', code: 'X4' } },
        { to: number(90003), parameters: { first_name: 'Dan', code: 'X4' } },
      ],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ recipients: 3, duplicates: 2, invalid: 1 });
    await waitFor(async () => (await campaign(created.body.id)).state === 'completed', 30_000, 500);
    expect((await campaign(created.body.id)).progress).toMatchObject({
      sent: 2,
      skipped: 1,
      skipped_by_reason: { opted_out: 1 },
    });
    expect([...sendsTo('autumn_sale').keys()].sort()).toEqual([number(90002), number(90003)]);
    const named = context.platform.sentMessages().find((m) => m.to === number(90003)) as {
      template: { components: unknown[] };
    };
    expect(named.template.components).toEqual([
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Dan', parameter_name: 'first_name' },
          { type: 'text', text: 'X4', parameter_name: 'code' },
        ],
      },
    ]);
    const skipped = await api<{ data: Array<{ to: string; reason: string }> }>(
      'GET',
      `/campaigns/${created.body.id}/recipients?state=skipped`,
    );
    expect(skipped.body.data).toEqual([
      expect.objectContaining({ to: number(90001), reason: 'opted_out' }),
    ]);
  });

  it("refuses a recipient whose parameters do not fill the template's variables, naming it", async () => {
    const refused = await api('POST', '/campaigns', {
      name: 'Bad',
      template_name: 'shipping_update',
      recipients: [shipping(1), { to: number(2), parameters: { '1': 'Ana' } }],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual(
      expect.arrayContaining([
        {
          field: 'recipients[1].parameters',
          message: "the template's header takes 1 parameter ({{1}}): add a header component",
        },
      ]),
    );
    const paused = await api('POST', '/campaigns', {
      name: 'Paused template',
      template_name: 'winter_sale',
      recipients: [{ to: number(3) }],
    });
    expect(paused.status).toBe(422);
    expect(paused.body.code).toBe('template_not_approved');
  });

  it('pauses itself when the template is paused, sends nothing meanwhile, and resumes when told', async () => {
    const pt = (
      await api<{ data: Array<{ id: string }> }>(
        'GET',
        '/templates?name=shipping_update&language=pt_BR',
      )
    ).body.data[0];
    const created = await api<Campaign>('POST', '/campaigns', {
      name: 'Interrupted',
      template_name: 'shipping_update',
      start: true,
      rate_per_s: 20,
      recipients: Array.from({ length: 200 }, (_, n) => shipping(20000 + n)),
    });
    expect(created.status).toBe(201);
    await waitFor(async () => (await campaign(created.body.id)).progress.sent >= 10, 30_000, 500);
    expect(await simulateTemplateEvent(target(), 'PAUSED', pt.id, 'shipping_update')).toBe(200);
    await waitFor(async () => (await campaign(created.body.id)).state === 'paused', 30_000, 500);
    const paused = await campaign(created.body.id);
    expect(paused.pause_reason).toBe('template_paused');
    const sentWhenPaused = paused.progress.sent;
    expect(sentWhenPaused).toBeLessThan(200);
    // Nothing more goes out while it is paused.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await campaign(created.body.id)).progress.sent).toBe(sentWhenPaused);

    expect(await simulateTemplateEvent(target(), 'APPROVED', pt.id, 'shipping_update')).toBe(200);
    await waitFor(async () => {
      const template = await api<{ status: string }>('GET', `/templates/${pt.id}`);
      return template.body.status === 'APPROVED';
    }, 20_000);
    expect((await api('POST', `/campaigns/${created.body.id}/resume`, {})).status).toBe(200);
    await waitFor(async () => (await campaign(created.body.id)).state === 'completed', 60_000, 500);
    const sends = sendsTo('shipping_update');
    for (let n = 0; n < 200; n++) expect(sends.get(number(20000 + n))).toBe(1);

    const states = (
      await readUntil(
        () =>
          receiver
            .ofType('campaign.status')
            .filter((e) => e.event.data.campaign_id === created.body.id),
        (received) => received.some((e) => e.event.data.state === 'completed'),
      )
    ).map((e) => [e.event.data.state, e.event.data.pause_reason]);
    expect(states).toEqual([
      ['draft', null],
      ['running', null],
      ['paused', 'template_paused'],
      ['running', null],
      ['completed', null],
    ]);
    const conflict = await api('POST', `/campaigns/${created.body.id}/pause`, {});
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({
      code: 'campaign_state_conflict',
      details: [{ state: 'completed' }],
    });
  }, 120_000);

  it('pauses on a category change the platform announces, until someone confirms it by resuming', async () => {
    const sale = (await api<{ data: Array<{ id: string }> }>('GET', '/templates?name=autumn_sale'))
      .body.data[0];
    const created = await api<Campaign>('POST', '/campaigns', {
      name: 'Recategorised',
      template_name: 'autumn_sale',
      start: true,
      rate_per_s: 10,
      recipients: Array.from({ length: 60 }, (_, n) => ({
        to: number(30000 + n),
        parameters: { first_name: 'Ana', code: 'Y' },
      })),
    });
    await waitFor(async () => (await campaign(created.body.id)).progress.sent >= 2, 30_000, 500);
    expect(
      await simulateTemplateCategory(target(), sale.id, 'autumn_sale', {
        previous: 'MARKETING',
        next: 'UTILITY',
        announced: true,
      }),
    ).toBe(200);
    await waitFor(async () => (await campaign(created.body.id)).state === 'paused', 30_000, 500);
    expect((await campaign(created.body.id)).pause_reason).toBe('template_category_changed');
    expect((await api('POST', `/campaigns/${created.body.id}/resume`, {})).status).toBe(200);
    await waitFor(async () => (await campaign(created.body.id)).progress.sent >= 20, 30_000, 500);
    expect((await campaign(created.body.id)).state).toBe('running');
    expect((await api('POST', `/campaigns/${created.body.id}/cancel`, {})).status).toBe(200);
    const cancelled = await campaign(created.body.id);
    expect(cancelled.state).toBe('cancelled');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await campaign(created.body.id)).progress.sent).toBeLessThan(60);
  }, 90_000);

  it("sends marketing templates through the marketing messages endpoint when the number is set to, in the platform's body", async () => {
    const admin = await adminToken(context.service.url);
    const [instance] = (
      await http<Array<{ id: string; phone_number_id: string }>>(
        context.service.url,
        'GET',
        '/admin/instances',
        { token: admin },
      )
    ).body.filter((found) => found.phone_number_id === PHONE_NUMBER_ID);
    const patch = (marketing: boolean) =>
      http(context.service.url, 'PATCH', `/admin/instances/${instance.id}`, {
        token: admin,
        body: { marketing_messages: marketing },
      });
    expect((await patch(true)).status).toBe(200);
    const marketing = await api<Campaign>('POST', '/campaigns', {
      name: 'Marketing endpoint',
      template_name: 'autumn_sale',
      start: true,
      recipients: [60001, 60002, 60003].map((n) => ({
        to: number(n),
        parameters: { first_name: 'Ana', code: 'M' },
      })),
    });
    const utility = await api<Campaign>('POST', '/campaigns', {
      name: 'Utility stays',
      template_name: 'shipping_update',
      start: true,
      recipients: [shipping(60004)],
    });
    for (const id of [marketing.body.id, utility.body.id]) {
      await waitFor(async () => (await campaign(id)).state === 'completed', 30_000, 500);
    }
    const calls = context.platform.callsTo(/\/marketing_messages$/);
    expect(calls.map((call) => (call.body as { to: string }).to).sort()).toEqual(
      [60001, 60002, 60003].map(number),
    );
    for (const call of calls) {
      expect(referenceBodyErrors(MARKETING_PATH, 'post', call.body)).toEqual([]);
    }
    expect(sendsTo('shipping_update').get(number(60004))).toBe(1);
    expect((await patch(false)).status).toBe(200);
  });

  it("lets a conversation's sends through while a campaign runs on the same number", async () => {
    const customer = number(40000);
    expect((await simulateMessage(target(), { waId: customer }, 'Oi')).status).toBe(200);
    const created = await api<Campaign>('POST', '/campaigns', {
      name: 'Busy number',
      template_name: 'shipping_update',
      start: true,
      recipients: Array.from({ length: 3000 }, (_, n) => shipping(50000 + n)),
    });
    await waitFor(async () => (await campaign(created.body.id)).progress.sent >= 100, 30_000, 500);
    for (const body of ['one', 'two', 'three']) {
      const sent = await api('POST', '/send/text', { to: customer, body });
      expect(sent.status).toBe(200);
    }
    const during = await campaign(created.body.id);
    expect(during.state).toBe('running');
    expect(during.progress.queued).toBeGreaterThan(0);
    await waitFor(
      async () => (await campaign(created.body.id)).state === 'completed',
      120_000,
      500,
    );
  }, 180_000);
});
