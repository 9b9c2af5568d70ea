import { EventReceiver } from './support/event-receiver.js';
import {
  platformError,
  simulateTemplateCategory,
  simulateTemplateEvent,
  simulateTemplateQuality,
  type SimulatedTemplate,
  type WebhookTarget,
} from './support/fake-platform.js';
import { referenceBodyErrors } from './support/reference.js';
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

const PHONE_NUMBER_ID = '106540352260001';
const ACCOUNT = '102290129360001';
const TEMPLATES_PATH = '/{Version}/{WABA-ID}/message_templates';

interface Template {
  id: string;
  name: string;
  language: string;
  status: string;
  category: string | null;
  parameter_format: string | null;
  quality: string | null;
  pending_category: string | null;
  components: Array<Record<string, unknown>> | null;
  parameters: Array<{
    component: string;
    index?: number;
    kind: string;
    names: string[];
    examples: string[];
  }>;
}

interface Page {
  data: Template[];
  next_cursor: string | null;
}

/** Extra templates, so the platform's list takes three pages of 100. */
function filler(count: number): SimulatedTemplate[] {
  return Array.from({ length: count }, (_, n) => ({
    id: String(770000000000000 + n),
    name: `notice_${String(n).padStart(3, '0')}`,
    language: n % 2 === 0 ? 'pt_BR' : 'en_US',
    status: n % 10 === 0 ? 'REJECTED' : 'APPROVED',
    category: 'UTILITY',
    components: [
      { type: 'BODY', text: `Notice ${n} for {{1}}`, example: { body_text: [['Ana']] } },
    ],
  }));
}

describe('template catalogue', () => {
  const context = useTestService();
  let admin: string;
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
  const all = async (query = ''): Promise<Template[]> => {
    const found: Template[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: Page } = await api<Page>(
        'GET',
        `/templates?limit=100${query}${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      found.push(...page.body.data);
      cursor = page.body.next_cursor;
    } while (cursor);
    return found;
  };
  const byName = async (name: string, language: string): Promise<Template> =>
    (await all(`&name=${name}&language=${language}`))[0];

  beforeAll(async () => {
    receiver = await EventReceiver.start();
    context.platform.templates(ACCOUNT).push(...filler(246));
    admin = await adminToken(context.service.url);
    const instanceId = await createInstance(
      context.service.url,
      admin,
      PHONE_NUMBER_ID,
      'Catalogue',
      {
        channelAccountId: ACCOUNT,
      },
    );
    key = await createApiKey(context.service.url, admin, instanceId, 'templates');
    const subscribed = await http(context.service.url, 'POST', '/admin/event-subscriptions', {
      token: admin,
      body: { url: receiver.url, event_types: ['template.status'] },
    });
    expect(subscribed.status).toBe(201);
  });

  afterAll(async () => {
    await receiver?.stop();
  });

  it('is synced, every page, when an instance is created; listed by name with filters and a cursor', async () => {
    await waitFor(async () => (await all()).length === 250, 20_000);
    const reads = context.platform
      .callsTo(/\/message_templates$/)
      .filter((r) => r.method === 'GET');
    expect(reads.map((read) => read.query.after ?? null)).toEqual([
      null,
      expect.any(String),
      expect.any(String),
    ]);
    const listed = await all();
    const names = listed.map((template) => `${template.name}/${template.id}`);
    expect(names).toEqual([...names].sort());

    expect((await all('&name=shipping')).map((t) => t.language).sort()).toEqual(['en_US', 'pt_BR']);
    expect((await all('&status=paused')).map((t) => t.name)).toEqual(['winter_sale']);
    expect((await all('&category=MARKETING')).map((t) => t.name)).toEqual([
      'autumn_sale',
      'winter_sale',
    ]);
    expect(await all('&status=REJECTED&language=pt_BR')).toHaveLength(25);
    const bad = await api('GET', '/templates?status=LIVE');
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([
      { field: 'status', message: expect.stringMatching(/^must be one of/) },
    ]);
  });

  it('gives one template with its components, variables, their examples and quality', async () => {
    const shipping = await byName('shipping_update', 'pt_BR');
    const one = await api<Template>('GET', `/templates/${shipping.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      name: 'shipping_update',
      status: 'APPROVED',
      category: 'UTILITY',
      parameter_format: 'positional',
      quality: 'GREEN',
      parameters: [
        { component: 'header', kind: 'text', names: ['1'], examples: ['#1042'] },
        { component: 'body', kind: 'text', names: ['1', '2'], examples: ['Maria', '2 dias'] },
        { component: 'button', index: 0, kind: 'text', names: ['1'], examples: ['1042'] },
      ],
    });
    const sale = await byName('autumn_sale', 'pt_BR');
    expect(sale).toMatchObject({
      parameter_format: 'named',
      parameters: [
        { component: 'body', names: ['first_name', 'code'], examples: ['Maria', 'OUTONO20'] },
      ],
    });
    const missing = await api('GET', '/templates/123');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('template_id_not_found');
  });

  it('follows the status, quality and category webhooks, each a template.status event', async () => {
    const shipping = await byName('shipping_update', 'en_US');
    expect(
      await simulateTemplateEvent(target(), 'PAUSED', shipping.id, 'shipping_update', 'en_US'),
    ).toBe(200);
    await waitFor(
      async () => (await byName('shipping_update', 'en_US')).status === 'PAUSED',
      20_000,
    );
    expect(
      await simulateTemplateQuality(
        target(),
        shipping.id,
        'shipping_update',
        { previous: 'GREEN', next: 'YELLOW' },
        'en_US',
      ),
    ).toBe(200);
    await waitFor(
      async () => (await byName('shipping_update', 'en_US')).quality === 'YELLOW',
      20_000,
    );
    expect(
      await simulateTemplateCategory(
        target(),
        shipping.id,
        'shipping_update',
        { previous: 'UTILITY', next: 'MARKETING', announced: true },
        'en_US',
      ),
    ).toBe(200);
    await waitFor(
      async () => (await byName('shipping_update', 'en_US')).pending_category === 'MARKETING',
      20_000,
    );
    expect((await byName('shipping_update', 'en_US')).category).toBe('UTILITY');

    const events = await readUntil(
      () => receiver.ofType('template.status'),
      (received) => received.length >= 3,
    );
    expect(events.map((event) => event.event.data)).toEqual([
      expect.objectContaining({ template_id: shipping.id, change: 'status', status: 'PAUSED' }),
      expect.objectContaining({ change: 'quality', status: 'PAUSED', quality: 'YELLOW' }),
      expect.objectContaining({
        change: 'category',
        status: 'PAUSED',
        category: 'MARKETING',
        previous_category: 'UTILITY',
        reason: 'announced',
      }),
    ]);
  });

  it('creates a template on the platform after checking it, in the body the platform takes', async () => {
    const platform = context.platform;
    const before = platform
      .callsTo(/\/message_templates$/)
      .filter((r) => r.method === 'POST').length;
    const refused = await api('POST', '/templates', {
      name: 'order_ready',
      language: 'pt_BR',
      category: 'utility',
      components: [
        { type: 'header', text: 'Pedido {{1}} e {{2}}' },
        { type: 'body', text: 'Olá {{1}}, o pedido {{3}} está pronto.' },
        { type: 'footer', text: 'Até {{1}}' },
        {
          type: 'buttons',
          buttons: [{ type: 'url', text: 'Ver', url: 'https://x.example/{{1}}' }],
        },
      ],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([
      { field: 'components[0].text', message: 'a header takes one variable at most' },
      {
        field: 'components[0].example.header_text',
        message: expect.stringMatching(/^must give 2 example values/),
      },
      {
        field: 'components[1].text',
        message: 'positional variables must be {{1}} to {{2}} (found {{1}}, {{3}})',
      },
      { field: 'components[2].text', message: 'a footer takes no variables' },
      { field: 'components[3].buttons[0].example', message: "must give the variable's example" },
    ]);
    expect(
      platform.callsTo(/\/message_templates$/).filter((r) => r.method === 'POST'),
    ).toHaveLength(before);

    const draft = {
      name: 'order_ready',
      language: 'pt_BR',
      category: 'UTILITY',
      components: [
        {
          type: 'BODY',
          text: 'Olá {{1}}, o pedido {{2}} está pronto.',
          example: { body_text: [['Ana', '#77']] },
        },
        { type: 'FOOTER', text: 'Loja Acme' },
        { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Obrigado' }] },
      ],
    };
    const created = await api<Template>('POST', '/templates', draft);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'order_ready',
      status: 'PENDING',
      category: 'UTILITY',
    });
    const [call] = platform
      .callsTo(/\/message_templates$/)
      .filter((r) => r.method === 'POST')
      .slice(-1);
    expect(call.path).toMatch(new RegExp(`^/v[\\d.]+/${ACCOUNT}/message_templates$`));
    expect(call.body).toEqual(draft);
    expect(referenceBodyErrors(TEMPLATES_PATH, 'post', call.body)).toEqual([]);
    expect((await byName('order_ready', 'pt_BR')).id).toBe(created.body.id);

    const named = await api('POST', '/templates', {
      name: 'order_ready_named',
      language: 'en_US',
      category: 'UTILITY',
      parameter_format: 'named',
      components: [{ type: 'BODY', text: '{{name}}, your order {{Order}} is ready.' }],
    });
    expect(named.status).toBe(400);
    expect(named.body.details).toEqual([
      { field: 'components[0].text', message: 'may not start or end with a variable' },
      {
        field: 'components[0].text',
        message: 'named variables are lowercase letters, digits and underscores (found {{Order}})',
      },
    ]);
  });

  it('deletes a template, one language or all, on the platform and from the catalogue', async () => {
    const en = await byName('shipping_update', 'en_US');
    const one = await api<{ deleted: string[] }>(
      'DELETE',
      '/templates/shipping_update?language=en_US',
    );
    expect(one.status).toBe(200);
    expect(one.body.deleted).toEqual([en.id]);
    const [call] = context.platform
      .callsTo(/\/message_templates$/)
      .filter((r) => r.method === 'DELETE');
    expect(call.query).toEqual({ name: 'shipping_update', hsm_id: en.id });
    expect((await all('&name=shipping_update')).map((t) => t.language)).toEqual(['pt_BR']);

    const unknown = await api('DELETE', '/templates/shipping_update?language=es_ES');
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({
      code: 'template_not_found',
      details: [{ name: 'shipping_update', language: 'es_ES', languages: ['pt_BR'] }],
    });
  });

  it('reads the catalogue again on POST /templates/sync: what the platform no longer lists is gone', async () => {
    const catalogue = context.platform.templates(ACCOUNT);
    catalogue.splice(
      catalogue.findIndex((t) => t.name === 'notice_001'),
      1,
    );
    const synced = await api<{ templates: number; removed: number }>('POST', '/templates/sync', {});
    expect(synced.status).toBe(200);
    expect(synced.body).toEqual({ templates: catalogue.length, removed: 1 });
    expect(await all('&name=notice_001')).toEqual([]);
  });

  it('previews what the customer sees', async () => {
    const shipping = await byName('shipping_update', 'pt_BR');
    const preview = await api('POST', `/templates/${shipping.id}/preview`, {
      components: [
        { type: 'header', parameters: [{ type: 'text', text: '#9' }] },
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'Ana' },
            { type: 'text', text: 'amanhã' },
          ],
        },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '9' }] },
      ],
    });
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({
      header: 'Pedido #9',
      header_media: null,
      body: 'Olá Ana, seu pedido saiu para entrega e chega em amanhã.',
      footer: 'Loja Acme',
      buttons: [{ type: 'url', text: 'Acompanhar', url: 'https://loja.example.com/pedidos/9' }],
    });
  });

  describe('/send/template', () => {
    const send = (body: Record<string, unknown>) =>
      api('POST', '/send/template', { to: '5511988880001', ...body });
    const shippingComponents = [
      { type: 'header', parameters: [{ type: 'text', text: '#9' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Ana' },
          { type: 'text', text: 'amanhã' },
        ],
      },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '9' }] },
    ];

    it('refuses, before the platform hears of it, a language, a status or parameters the catalogue says are wrong', async () => {
      const sentBefore = context.platform.sentMessages().length;
      const language = await send({ template_name: 'autumn_sale', language: 'en_US' });
      expect(language.status).toBe(422);
      expect(language.body).toMatchObject({
        code: 'template_not_found',
        message: 'Template autumn_sale has no en_US version (it has pt_BR)',
      });

      const paused = await send({ template_name: 'winter_sale', language: 'pt_BR' });
      expect(paused.status).toBe(422);
      expect(paused.body).toMatchObject({
        code: 'template_not_approved',
        details: [{ status: 'PAUSED' }],
      });

      const short = await send({
        template_name: 'shipping_update',
        language: 'pt_BR',
        components: [
          { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
          { type: 'footer', parameters: [] },
          {
            type: 'button',
            sub_type: 'quick_reply',
            index: '3',
            parameters: [{ type: 'text', text: 'x' }],
          },
        ],
      });
      expect(short.status).toBe(400);
      expect(short.body.details).toEqual([
        {
          field: 'components',
          message: "the template's header takes 1 parameter ({{1}}): add a header component",
        },
        {
          field: 'components[0].parameters',
          message: 'the body takes 2 parameters ({{1}}, {{2}}); 1 given',
        },
        {
          field: 'components',
          message: `the template's button 0 takes 1 parameter ({{1}}): add a button component with index "0"`,
        },
        { field: 'components[2]', message: "the template's button 3 takes no parameters" },
      ]);

      const named = await send({
        template_name: 'autumn_sale',
        language: 'pt_BR',
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Ana', parameter_name: 'first_name' },
              { type: 'text', text: 'X', parameter_name: 'coupon' },
            ],
          },
        ],
      });
      expect(named.status).toBe(400);
      expect(named.body.details).toEqual([
        { field: 'components[0].parameters', message: 'the body is missing parameter_name "code"' },
        {
          field: 'components[0].parameters',
          message: 'the body has no variable "coupon" (it has {{first_name}}, {{code}})',
        },
      ]);
      expect(context.platform.sentMessages()).toHaveLength(sentBefore);
    });

    it("fills an authentication code's button, a copy-code button's coupon and a flow button's action as the platform takes them", async () => {
      context.platform.templates(ACCOUNT).push(
        {
          id: '880000000000001',
          name: 'login_code',
          language: 'pt_BR',
          status: 'APPROVED',
          category: 'AUTHENTICATION',
          components: [
            { type: 'BODY', text: '*{{1}}* é seu código de verificação.' },
            {
              type: 'BUTTONS',
              buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copiar código' }],
            },
          ],
        },
        {
          id: '880000000000002',
          name: 'coupon_offer',
          language: 'pt_BR',
          status: 'APPROVED',
          category: 'MARKETING',
          components: [
            { type: 'BODY', text: 'Oi {{1}}, seu cupom:', example: { body_text: [['Ana']] } },
            {
              type: 'BUTTONS',
              buttons: [
                { type: 'QUICK_REPLY', text: 'Parar' },
                { type: 'COPY_CODE', example: 'OUTONO25' },
                { type: 'FLOW', text: 'Agendar', flow_id: '1234' },
              ],
            },
          ],
        },
      );
      expect((await api('POST', '/templates/sync')).status).toBe(200);
      const coupon = (await all('&name=coupon_offer'))[0];
      expect(coupon.parameters).toEqual([
        { component: 'body', kind: 'text', names: ['1'], examples: ['Ana'] },
        {
          component: 'button',
          index: 1,
          kind: 'coupon_code',
          names: ['1'],
          examples: ['OUTONO25'],
        },
      ]);

      // The code goes in the body and as the code button's text; missing, it is named.
      const noButton = await send({
        template_name: 'login_code',
        language: 'pt_BR',
        components: [{ type: 'body', parameters: [{ type: 'text', text: '482913' }] }],
      });
      expect(noButton.status).toBe(400);
      expect(noButton.body.details).toEqual([
        {
          field: 'components',
          message: `the template's button 0 takes 1 parameter ({{1}}): add a button component with index "0"`,
        },
      ]);
      const code = await send({
        template_name: 'login_code',
        language: 'pt_BR',
        components: [
          { type: 'body', parameters: [{ type: 'text', text: '482913' }] },
          {
            type: 'button',
            sub_type: 'url',
            index: '0',
            parameters: [{ type: 'text', text: '482913' }],
          },
        ],
      });
      expect(code.status).toBe(200);

      const wrongCoupon = await send({
        template_name: 'coupon_offer',
        language: 'pt_BR',
        components: [
          { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
          {
            type: 'button',
            sub_type: 'copy_code',
            index: '1',
            parameters: [{ type: 'text', text: 'X' }],
          },
        ],
      });
      expect(wrongCoupon.status).toBe(400);
      expect(wrongCoupon.body.details).toEqual([
        {
          field: 'components[1].parameters',
          message: 'the button 1 takes one coupon_code parameter',
        },
      ]);
      const offer = await send({
        template_name: 'coupon_offer',
        language: 'pt_BR',
        components: [
          { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
          {
            type: 'button',
            sub_type: 'copy_code',
            index: '1',
            parameters: [{ type: 'coupon_code', coupon_code: 'OUTONO25' }],
          },
          {
            type: 'button',
            sub_type: 'flow',
            index: '2',
            parameters: [
              { type: 'action', action: { flow_token: 'visit-9', flow_action_data: { a: '1' } } },
            ],
          },
        ],
      });
      expect(offer.status).toBe(200);
      const [sentCode, sentOffer] = context.platform.sentMessages().slice(-2) as Array<{
        template: { components: unknown[] };
      }>;
      expect(sentCode.template.components).toEqual([
        { type: 'body', parameters: [{ type: 'text', text: '482913' }] },
        {
          type: 'button',
          sub_type: 'url',
          index: '0',
          parameters: [{ type: 'text', text: '482913' }],
        },
      ]);
      expect(sentOffer.template.components).toEqual([
        { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
        {
          type: 'button',
          sub_type: 'copy_code',
          index: '1',
          parameters: [{ type: 'coupon_code', coupon_code: 'OUTONO25' }],
        },
        {
          type: 'button',
          sub_type: 'flow',
          index: '2',
          parameters: [
            { type: 'action', action: { flow_token: 'visit-9', flow_action_data: { a: '1' } } },
          ],
        },
      ]);
    });

    it('sends what fits, and a template the catalogue does not know as asked', async () => {
      const fits = await send({
        template_name: 'shipping_update',
        language: 'pt_BR',
        components: shippingComponents,
      });
      expect(fits.status).toBe(200);
      const unknown = await send({ template_name: 'not_synced_yet', language: 'pt_BR' });
      expect(unknown.status).toBe(200);
      expect(
        context.platform
          .sentMessages()
          .slice(-2)
          .map((m) => (m.template as { name: string }).name),
      ).toEqual(['shipping_update', 'not_synced_yet']);
    });

    it("answers the platform's template errors in the template's words, and reads the catalogue again where it was out of date", async () => {
      const platform = context.platform;
      const reads = () =>
        platform.callsTo(/\/message_templates$/).filter((r) => r.method === 'GET').length;
      platform.on(
        'POST',
        /\/messages$/,
        platformError(132000, 'Number of parameters does not match'),
      );
      const mismatch = await send({ template_name: 'not_synced_yet' });
      expect(mismatch.status).toBe(422);
      expect(mismatch.body).toMatchObject({
        code: 'template_parameter_mismatch',
        details: [{ code: 132000 }],
      });

      const readsBefore = reads();
      platform.on('POST', /\/messages$/, platformError(132015, 'Template is paused'));
      const paused = await send({
        template_name: 'shipping_update',
        language: 'pt_BR',
        components: shippingComponents,
      });
      expect(paused.status).toBe(422);
      expect(paused.body).toMatchObject({
        code: 'template_not_approved',
        details: [{ code: 132015 }],
      });
      await waitFor(() => Promise.resolve(reads() > readsBefore), 20_000);
      platform.reset();
    });
  });
});
