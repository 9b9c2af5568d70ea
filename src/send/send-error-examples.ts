import { invalidRequest, type DocumentedError } from '../common/api-errors.js';
import { AppException } from '../common/app.exception.js';
import { PlatformError } from '../platform/platform.errors.js';
import {
  platformRejected,
  PLATFORM_INVALID_TOKEN,
  PLATFORM_SEND_TIMED_OUT,
  PLATFORM_THROTTLED,
  PLATFORM_UNAVAILABLE,
} from '../platform/platform-error-examples.js';
import { SEND_DTO_CLASSES, type SendKind } from './send-kinds.js';

const to = '5511999990000';
const wamid = 'wamid.HBgLNTUxMTk5OTk5MDAwMBUCABIYFjNFQjA';

/** Per kind: a request its validation refuses, and why (the 400 examples of /send/{kind}). */
const INVALID_REQUESTS: Record<SendKind, Array<{ summary: string; body: object }>> = {
  text: [
    {
      summary: 'a formatted number and an empty body',
      body: { to: '+55 11 99999-0000', body: '' },
    },
  ],
  image: [
    {
      summary: 'both a media id and a link',
      body: { to, media: { id: '1013859600285441', link: 'https://example.com/product.jpg' } },
    },
  ],
  document: [
    {
      summary: 'a file name without an extension',
      body: { to, media: { id: '1013859600285441' }, filename: 'nota-fiscal' },
    },
  ],
  audio: [
    {
      summary: 'a link that is not http(s)',
      body: { to, media: { link: 'ftp://example.com/a.ogg' } },
    },
  ],
  video: [
    {
      summary: 'a recipient that is not a user id',
      body: { recipient: to, media: { link: 'https://example.com/tutorial.mp4' } },
    },
  ],
  sticker: [{ summary: 'no media', body: { to } }],
  location: [
    { summary: 'a latitude out of range', body: { to, latitude: -123.5, longitude: -46.6559 } },
  ],
  contacts: [
    {
      summary: 'an invalid email',
      body: {
        to,
        contacts: [{ name: { formatted_name: 'Maria Silva' }, emails: [{ email: 'maria' }] }],
      },
    },
  ],
  reaction: [
    {
      summary: 'a user id in to',
      body: { to: 'BR.1234567890ABCDEF', message_id: wamid, emoji: '👍' },
    },
  ],
  template: [
    {
      summary: 'a language that is not a locale',
      body: { to, template_name: 'order_update', language: 'pt-BR' },
    },
  ],
  interactive: [
    {
      summary: 'four reply buttons',
      body: {
        to,
        type: 'buttons',
        body: 'Confirma a entrega?',
        buttons: ['sim', 'nao', 'talvez', 'depois'].map((id) => ({
          type: 'reply',
          reply: { id, title: id },
        })),
      },
    },
    {
      summary: 'a list with a cta_url field and no sections',
      body: { to, type: 'list', body: 'Escolha um sabor', url: 'https://example.com/menu' },
    },
  ],
};

/** Per kind: what the platform says when it refuses such a message. */
const PLATFORM_REFUSALS: Record<SendKind, DocumentedError[]> = {
  text: [platformRejected(131026, '(#131026) Message Undeliverable.')],
  image: [platformRejected(131053, '(#131053) Media upload error')],
  document: [platformRejected(131053, '(#131053) Media upload error')],
  audio: [platformRejected(131053, '(#131053) Media upload error')],
  video: [platformRejected(131053, '(#131053) Media upload error')],
  sticker: [platformRejected(131053, '(#131053) Media upload error')],
  location: [platformRejected(131009, '(#131009) Parameter value is not valid')],
  contacts: [platformRejected(131009, '(#131009) Parameter value is not valid')],
  reaction: [platformRejected(131009, '(#131009) Parameter value is not valid')],
  template: [
    {
      error: new AppException(
        'template_not_found',
        'Template order_update has no en_US version (it has pt_BR)',
        [{ name: 'order_update', language: 'en_US', languages: ['pt_BR'] }],
      ),
      summary: 'the catalogue has the template in other languages only',
    },
    {
      error: new AppException(
        'template_not_approved',
        'Template order_update (pt_BR) is paused, not approved: it cannot be sent',
        [{ status: 'PAUSED', reason: null }],
      ),
      summary: 'the template is paused, disabled, pending or rejected',
    },
    {
      error: new AppException(
        'template_parameter_mismatch',
        "Template order_update (pt_BR): the number of parameters does not match the template's variables",
        [
          {
            code: 132000,
            message: '(#132000) Number of parameters does not match',
            fbtrace_id: 'AbCdEf',
          },
        ],
      ),
      summary: "the platform's 132000 (a template the catalogue did not know yet)",
    },
    platformRejected(
      131062,
      '(#131062) Business-scoped user id not supported for this message type',
      'a template that cannot go to a user id',
    ),
  ],
  interactive: [platformRejected(131009, '(#131009) Parameter value is not valid')],
};

const WINDOW_CLOSED: DocumentedError = {
  error: new AppException(
    'service_window_closed',
    `${to} has not written in the last 24 hours: only a template (POST /send/template) can be sent`,
  ),
  summary: 'the contact has not written in 24 hours',
};

const PACED: DocumentedError = {
  error: new PlatformError({
    kind: 'rate_limited',
    platformMessage: 'sends to this number are queued beyond the pacing limit',
    retryAfterSeconds: 6,
  }),
  summary: 'the number is at PLATFORM_SEND_RATE and the wait is over 5 s',
};

/** The errors POST /send/{kind} documents beside those of every API-key route. */
export function sendErrors(kind: SendKind): DocumentedError[] {
  return [
    ...INVALID_REQUESTS[kind].map(({ summary, body }) =>
      invalidRequest(SEND_DTO_CLASSES[kind], body, summary),
    ),
    ...(kind === 'template' ? [] : [WINDOW_CLOSED]),
    ...PLATFORM_REFUSALS[kind],
    PLATFORM_INVALID_TOKEN,
    PLATFORM_THROTTLED,
    PACED,
    PLATFORM_SEND_TIMED_OUT,
    PLATFORM_UNAVAILABLE,
  ];
}
