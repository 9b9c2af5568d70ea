import type { PlatformMessage } from '../platform/platform-message.js';
import type { MediaDto } from '../common/media.dto.js';
import type { SendInteractiveDto } from './dto/send-interactive.dto.js';
import type { SendKind, SendRequests } from './send-kinds.js';

export const DEFAULT_TEMPLATE_LANGUAGE = 'pt_BR';
export const DEFAULT_LIST_BUTTON_TEXT = 'Menu';
export const DEFAULT_CTA_DISPLAY_TEXT = 'Acessar';

/** Whom a request names: a number, or a business-scoped user id. */
interface Addressed {
  to?: string;
  recipient?: string;
}

function envelope(r: Addressed, type: string, content: unknown): PlatformMessage {
  return {
    messaging_product: 'messenger',
    recipient_type: 'individual',
    ...(r.to !== undefined ? { to: r.to } : { recipient: r.recipient }),
    type,
    [type]: content,
  };
}

/** The same message to another recipient (a number, or a user id). */
export function readdressed(message: PlatformMessage, r: Addressed): PlatformMessage {
  const { to: _to, recipient: _recipient, ...rest } = message;
  return { ...rest, ...(r.to !== undefined ? { to: r.to } : { recipient: r.recipient }) };
}

function mediaSource(media: MediaDto): { id: string } | { link: string } {
  return media.id !== undefined ? { id: media.id } : { link: media.link! };
}

/** Drops absent optional fields so the body holds only what was asked for. */
function compact<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function interactiveFrame(request: SendInteractiveDto): Record<string, unknown> {
  return compact({
    header: request.header ? { type: 'text', text: request.header.text } : undefined,
    body: { text: request.body },
    footer: request.footer !== undefined ? { text: request.footer } : undefined,
  });
}

const INTERACTIVE_BUILDERS: Record<
  SendInteractiveDto['type'],
  (request: SendInteractiveDto) => Record<string, unknown>
> = {
  buttons: (request) => ({
    type: 'button',
    ...interactiveFrame(request),
    action: {
      buttons: request.buttons!.map((button) => ({
        type: 'reply',
        reply: { id: button.reply.id, title: button.reply.title },
      })),
    },
  }),
  list: (request) => ({
    type: 'list',
    ...interactiveFrame(request),
    action: {
      button: request.button_text ?? DEFAULT_LIST_BUTTON_TEXT,
      sections: request.sections!.map((section) =>
        compact({
          title: section.title,
          rows: section.rows.map((row) =>
            compact({ id: row.id, title: row.title, description: row.description }),
          ),
        }),
      ),
    },
  }),
  cta_url: (request) => ({
    type: 'cta_url',
    ...interactiveFrame(request),
    action: {
      name: 'cta_url',
      parameters: {
        display_text: request.display_text ?? DEFAULT_CTA_DISPLAY_TEXT,
        url: request.url!,
      },
    },
  }),
};

/** One small function per type: our request → the platform's message object. */
export const OUTBOUND_BUILDERS: { [K in SendKind]: (request: SendRequests[K]) => PlatformMessage } =
  {
    text: (r) => ({
      ...envelope(r, 'text', { body: r.body }),
      ...(r.reply_to ? { context: { message_id: r.reply_to } } : {}),
    }),
    image: (r) => envelope(r, 'image', compact({ ...mediaSource(r.media), caption: r.caption })),
    document: (r) =>
      envelope(
        r,
        'document',
        compact({ ...mediaSource(r.media), caption: r.caption, filename: r.filename }),
      ),
    audio: (r) => envelope(r, 'audio', mediaSource(r.media)),
    video: (r) => envelope(r, 'video', compact({ ...mediaSource(r.media), caption: r.caption })),
    sticker: (r) => envelope(r, 'sticker', mediaSource(r.media)),
    location: (r) =>
      envelope(
        r,
        'location',
        compact({ latitude: r.latitude, longitude: r.longitude, name: r.name, address: r.address }),
      ),
    contacts: (r) =>
      envelope(
        r,
        'contacts',
        r.contacts.map((card) =>
          compact({
            name: compact({ ...card.name }),
            phones: card.phones?.map((phone) => compact({ ...phone })),
            emails: card.emails?.map((email) => compact({ ...email })),
          }),
        ),
      ),
    reaction: (r) => envelope(r, 'reaction', { message_id: r.message_id, emoji: r.emoji }),
    template: (r) =>
      envelope(
        r,
        'template',
        compact({
          name: r.template_name,
          language: { code: r.language ?? DEFAULT_TEMPLATE_LANGUAGE },
          components: r.components?.map((component) =>
            compact({
              ...component,
              parameters: component.parameters?.map((parameter) => compact({ ...parameter })),
            }),
          ),
        }),
      ),
    interactive: (r) => envelope(r, 'interactive', INTERACTIVE_BUILDERS[r.type](r)),
  };

export function buildPlatformMessage<K extends SendKind>(
  kind: K,
  request: SendRequests[K],
): PlatformMessage {
  return OUTBOUND_BUILDERS[kind](request);
}
