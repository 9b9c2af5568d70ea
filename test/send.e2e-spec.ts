import { FakePlatform, VALID_TOKEN, platformError } from './support/fake-platform.js';
import {
  adminToken,
  createApiKey,
  createInstance,
  http,
  useTestService,
  type TestApp,
  type TestDatabase,
} from './support/test-app.js';

const TO = '5511999990000';

interface Failure {
  code: string;
  message: string;
  details?: Array<Record<string, unknown>>;
}

describe('sending messages', () => {
  const context = useTestService({
    env: {
      API_KEY: 'global-send-key-0123456789',
      PLATFORM_TIMEOUT_MS: '500',
    },
  });
  let db: TestDatabase;
  let platform: FakePlatform;
  let service: TestApp;
  let token: string;
  let instanceId: string;
  let phoneNumberId: string;
  const key = 'global-send-key-0123456789';

  const send = <T = { success: boolean; wamid: string }>(
    kind: string,
    body: Record<string, unknown>,
    options: { instance?: string } = {},
  ) =>
    http<T>(service.url, 'POST', `/send/${kind}`, {
      token: key,
      body: { instance_id: options.instance ?? instanceId, to: TO, ...body },
    });

  const openWindow = (waId = TO, hoursAgo = 1) =>
    db.query(
      `INSERT INTO contacts (instance_id, wa_id, last_inbound_at)
       VALUES ($1, $2, now() - make_interval(hours => $3))
       ON CONFLICT (instance_id, wa_id) WHERE wa_id IS NOT NULL
       DO UPDATE SET last_inbound_at = EXCLUDED.last_inbound_at`,
      [instanceId, waId, hoursAgo],
    );

  beforeAll(async () => {
    ({ db, platform, service } = context);
    token = await adminToken(service.url);
    phoneNumberId = '300000000001';
    instanceId = await createInstance(service.url, token, phoneNumberId, 'Sender');
    await openWindow();
  });

  beforeEach(() => platform.reset());

  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    [
      'text',
      { body: 'Hi there', reply_to: 'wamid.QUOTED' },
      {
        type: 'text',
        context: { message_id: 'wamid.QUOTED' },
        text: { body: 'Hi there' },
      },
    ],
    [
      'image',
      { media: { link: 'https://cdn.example.com/a.jpg' }, caption: 'Look' },
      {
        type: 'image',
        image: { link: 'https://cdn.example.com/a.jpg', caption: 'Look' },
      },
    ],
    [
      'document',
      { media: { id: '1013859600285441' }, filename: 'invoice.pdf', caption: 'Your invoice' },
      {
        type: 'document',
        document: { id: '1013859600285441', filename: 'invoice.pdf', caption: 'Your invoice' },
      },
    ],
    ['audio', { media: { id: 'audio-1' } }, { type: 'audio', audio: { id: 'audio-1' } }],
    [
      'video',
      { media: { id: 'video-1' }, caption: 'Clip' },
      {
        type: 'video',
        video: { id: 'video-1', caption: 'Clip' },
      },
    ],
    ['sticker', { media: { id: 'sticker-1' } }, { type: 'sticker', sticker: { id: 'sticker-1' } }],
    [
      'location',
      { latitude: -23.5614, longitude: -46.6559, name: 'Store', address: 'Av. Paulista' },
      {
        type: 'location',
        location: {
          latitude: -23.5614,
          longitude: -46.6559,
          name: 'Store',
          address: 'Av. Paulista',
        },
      },
    ],
    [
      'contacts',
      {
        contacts: [
          {
            name: { formatted_name: 'Maria Silva', first_name: 'Maria', last_name: 'Silva' },
            phones: [{ phone: '+55 11 98888-0000', type: 'CELL' }],
            emails: [{ email: 'maria@example.com', type: 'WORK' }],
          },
        ],
      },
      {
        type: 'contacts',
        contacts: [
          {
            name: { formatted_name: 'Maria Silva', first_name: 'Maria', last_name: 'Silva' },
            phones: [{ phone: '+55 11 98888-0000', type: 'CELL' }],
            emails: [{ email: 'maria@example.com', type: 'WORK' }],
          },
        ],
      },
    ],
    [
      'reaction',
      { message_id: 'wamid.ORIGINAL', emoji: '👍' },
      {
        type: 'reaction',
        reaction: { message_id: 'wamid.ORIGINAL', emoji: '👍' },
      },
    ],
    [
      'reaction',
      { message_id: 'wamid.ORIGINAL', emoji: '' },
      {
        type: 'reaction',
        reaction: { message_id: 'wamid.ORIGINAL', emoji: '' },
      },
    ],
    [
      'template',
      {
        template_name: 'order_update',
        components: [{ type: 'body', parameters: [{ type: 'text', text: 'Maria' }] }],
      },
      {
        type: 'template',
        template: {
          name: 'order_update',
          language: { code: 'pt_BR' },
          components: [{ type: 'body', parameters: [{ type: 'text', text: 'Maria' }] }],
        },
      },
    ],
    [
      'interactive',
      {
        type: 'buttons',
        body: 'Confirm?',
        header: { type: 'text', text: 'Order 42' },
        footer: 'Reply below',
        buttons: [
          { type: 'reply', reply: { id: 'yes', title: 'Yes' } },
          { type: 'reply', reply: { id: 'no', title: 'No' } },
        ],
      },
      {
        type: 'interactive',
        interactive: {
          type: 'button',
          header: { type: 'text', text: 'Order 42' },
          body: { text: 'Confirm?' },
          footer: { text: 'Reply below' },
          action: {
            buttons: [
              { type: 'reply', reply: { id: 'yes', title: 'Yes' } },
              { type: 'reply', reply: { id: 'no', title: 'No' } },
            ],
          },
        },
      },
    ],
    [
      'interactive',
      {
        type: 'list',
        body: 'Pick one',
        sections: [{ title: 'Mains', rows: [{ id: 'r1', title: 'Pizza', description: 'Large' }] }],
      },
      {
        type: 'interactive',
        interactive: {
          type: 'list',
          body: { text: 'Pick one' },
          action: {
            button: 'Menu',
            sections: [
              { title: 'Mains', rows: [{ id: 'r1', title: 'Pizza', description: 'Large' }] },
            ],
          },
        },
      },
    ],
    [
      'interactive',
      { type: 'cta_url', body: 'Track it', url: 'https://shop.example.com/42' },
      {
        type: 'interactive',
        interactive: {
          type: 'cta_url',
          body: { text: 'Track it' },
          action: {
            name: 'cta_url',
            parameters: { display_text: 'Acessar', url: 'https://shop.example.com/42' },
          },
        },
      },
    ],
  ];

  it.each(cases)(
    'sends %s as the platform message object and stores it',
    async (kind, body, expected) => {
      const answer = await send(kind, body);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ success: true, wamid: expect.stringMatching(/^wamid\./) });
      const calls = platform.callsTo(/\/messages$/);
      expect(calls).toHaveLength(1);
      expect(calls[0].path).toBe(`/v25.0/${phoneNumberId}/messages`);
      expect(calls[0].headers.authorization).toBe(`Bearer ${VALID_TOKEN}`);
      expect(calls[0].body).toEqual({
        messaging_product: 'messenger',
        recipient_type: 'individual',
        to: TO,
        ...expected,
      });

      const stored = await http<Record<string, unknown>>(
        service.url,
        'GET',
        `/messages/${answer.body.wamid}?instance_id=${instanceId}`,
        { token: key },
      );
      expect(stored.status).toBe(200);
      expect(Object.keys(stored.body).sort()).toEqual(
        [
          'contact',
          'created_at',
          'direction',
          'errors',
          'instance_id',
          'sent_by',
          'sent_by_account',
          'status',
          'type',
          'updated_at',
          'wa_id',
          'user_id',
          'wamid',
        ].sort(),
      );
      expect(stored.body).toMatchObject({
        wamid: answer.body.wamid,
        instance_id: instanceId,
        direction: 'outbound',
        sent_by: 'api',
        sent_by_account: null,
        contact: TO,
        wa_id: TO,
        user_id: null,
        type: kind,
        status: 'sent',
        errors: null,
      });
      const [row] = await db.query<{ body: Record<string, unknown> }>(
        'SELECT body FROM messages WHERE wamid = $1',
        [answer.body.wamid],
      );
      expect(row.body).toEqual({ to: TO, ...body });
    },
  );

  const invalid: Array<[string, Record<string, unknown>, string[]]> = [
    ['text', { to: '+55 11 9999', body: '' }, ['to', 'body']],
    ['text', { body: 'x'.repeat(4097) }, ['body']],
    ['text', { body: 'hi', surprise: 1 }, ['surprise']],
    ['image', { media: { id: 'a', link: 'https://x.io/a.jpg' } }, ['media']],
    ['image', { media: {} }, ['media']],
    [
      'image',
      { media: { link: 'ftp://x.io/a.jpg' }, caption: 'c'.repeat(1025) },
      ['media.link', 'caption'],
    ],
    ['document', { media: { id: 'd' } }, ['filename']],
    ['document', { media: { id: 'd' }, filename: 'no-extension' }, ['filename']],
    ['audio', {}, ['media']],
    ['location', { latitude: 91, longitude: -181 }, ['latitude', 'longitude']],
    ['location', { latitude: '10', longitude: 10 }, ['latitude']],
    ['contacts', { contacts: [] }, ['contacts']],
    ['contacts', { contacts: [{ name: {} }] }, ['contacts.0.name.formatted_name']],
    ['reaction', { emoji: '👍' }, ['message_id']],
    ['template', { language: 'portuguese' }, ['template_name', 'language']],
    ['interactive', { type: 'carousel', body: 'x' }, ['type']],
    ['interactive', { type: 'buttons', body: 'x' }, ['buttons']],
    [
      'interactive',
      { type: 'buttons', body: 'x', buttons: [{ type: 'reply' }] },
      ['buttons.0.reply'],
    ],
    [
      'interactive',
      {
        type: 'buttons',
        body: 'x',
        header: [],
        buttons: [{ type: 'reply', reply: { id: 'a', title: 'A' } }],
      },
      ['header'],
    ],
    [
      'template',
      {
        template_name: 'hello',
        components: [{ type: 'header', parameters: [{ type: 'image', image: [] }] }],
      },
      ['components.0.parameters.0.image'],
    ],
    [
      'interactive',
      {
        type: 'buttons',
        body: 'x',
        buttons: [1, 2, 3, 4].map((i) => ({
          type: 'reply',
          reply: { id: `b${i}`, title: `B${i}` },
        })),
      },
      ['buttons'],
    ],
    [
      'interactive',
      {
        type: 'buttons',
        body: 'x',
        buttons: [
          { type: 'reply', reply: { id: 'same', title: 'A title that is way too long' } },
          { type: 'reply', reply: { id: 'same', title: 'B' } },
        ],
      },
      ['buttons'],
    ],
    [
      'interactive',
      {
        type: 'buttons',
        body: 'x',
        buttons: [{ type: 'reply', reply: { id: 'a', title: 'A title that is way too long' } }],
      },
      ['buttons.0.reply.title'],
    ],
    ['interactive', { type: 'list', body: 'x', sections: [] }, ['sections']],
    [
      'interactive',
      {
        type: 'list',
        body: 'x',
        button_text: 'A button text far too long',
        sections: [
          { rows: Array.from({ length: 11 }, (_, i) => ({ id: `r${i}`, title: `Row ${i}` })) },
        ],
      },
      ['button_text', 'sections'],
    ],
    [
      'interactive',
      {
        type: 'list',
        body: 'x',
        sections: [
          { rows: [{ id: 'r', title: 'A row title over 24 chars', description: 'd'.repeat(73) }] },
        ],
      },
      ['sections.0.rows.0.title', 'sections.0.rows.0.description'],
    ],
    ['interactive', { type: 'cta_url', body: 'x' }, ['url']],
    [
      'interactive',
      { type: 'cta_url', body: 'x', url: 'javascript:alert(1)', display_text: 'd'.repeat(21) },
      ['url', 'display_text'],
    ],
    ['interactive', { type: 'cta_url', body: 'x', url: 'https://a.io', buttons: [] }, ['buttons']],
    [
      'interactive',
      {
        type: 'buttons',
        body: 'b'.repeat(1025),
        header: { type: 'text', text: 'h'.repeat(61) },
        footer: 'f'.repeat(61),
        buttons: [{ type: 'reply', reply: { id: 'a', title: 'A' } }],
      },
      ['body', 'header.text', 'footer'],
    ],
  ];

  it.each(invalid)(
    'refuses an invalid %s body with 400 naming each field, before any upstream call',
    async (kind, body, fields) => {
      const answer = await send<Failure>(kind, body);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('validation_failed');
      const named = (answer.body.details ?? []).map((d) => d.field);
      for (const field of fields) expect(named).toContain(field);
      expect(platform.requests).toHaveLength(0);
    },
  );

  describe('service window', () => {
    const stranger = '5521988887777';

    it('refuses a non-template send to a contact who never wrote, with no upstream call', async () => {
      const answer = await send<Failure>('text', { to: stranger, body: 'hi' });
      expect(answer.status).toBe(422);
      expect(answer.body.code).toBe('service_window_closed');
      expect(platform.requests).toHaveLength(0);
    });

    it('refuses after 24 hours and allows within them', async () => {
      await openWindow(stranger, 25);
      expect((await send('text', { to: stranger, body: 'hi' })).status).toBe(422);
      await openWindow(stranger, 23);
      expect((await send('text', { to: stranger, body: 'hi' })).status).toBe(200);
    });

    it('always allows a template', async () => {
      const answer = await send('template', { to: '5531977776666', template_name: 'welcome' });
      expect(answer.status).toBe(200);
    });

    it('is not enforced with SERVICE_WINDOW_ENFORCE=false', async () => {
      const { startTestApp } = await import('./support/test-app.js');
      const open = await startTestApp({
        DATABASE_URL: db.url,
        PLATFORM_API_URL: platform.url,
        API_KEY: key,
        SERVICE_WINDOW_ENFORCE: 'false',
      });
      try {
        const answer = await http(open.url, 'POST', '/send/text', {
          token: key,
          body: { instance_id: instanceId, to: '5541966665555', body: 'hi' },
        });
        expect(answer.status).toBe(200);
      } finally {
        await open.close();
      }
    });
  });

  describe('upstream failures', () => {
    const messages = /\/messages$/;

    it('retries one 500 invisibly', async () => {
      platform.on(
        'POST',
        messages,
        { status: 500, body: {} },
        {
          body: { messages: [{ id: 'wamid.after-retry' }] },
        },
      );
      const answer = await send('text', { body: 'hi' });
      expect(answer.status).toBe(200);
      expect(answer.body.wamid).toBe('wamid.after-retry');
      expect(platform.callsTo(messages)).toHaveLength(2);
    });

    it('answers 502 platform_unavailable after persistent 500s', async () => {
      platform.on('POST', messages, { status: 500, body: {} });
      const answer = await send<Failure>('text', { body: 'hi' });
      expect(answer.status).toBe(502);
      expect(answer.body.code).toBe('platform_unavailable');
      expect(platform.callsTo(messages)).toHaveLength(3);
    });

    it('answers 422 platform_rejected with the platform error, without retrying', async () => {
      platform.on('POST', messages, platformError(131009, 'Parameter value is not valid'));
      const answer = await send<Failure>('text', { body: 'hi' });
      expect(answer.status).toBe(422);
      expect(answer.body).toMatchObject({
        code: 'platform_rejected',
        details: [
          { code: 131009, message: 'Parameter value is not valid', fbtrace_id: 'trace-131009' },
        ],
      });
      expect(platform.callsTo(messages)).toHaveLength(1);
    });

    it('answers 429 platform_rate_limited with Retry-After when throttled, then backs off the number', async () => {
      platform.on('POST', messages, {
        ...platformError(130429, 'Rate limit hit', 429),
        headers: { 'retry-after': '30' },
      });
      const answer = await send<Failure>('text', { body: 'hi' });
      expect(answer.status).toBe(429);
      expect(answer.body.code).toBe('platform_rate_limited');
      expect(answer.headers.get('retry-after')).toBe('30');
      const attempts = platform.callsTo(messages).length;
      expect(attempts).toBe(3);

      // The number is left alone: the next send is refused without reaching the platform.
      platform.reset();
      const next = await send<Failure>('text', { body: 'again' });
      expect(next.status).toBe(429);
      expect(Number(next.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(platform.requests).toHaveLength(0);
      // Forget the episode (pause, strikes, slower rate) for the tests that follow.
      const redis = service.app.get<import('ioredis').Redis>(
        (await import('../src/redis/redis.constants.js')).REDIS_CLIENT,
        { strict: false },
      );
      const prefix = `${service.config.REDIS_PREFIX}:send`;
      await redis.del(
        ['pause', 'strikes', 'rate', 'pace'].map((kind) => `${prefix}:${kind}:${phoneNumberId}`),
      );
    });

    it('answers 422 with advice for an invalid token (190)', async () => {
      platform.on('POST', messages, platformError(190, 'Error validating access token', 401));
      const answer = await send<Failure>('text', { body: 'hi' });
      expect(answer.status).toBe(422);
      expect(answer.body.message).toMatch(/update/i);
    });

    it('answers 502 at the timeout for a hanging platform, saying the message may have been sent', async () => {
      // The platform never answers: the answer is PLATFORM_TIMEOUT_MS's.
      platform.on('POST', messages, { hang: true });
      const answer = await send<Failure>('text', { body: 'hi' });
      expect(answer.status).toBe(502);
      expect(answer.body.message).toMatch(/may have been sent/);
      expect(platform.callsTo(messages)).toHaveLength(1);
    });
  });

  it('paces one number to PLATFORM_SEND_RATE across processes', async () => {
    const { startTestApp } = await import('./support/test-app.js');
    const shared = {
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      API_KEY: key,
      PLATFORM_SEND_RATE: '10',
      REDIS_PREFIX: `pace${Date.now()}`,
    };
    const [first, second] = await Promise.all([startTestApp(shared), startTestApp(shared)]);
    try {
      // Taken before any send is made: every slot the pacer hands out is at or after it.
      const burstStart = Date.now();
      const sends = Array.from({ length: 12 }, (_, i) =>
        http(i % 2 ? first.url : second.url, 'POST', '/send/text', {
          token: key,
          body: { instance_id: instanceId, to: TO, body: `burst ${i}` },
        }),
      );
      const answers = await Promise.all(sends);
      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
      const times = platform
        .callsTo(/\/messages$/)
        .map((r) => r.at)
        .sort((a, b) => a - b);
      expect(times).toHaveLength(12);
      // At 10/s the pacer gives the k-th send (in any process) a slot no earlier than
      // k × 100 ms after the first, which is no earlier than burstStart, and a send
      // leaves no earlier than its slot. So the k-th arrival is at or after
      // burstStart + k × 100 ms whatever the load (load only delays). The pacer
      // sleeps whole milliseconds and timers count them whole: 2 ms of rounding.
      const period = 100;
      const rounding = 2;
      const early = times
        .map((at, k) => ({ k, at: at - burstStart, slot: k * period - rounding }))
        .filter(({ at, slot }) => at < slot);
      expect(early).toEqual([]);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  it("lets one key use its number's whole send rate by default; a lower API_KEY_RATE_LIMIT still refuses", async () => {
    const { startTestApp } = await import('./support/test-app.js');
    const burst = (app: TestApp) =>
      Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          http<Failure>(app.url, 'POST', '/send/text', {
            token: key,
            body: { instance_id: instanceId, to: TO, body: `rate ${i}` },
          }),
        ),
      );
    // The defaults (PLATFORM_SEND_RATE 80, no API_KEY_RATE_*): 200 sends at once, 2.5 s of pacing.
    const defaults = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      API_KEY: key,
      API_KEY_RATE_LIMIT: '',
      API_KEY_RATE_BURST: '',
    });
    try {
      const answers = await burst(defaults);
      expect(
        answers.filter((answer) => answer.status === 429).map((answer) => answer.body),
      ).toEqual([]);
      expect(answers.map((answer) => answer.status)).toEqual(Array(200).fill(200));
      expect(platform.callsTo(/\/messages$/)).toHaveLength(200);
    } finally {
      await defaults.close();
    }

    platform.reset();
    const lowered = await startTestApp({
      DATABASE_URL: db.url,
      PLATFORM_API_URL: platform.url,
      API_KEY: key,
      API_KEY_RATE_LIMIT: '10',
      API_KEY_RATE_BURST: '40',
    });
    try {
      const answers = await burst(lowered);
      const refused = answers.filter((answer) => answer.status === 429);
      expect(refused.length).toBeGreaterThan(100);
      expect(new Set(refused.map((answer) => answer.body.code))).toEqual(new Set(['rate_limited']));
      expect(platform.callsTo(/\/messages$/)).toHaveLength(200 - refused.length);
    } finally {
      await lowered.close();
    }
  }, 60_000);

  it('answers 404 message_not_found for an unknown wamid or another instance', async () => {
    const unknown = await http<Failure>(
      service.url,
      'GET',
      `/messages/wamid.nope?instance_id=${instanceId}`,
      {
        token: key,
      },
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('message_not_found');
  });

  it('answers 409 on a deactivated instance and works with a key bound to the instance', async () => {
    const boundKey = await createApiKey(service.url, token, instanceId, 'bound');
    const viaBound = await http(service.url, 'POST', '/send/text', {
      token: boundKey,
      body: { to: TO, body: 'bound key' },
    });
    expect(viaBound.status).toBe(200);

    await http(service.url, 'POST', `/admin/instances/${instanceId}/deactivate`, { token });
    const inactive = await send<Failure>('text', { body: 'hi' });
    expect(inactive.status).toBe(409);
    expect(inactive.body.code).toBe('instance_inactive');
    await http(service.url, 'POST', `/admin/instances/${instanceId}/activate`, { token });
  });
});
