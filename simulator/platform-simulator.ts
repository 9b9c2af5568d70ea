import { createHmac, randomInt, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** When the request arrived (ms since epoch). */
  at: number;
}

export interface FakeAnswer {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the client must time out). */
  hang?: boolean;
  /** Answer only once this settles (a test holds the call while it does something). */
  release?: Promise<unknown>;
  /** Send `body` as it is (a string), not as JSON. */
  raw?: boolean;
}

/** A scripted answer; undefined lets the simulator answer as the platform would. */
type Handler = (request: RecordedRequest) => FakeAnswer | undefined;

interface Route {
  method: string;
  path: RegExp;
  answers: Handler[];
  /** The last handler repeats once the others are used up. */
  sticky: boolean;
}

export const VALID_TOKEN = 'EAAG-valid-platform-token-0123456789';

export const NUMBER_DETAILS = {
  display_phone_number: '+55 11 99999-0000',
  verified_name: 'Acme Store',
  quality_rating: 'GREEN',
  messaging_limit_tier: 'TIER_1K',
};

/** What the fake platform serves as a user's media file. */
export const MEDIA_CONTENT = 'fake-jpeg-bytes-0123456789';

/** A template of the simulated catalogue, as the platform lists it. */
export interface SimulatedTemplate {
  id: string;
  name: string;
  language: string;
  status: string;
  category: string;
  parameter_format?: string;
  components: Array<Record<string, unknown>>;
  quality_score?: { score: string };
  rejected_reason?: string;
}

/**
 * The catalogue every business account starts with in the simulator: a
 * utility template with a header, body and URL-button variable in two
 * languages, a marketing one with named variables, and a paused one.
 */
export const SIMULATED_TEMPLATES: SimulatedTemplate[] = [
  {
    id: '880000000000001',
    name: 'shipping_update',
    language: 'pt_BR',
    status: 'APPROVED',
    category: 'UTILITY',
    parameter_format: 'POSITIONAL',
    quality_score: { score: 'GREEN' },
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Pedido {{1}}', example: { header_text: ['#1042'] } },
      {
        type: 'BODY',
        text: 'Olá {{1}}, seu pedido saiu para entrega e chega em {{2}}.',
        example: { body_text: [['Maria', '2 dias']] },
      },
      { type: 'FOOTER', text: 'Loja Acme' },
      {
        type: 'BUTTONS',
        buttons: [
          {
            type: 'URL',
            text: 'Acompanhar',
            url: 'https://loja.example.com/pedidos/{{1}}',
            example: ['https://loja.example.com/pedidos/1042'],
          },
        ],
      },
    ],
  },
  {
    id: '880000000000002',
    name: 'shipping_update',
    language: 'en_US',
    status: 'APPROVED',
    category: 'UTILITY',
    parameter_format: 'POSITIONAL',
    quality_score: { score: 'GREEN' },
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['#1042'] } },
      {
        type: 'BODY',
        text: 'Hi {{1}}, your order is on its way and arrives in {{2}}.',
        example: { body_text: [['Maria', '2 days']] },
      },
      {
        type: 'BUTTONS',
        buttons: [
          {
            type: 'URL',
            text: 'Track',
            url: 'https://shop.example.com/orders/{{1}}',
            example: ['https://shop.example.com/orders/1042'],
          },
        ],
      },
    ],
  },
  {
    id: '880000000000003',
    name: 'autumn_sale',
    language: 'pt_BR',
    status: 'APPROVED',
    category: 'MARKETING',
    parameter_format: 'NAMED',
    quality_score: { score: 'GREEN' },
    components: [
      {
        type: 'BODY',
        text: 'Oi {{first_name}}! Use o cupom {{code}} e ganhe 20% de desconto.',
        example: {
          body_text_named_params: [
            { param_name: 'first_name', example: 'Maria' },
            { param_name: 'code', example: 'OUTONO20' },
          ],
        },
      },
      { type: 'FOOTER', text: 'Responda PARAR para não receber ofertas' },
      { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Parar promoções' }] },
    ],
  },
  {
    id: '880000000000004',
    name: 'winter_sale',
    language: 'pt_BR',
    status: 'PAUSED',
    category: 'MARKETING',
    parameter_format: 'POSITIONAL',
    quality_score: { score: 'RED' },
    rejected_reason: 'NONE',
    components: [{ type: 'BODY', text: 'Inverno com 30% de desconto!' }],
  },
];

const TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/;
const TEMPLATE_CATEGORIES = new Set(['MARKETING', 'UTILITY', 'AUTHENTICATION']);

export function platformError(code: number, message = 'error', status = 400): FakeAnswer {
  return {
    status,
    body: { error: { message, type: 'OAuthException', code, fbtrace_id: `trace-${code}` } },
  };
}

export interface SimulatorOptions {
  /**
   * Number ids from 1 (`wamid.fake1`, `media-1`) instead of giving them a
   * part of their own per simulator start. Only for a platform whose ids can
   * never meet an earlier run's (a test with a database of its own): a
   * service that stored `wamid.fake1` from an earlier run would take a new
   * send with that id for the old message.
   */
  sequentialIds?: boolean;
}

/**
 * What makes a simulator start's ids its own: the start time in milliseconds
 * and four random digits, all digits (like the platform's ids), fixed length.
 */
function newRunId(): string {
  return `${Date.now()}${randomInt(10_000).toString().padStart(4, '0')}`;
}

/**
 * The platform simulator: a real HTTP server that speaks the platform calls
 * the service makes (number details, phone numbers, register, request_code,
 * verify_code, messages, media, template catalogues), records what it receives, and answers like
 * the platform unless a test scripts other answers with `on()`.
 * `npm run simulator` runs it; the end-to-end tests use it as their platform.
 */
export class PlatformSimulator {
  readonly requests: RecordedRequest[] = [];
  private readonly routes: Route[] = [];
  /** Called for every request received (the CLI logs them). */
  onRequest?: (request: RecordedRequest) => void;
  private readonly hanging = new Set<ServerResponse>();
  private sent = 0;
  /** Messages the simulator accepted, with the wamid it gave each. */
  readonly accepted: Array<{ wamid: string; message: Record<string, unknown> }> = [];
  private uploads = 0;
  private createdTemplates = 0;
  /** Each business account's template catalogue, from SIMULATED_TEMPLATES when first read. */
  private readonly catalogues = new Map<string, SimulatedTemplate[]>();
  private server: Server;
  url: string;
  /** Part of every wamid and media id this simulator gives ('' when sequential). */
  readonly runId: string;

  private constructor(options: SimulatorOptions) {
    this.runId = options.sequentialIds ? '' : newRunId();
  }

  /**
   * Listens on 127.0.0.1 (`port` 0: any free port). Each start's wamids and
   * media ids are its own, so a restarted simulator never repeats an id the
   * service already stored.
   */
  static async start(port = 0, options: SimulatorOptions = {}): Promise<PlatformSimulator> {
    const platform = new PlatformSimulator(options);
    platform.server = createServer((req, res) => {
      // A client that gives up mid-upload (a body over its limit) is normal here.
      platform.handle(req, res).catch(() => res.destroy());
    });
    platform.server.listen(port, '127.0.0.1');
    await once(platform.server, 'listening');
    platform.url = `http://127.0.0.1:${(platform.server.address() as AddressInfo).port}`;
    return platform;
  }

  /** Scripts answers for matching calls: each answer is used once, the last one repeats. */
  on(method: string, path: RegExp, ...answers: Array<FakeAnswer | Handler>): void {
    this.routes.unshift({
      method,
      path,
      answers: answers.map((answer) => (typeof answer === 'function' ? answer : () => answer)),
      sticky: true,
    });
  }

  /**
   * The account's catalogue, as the platform would list it (a live array:
   * tests may change it). Template ids are the platform's, unique across
   * accounts: each account's carry its own digits.
   */
  templates(channelAccountId: string): SimulatedTemplate[] {
    let catalogue = this.catalogues.get(channelAccountId);
    if (!catalogue) {
      const digits = channelAccountId.replace(/\D/g, '').slice(-6).padStart(6, '0');
      catalogue = structuredClone(SIMULATED_TEMPLATES).map((template) => ({
        ...template,
        id: `${template.id.slice(0, 3)}${digits}${template.id.slice(-6)}`,
      }));
      this.catalogues.set(channelAccountId, catalogue);
    }
    return catalogue;
  }

  reset(): void {
    this.catalogues.clear();
    this.routes.length = 0;
    this.requests.length = 0;
    this.accepted.length = 0;
    this.releaseHanging();
  }

  /** The message objects posted to /{phone_number_id}/messages, in order. */
  sentMessages(): Array<Record<string, unknown>> {
    return this.callsTo(/\/messages$/).map((request) => request.body as Record<string, unknown>);
  }

  callsTo(path: RegExp): RecordedRequest[] {
    return this.requests.filter((request) => path.test(request.path));
  }

  async stop(): Promise<void> {
    this.releaseHanging();
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close');
  }

  private releaseHanging(): void {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = Date.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://platform');
    // JSON bodies parsed; anything else (multipart uploads) kept byte for byte as latin1 text.
    let body: unknown;
    if (bytes.length > 0) {
      try {
        body = JSON.parse(bytes.toString('utf8'));
      } catch {
        body = bytes.toString('latin1');
      }
    }
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
      at,
    };
    this.requests.push(request);
    this.onRequest?.(request);
    const answer = this.answer(request);
    if (answer.hang) {
      this.hanging.add(res);
      return;
    }
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    await answer.release?.catch(() => undefined);
    res.writeHead(answer.status ?? 200, {
      'content-type': 'application/json',
      ...(answer.headers ?? {}),
    });
    res.end(answer.raw ? (answer.body as string) : JSON.stringify(answer.body ?? {}));
  }

  private answer(request: RecordedRequest): FakeAnswer {
    const route = this.routes.find(
      (candidate) => candidate.method === request.method && candidate.path.test(request.path),
    );
    if (route) {
      const handler = route.answers.length > 1 ? route.answers.shift()! : route.answers[0];
      return handler(request) ?? this.defaultAnswer(request);
    }
    return this.defaultAnswer(request);
  }

  /** What the real platform answers: a valid token gets data, any other gets code 190. */
  private defaultAnswer(request: RecordedRequest): FakeAnswer {
    if (request.path === '/' || request.path === '') return { status: 400, body: {} };
    if (request.headers.authorization !== `Bearer ${VALID_TOKEN}`) {
      return platformError(190, 'Invalid OAuth access token', 401);
    }
    const [, version, id, action] = request.path.split('/');
    if (request.method === 'GET' && version === 'files') {
      return { body: MEDIA_CONTENT, headers: { 'content-type': 'image/jpeg' }, raw: true };
    }
    if (request.method === 'GET' && !action && id.startsWith('media-')) {
      return {
        body: {
          id,
          url: `${this.url}/files/${id}`,
          mime_type: 'image/jpeg',
          file_size: MEDIA_CONTENT.length,
        },
      };
    }
    if (request.method === 'GET' && !action) return { body: { id, ...NUMBER_DETAILS } };
    if (request.method === 'POST' && action === 'media') {
      const n = ++this.uploads;
      return { body: { id: this.runId ? `media-${this.runId}-${n}` : `media-${n}` } };
    }
    if (request.method === 'GET' && action === 'phone_numbers') {
      return {
        body: {
          data: [
            { id: '106540352242922', code_verification_status: 'VERIFIED', ...NUMBER_DETAILS },
          ],
        },
      };
    }
    if (request.method === 'POST' && (action === 'messages' || action === 'marketing_messages')) {
      const message = (request.body ?? {}) as Record<string, unknown>;
      const wamid = `wamid.fake${this.runId}${++this.sent}`;
      if (message.type) this.accepted.push({ wamid, message });
      const contact =
        typeof message.recipient === 'string'
          ? { input: message.recipient, user_id: message.recipient }
          : { input: message.to, wa_id: message.to };
      return {
        body: { messaging_product: 'messenger', contacts: [contact], messages: [{ id: wamid }] },
      };
    }
    if (action === 'message_templates') return this.templateAnswer(request, id);
    if (request.method === 'POST' && ['register', 'request_code', 'verify_code'].includes(action)) {
      return { body: { success: true } };
    }
    return platformError(100, 'Unsupported request', 400);
  }

  /** GET (paged by `limit` and `after`, filtered by `name`), POST and DELETE of a catalogue. */
  private templateAnswer(request: RecordedRequest, account: string): FakeAnswer {
    const catalogue = this.templates(account);
    if (request.method === 'GET') {
      const listed = request.query.name
        ? catalogue.filter((template) => template.name === request.query.name)
        : catalogue;
      const limit = Math.max(1, Math.min(Number(request.query.limit ?? 25) || 25, 1000));
      const offset = request.query.after
        ? Number(Buffer.from(request.query.after, 'base64url').toString('utf8')) || 0
        : 0;
      const data = listed.slice(offset, offset + limit);
      const cursor = (at: number) => Buffer.from(String(at)).toString('base64url');
      const more = offset + limit < listed.length;
      return {
        body: {
          data,
          paging: {
            cursors: { before: cursor(offset), after: cursor(offset + data.length) },
            ...(more
              ? {
                  next: `${this.url}${request.path}?limit=${limit}&after=${cursor(offset + data.length)}`,
                }
              : {}),
          },
        },
      };
    }
    if (request.method === 'POST') {
      const draft = (request.body ?? {}) as Record<string, unknown>;
      const components = Array.isArray(draft.components)
        ? (draft.components as Array<Record<string, unknown>>)
        : [];
      if (
        typeof draft.name !== 'string' ||
        !TEMPLATE_NAME.test(draft.name) ||
        typeof draft.language !== 'string' ||
        !TEMPLATE_CATEGORIES.has(String(draft.category)) ||
        !components.some((component) => String(component.type).toUpperCase() === 'BODY')
      ) {
        return platformError(100, 'Invalid parameter');
      }
      if (catalogue.some((t) => t.name === draft.name && t.language === draft.language)) {
        return platformError(100, 'Content in this language already exists');
      }
      const template: SimulatedTemplate = {
        id: `890000000${String(++this.createdTemplates).padStart(6, '0')}`,
        name: draft.name,
        language: draft.language,
        status: 'PENDING',
        category: String(draft.category),
        ...(typeof draft.parameter_format === 'string'
          ? { parameter_format: draft.parameter_format }
          : {}),
        components,
      };
      catalogue.push(template);
      return { body: { id: template.id, status: template.status, category: template.category } };
    }
    if (request.method === 'DELETE') {
      const doomed = catalogue.filter(
        (template) =>
          template.name === request.query.name &&
          (!request.query.hsm_id || template.id === request.query.hsm_id),
      );
      if (doomed.length === 0) return platformError(100, 'Template not found', 404);
      for (const template of doomed) catalogue.splice(catalogue.indexOf(template), 1);
      return { body: { success: true } };
    }
    return platformError(100, 'Unsupported request', 400);
  }
}

/** What the service's webhook is sent: the platform's envelope, signed with the app secret. */
export interface WebhookTarget {
  url: string;
  appSecret: string;
  phoneNumberId: string;
  displayPhoneNumber?: string;
  channelAccountId?: string;
}

let simulatedMessages = 0;

/** The webhook fields whose value names its number (metadata): the others name the account. */
const NUMBER_FIELDS = new Set([
  'messages',
  'user_preferences',
  'smb_message_echoes',
  'history',
  'smb_app_state_sync',
]);

/** The platform's webhook envelope for one change (`messages` or a template event) of the target's number. */
export function envelope(
  target: Pick<WebhookTarget, 'phoneNumberId' | 'displayPhoneNumber' | 'channelAccountId'>,
  field: string,
  value: Record<string, unknown>,
  time?: number,
) {
  return {
    object: 'messenger_business_account',
    entry: [
      {
        id: target.channelAccountId ?? '102290129340398',
        ...(time ? { time } : {}),
        changes: [
          {
            field,
            value: NUMBER_FIELDS.has(field)
              ? {
                  messaging_product: 'messenger',
                  metadata: {
                    display_phone_number: target.displayPhoneNumber ?? '15550783881',
                    phone_number_id: target.phoneNumberId,
                  },
                  ...value,
                }
              : value,
          },
        ],
      },
    ],
  };
}

/**
 * The `X-Hub-Signature-256` header the platform puts on a delivery: HMAC-SHA256
 * of the raw body with the app secret. Everything that sends signed deliveries
 * (the simulator, the tests, the bench) signs with this.
 */
export function webhookSignature(body: string, appSecret: string): string {
  return `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`;
}

/** POSTs a signed delivery to the service's webhook; returns the HTTP status. */
export async function deliverSigned(target: WebhookTarget, payload: unknown): Promise<number> {
  const body = JSON.stringify(payload);
  const response = await fetch(target.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': webhookSignature(body, target.appSecret),
    },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * Who writes: a number (`waId`), a business-scoped user id (`userId`), or
 * both. A user who hides the number behind a username has only the user id:
 * the delivery then has no `from` and no `wa_id`, as the platform sends it.
 */
export interface SimulatedUser {
  waId?: string;
  userId?: string;
  username?: string;
  name?: string;
}

/** An inbound text message from a user; returns its wamid and the HTTP status. */
export async function simulateMessage(
  target: WebhookTarget,
  user: SimulatedUser,
  text: string,
): Promise<{ wamid: string; status: number }> {
  const wamid = `wamid.sim${Date.now()}${++simulatedMessages}`;
  const status = await deliverSigned(
    target,
    envelope(target, 'messages', {
      contacts: [
        {
          profile: {
            name: user.name ?? 'Simulated User',
            ...(user.username ? { username: user.username } : {}),
          },
          ...(user.waId ? { wa_id: user.waId } : {}),
          ...(user.userId ? { user_id: user.userId } : {}),
        },
      ],
      messages: [
        {
          ...(user.waId ? { from: user.waId } : {}),
          ...(user.userId ? { from_user_id: user.userId } : {}),
          id: wamid,
          timestamp: String(Math.floor(Date.now() / 1000)),
          type: 'text',
          text: { body: text },
        },
      ],
    }),
  );
  return { wamid, status };
}

/** A delivery status for a message the service sent, to a number or to a user id. */
export function simulateStatus(
  target: WebhookTarget,
  wamid: string,
  status: 'sent' | 'delivered' | 'read' | 'failed',
  recipient: SimulatedUser,
): Promise<number> {
  return deliverSigned(
    target,
    envelope(target, 'messages', {
      statuses: [
        {
          id: wamid,
          status,
          timestamp: String(Math.floor(Date.now() / 1000)),
          ...(recipient.waId ? { recipient_id: recipient.waId } : {}),
          ...(recipient.userId ? { recipient_user_id: recipient.userId } : {}),
        },
      ],
    }),
  );
}

/** A template status update. */
export function simulateTemplateEvent(
  target: WebhookTarget,
  event: string,
  templateId: string,
  templateName: string,
  language = 'pt_BR',
): Promise<number> {
  return deliverSigned(
    target,
    envelope(
      target,
      'message_template_status_update',
      {
        event,
        message_template_id: Number(templateId),
        message_template_name: templateName,
        message_template_language: language,
        reason: null,
      },
      Math.floor(Date.now() / 1000),
    ),
  );
}

/** A template quality change (`message_template_quality_update`). */
export function simulateTemplateQuality(
  target: WebhookTarget,
  templateId: string,
  templateName: string,
  quality: { previous: string; next: string },
  language = 'pt_BR',
): Promise<number> {
  return deliverSigned(
    target,
    envelope(
      target,
      'message_template_quality_update',
      {
        previous_quality_score: quality.previous,
        new_quality_score: quality.next,
        message_template_id: Number(templateId),
        message_template_name: templateName,
        message_template_language: language,
      },
      Math.floor(Date.now() / 1000),
    ),
  );
}

/**
 * A template re-categorised (`template_category_update`): announced a day
 * ahead (`correct_category`), or made (`new_category`).
 */
export function simulateTemplateCategory(
  target: WebhookTarget,
  templateId: string,
  templateName: string,
  category: { previous: string; next: string; announced?: boolean },
  language = 'pt_BR',
): Promise<number> {
  return deliverSigned(
    target,
    envelope(
      target,
      'template_category_update',
      {
        message_template_id: Number(templateId),
        message_template_name: templateName,
        message_template_language: language,
        previous_category: category.previous,
        // A notice also names the category the template keeps until the change.
        ...(category.announced
          ? { correct_category: category.next, new_category: category.previous }
          : { new_category: category.next }),
      },
      Math.floor(Date.now() / 1000),
    ),
  );
}

/** The platform raised a number's throughput (80 → 1,000 a second); it names the display number only. */
export function simulateThroughputUpgrade(
  target: WebhookTarget,
  displayPhoneNumber: string,
): Promise<number> {
  return deliverSigned(
    target,
    envelope(target, 'phone_number_quality_update', {
      display_phone_number: displayPhoneNumber,
      event: 'THROUGHPUT_UPGRADE',
      current_limit: 'TIER_UNLIMITED',
      max_daily_conversations_per_business: 'TIER_UNLIMITED',
    }),
  );
}

/** The business portfolio's limits changed (`business_capability_update`, on the account's entry). */
export function simulateBusinessCapability(
  target: WebhookTarget,
  maxDailyConversations: number | string,
): Promise<number> {
  return deliverSigned(
    target,
    envelope(target, 'business_capability_update', {
      max_daily_conversations_per_business: maxDailyConversations,
      max_phone_numbers_per_waba: 25,
    }),
  );
}

/**
 * A customer a coexistence webhook names: a number, or (`{ userId }`) a
 * business-scoped user id alone, for a customer who hides the number.
 */
export type SimulatedCustomer = string | { userId: string };

/** A customer stops (`stop`) or resumes (`resume`) marketing messages in the app (`user_preferences`). */
export function simulateUserPreference(
  target: WebhookTarget,
  customer: SimulatedCustomer,
  value: 'stop' | 'resume',
  timestamp = Math.floor(Date.now() / 1000),
  /** The customer's profile name, as the delivery's `contacts` gives it. */
  name = 'Cliente',
): Promise<number> {
  const key = typeof customer === 'string' ? { wa_id: customer } : { user_id: customer.userId };
  return deliverSigned(
    target,
    envelope(target, 'user_preferences', {
      contacts: [{ profile: { name }, ...key }],
      user_preferences: [
        {
          ...key,
          detail: `User requested to ${value} marketing messages`,
          category: 'marketing_messages',
          value,
          timestamp,
        },
      ],
    }),
  );
}

/** A message the platform cannot show (`unsupported`, error 131060): often a click-to-chat ad's first. */
export function simulateUnavailableMessage(target: WebhookTarget, waId: string): Promise<number> {
  return deliverSigned(
    target,
    envelope(target, 'messages', {
      contacts: [{ profile: { name: 'Cliente' }, wa_id: waId }],
      messages: [
        {
          from: waId,
          id: `wamid.unavailable-${randomUUID()}`,
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
        },
      ],
    }),
  );
}

/**
 * What the owner sent from the platform's phone app to a customer
 * (`smb_message_echoes`), at `timestamp` (epoch seconds; now by default).
 */
export function simulateEcho(
  target: WebhookTarget,
  to: SimulatedCustomer,
  text: string,
  wamid = `wamid.echo-${randomUUID()}`,
  timestamp = Math.floor(Date.now() / 1000),
): Promise<number> {
  return deliverSigned(
    target,
    envelope(target, 'smb_message_echoes', {
      message_echoes: [
        {
          from: (target.displayPhoneNumber ?? '15550783881').replace(/\D/g, ''),
          ...(typeof to === 'string' ? { to } : { to_user_id: to.userId }),
          id: wamid,
          timestamp: String(timestamp),
          type: 'text',
          text: { body: text },
        },
      ],
    }),
  );
}

/** The owner's phone address book changed (`smb_app_state_sync`): numbers added (with a name) or removed. */
export function simulatePhoneContacts(
  target: WebhookTarget,
  entries: Array<{
    phoneNumber: string;
    fullName?: string;
    action?: 'add' | 'remove';
    /** The entry's time (epoch seconds; now by default). */
    timestamp?: number;
  }>,
): Promise<number> {
  return deliverSigned(
    target,
    envelope(target, 'smb_app_state_sync', {
      state_sync: entries.map((entry) => ({
        type: 'contact',
        contact: {
          full_name: entry.fullName,
          first_name: entry.fullName?.split(' ')[0],
          phone_number: entry.phoneNumber,
        },
        action: entry.action ?? 'add',
        metadata: { timestamp: String(entry.timestamp ?? Math.floor(Date.now() / 1000)) },
      })),
    }),
  );
}

/** One message of a history thread: from the customer, or from the business (`fromBusiness`). */
export interface SimulatedHistoryMessage {
  id: string;
  text: string;
  timestamp: number;
  fromBusiness?: boolean;
  status?: string;
}

/** A chunk of past conversations (`history`) the platform sends after a number shared with the phone app is onboarded. */
export function simulateHistory(
  target: WebhookTarget,
  chunk: {
    phase: number;
    chunkOrder: number;
    progress: number;
    /** A thread is a customer's number, or their user id alone (`userId`). */
    threads: Array<
      ({ waId: string; userId?: undefined } | { waId?: undefined; userId: string }) & {
        messages: SimulatedHistoryMessage[];
      }
    >;
  },
): Promise<number> {
  const business = (target.displayPhoneNumber ?? '15550783881').replace(/\D/g, '');
  return deliverSigned(
    target,
    envelope(target, 'history', {
      history: [
        {
          metadata: {
            phase: chunk.phase,
            chunk_order: chunk.chunkOrder,
            progress: chunk.progress,
          },
          threads: chunk.threads.map((thread) => ({
            id: thread.waId ?? thread.userId,
            messages: thread.messages.map((message) => ({
              ...(message.fromBusiness
                ? { from: business }
                : thread.waId !== undefined
                  ? { from: thread.waId }
                  : { from_user_id: thread.userId }),
              id: message.id,
              timestamp: String(message.timestamp),
              type: 'text',
              text: { body: message.text },
              history_context: { status: message.status ?? 'READ' },
            })),
          })),
        },
      ],
    }),
  );
}
