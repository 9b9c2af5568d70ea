import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import { size, t, when } from '../i18n';
import { formatted } from './format';
import { instanceId, messages, type Message } from './state';

type Content = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const obj = (value: unknown): Content =>
  value && typeof value === 'object' ? (value as Content) : {};

/** A media file through the service, with the session's cookie (the platform's URLs need its token). */
function mediaUrl(id: string): string {
  return `/media/${encodeURIComponent(id)}?instance_id=${encodeURIComponent(instanceId.value ?? '')}`;
}

/**
 * What a message's media is: inbound, the platform's object under its type
 * (`image: { id, caption, filename }`); outbound, the send as it was made
 * (`media: { id | link }`, `caption`, `filename`).
 */
function media(message: Message): {
  id: string;
  src: string | null;
  caption: string;
  filename: string;
} {
  const content = message.content;
  if (message.direction === 'inbound') {
    const part = obj(content[message.type]);
    return {
      id: str(part.id),
      src: part.id ? mediaUrl(str(part.id)) : null,
      caption: str(part.caption),
      filename: str(part.filename),
    };
  }
  const ref = obj(content.media);
  const src = ref.id
    ? mediaUrl(str(ref.id))
    : /^https:\/\//.test(str(ref.link))
      ? str(ref.link)
      : null;
  return { id: str(ref.id), src, caption: str(content.caption), filename: str(content.filename) };
}

/** Each media file's size, asked for once (GET /media/{id}/info: no download). */
const sizes = new Map<string, Promise<number | null>>();

/** A document's size, as the platform tells it (nothing when it does not). */
function FileSize({ id }: { id: string }) {
  const [bytes, setBytes] = useState<number | null>(null);
  useEffect(() => {
    let shown = true;
    let known = sizes.get(id);
    if (!known) {
      known = api
        .GET('/media/{mediaId}/info', {
          params: { path: { mediaId: id }, query: { instance_id: instanceId.value ?? '' } },
        })
        .then(
          (answer) => answer.data?.file_size ?? null,
          () => null,
        );
      sizes.set(id, known);
    }
    void known.then((value) => shown && setBytes(value));
    return () => {
      shown = false;
    };
  }, [id]);
  return bytes === null ? null : <span class="muted"> · {size(bytes)}</span>;
}

/** The text of a message, as the customer or the sender wrote it. */
function text(message: Message): string {
  const content = message.content;
  // An outbound send keeps its request (`body`); a phone app's echo, the platform's message (`text.body`).
  return message.direction === 'inbound' || message.sent_by === 'phone_app'
    ? str(obj(content.text).body)
    : str(content.body);
}

function Body({ message }: { message: Message }): ComponentChildren {
  const content = message.content;
  const caption = (value: string) => value && <p class="caption">{formatted(value)}</p>;
  switch (message.type) {
    case 'text':
      return <p class="text">{formatted(text(message))}</p>;
    case 'image':
    case 'sticker': {
      const { src, caption: words } = media(message);
      return (
        <>
          {src && (
            <img
              class={message.type}
              src={src}
              alt={words || t(`conversation.unsupported`, { type: message.type })}
              loading="lazy"
            />
          )}
          {caption(words)}
        </>
      );
    }
    case 'video': {
      const { src, caption: words } = media(message);
      return (
        <>
          {src && <video controls preload="metadata" src={src} />}
          {caption(words)}
        </>
      );
    }
    case 'audio': {
      const { src } = media(message);
      return src ? <audio controls preload="metadata" src={src} /> : null;
    }
    case 'document': {
      const { id, src, caption: words, filename } = media(message);
      return (
        <>
          <p class="document">
            <span aria-hidden="true">📄 </span>
            {src ? (
              <a href={src} download={filename || true}>
                {filename || t('conversation.document')}
              </a>
            ) : (
              filename || t('conversation.document')
            )}
            {id && <FileSize id={id} />}
          </p>
          {caption(words)}
        </>
      );
    }
    case 'location': {
      const place = message.direction === 'inbound' ? obj(content.location) : content;
      const lat = Number(place.latitude);
      const lng = Number(place.longitude);
      return (
        <p class="location">
          <span aria-hidden="true">📍 </span>
          <strong>{str(place.name) || t('conversation.location')}</strong>
          {str(place.address) && <span> · {str(place.address)}</span>}{' '}
          <a
            href={`https://www.openstreetmap.org/?mlat=${lat}&mlon=${lng}#map=17/${lat}/${lng}`}
            target="_blank"
            rel="noopener noreferrer"
          >
            {t('conversation.openMap')}
          </a>
        </p>
      );
    }
    case 'contacts': {
      const cards = Array.isArray(content.contacts) ? (content.contacts as Content[]) : [];
      return (
        <ul class="cards" aria-label={t('conversation.contactCard')}>
          {cards.map((card, i) => {
            const phones = Array.isArray(card.phones) ? (card.phones as Content[]) : [];
            return (
              <li key={i}>
                <strong>{str(obj(card.name).formatted_name)}</strong>
                {phones.map((p) => (
                  <span key={str(p.phone)}> · {str(p.phone)}</span>
                ))}
              </li>
            );
          })}
        </ul>
      );
    }
    case 'reaction': {
      const reaction = message.direction === 'inbound' ? obj(content.reaction) : content;
      return (
        <p class="reaction">{t('conversation.reactedWith', { emoji: str(reaction.emoji) })}</p>
      );
    }
    case 'interactive': {
      // Inbound: a button or list reply; outbound: what was offered.
      const reply = obj(content.interactive);
      const chosen = obj(reply.button_reply ?? reply.list_reply);
      if (message.direction === 'inbound') return <p class="text">↩ {str(chosen.title)}</p>;
      return <p class="text">{formatted(str(content.body))}</p>;
    }
    case 'button':
      return <p class="text">↩ {str(obj(content.button).text)}</p>;
    case 'template':
      return <p class="text">📋 {str(content.template_name)}</p>;
    case 'unsupported':
      // A lead the platform cannot show (often a click-to-chat ad's first message): say why.
      return (
        <p class="muted">{t('conversation.unavailable', { reason: unavailableReason(content) })}</p>
      );
    default:
      return <p class="muted">{t('conversation.unsupported', { type: message.type })}</p>;
  }
}

/** The platform's reason for a message it cannot show. */
function unavailableReason(content: Content): string {
  const first = obj(Array.isArray(content.errors) ? (content.errors as unknown[])[0] : undefined);
  const reason = str(first.title) || str(first.message);
  return typeof first.code === 'number' ? `${reason} (${first.code})`.trim() : reason;
}

/** A message in a line: its text, or its caption, or what kind it is (a quote, a list's last message). */
export function preview(message: Message): string {
  const content = message.content;
  switch (message.type) {
    case 'text':
      return text(message);
    case 'image':
    case 'video':
    case 'document':
    case 'sticker':
    case 'audio': {
      const { caption, filename } = media(message);
      const icons: Record<string, string> = {
        image: '📷',
        video: '🎥',
        document: '📄',
        sticker: '💟',
        audio: '🎤',
      };
      return `${icons[message.type]} ${caption || filename || t(`conversation.kinds.${message.type}`)}`;
    }
    case 'location': {
      const place = message.direction === 'inbound' ? obj(content.location) : content;
      return `📍 ${str(place.name) || t('conversation.location')}`;
    }
    case 'contacts':
      return `👤 ${t('conversation.contactCard')}`;
    case 'reaction': {
      const reaction = message.direction === 'inbound' ? obj(content.reaction) : content;
      return t('conversation.reactedWith', { emoji: str(reaction.emoji) });
    }
    case 'interactive': {
      const reply = obj(content.interactive);
      const chosen = obj(reply.button_reply ?? reply.list_reply);
      return message.direction === 'inbound' ? `↩ ${str(chosen.title)}` : str(content.body);
    }
    case 'button':
      return `↩ ${str(obj(content.button).text)}`;
    case 'template':
      return `📋 ${str(content.template_name)}`;
    case 'unsupported':
      return t('conversation.unavailable', { reason: unavailableReason(content) });
    default:
      return t('conversation.unsupported', { type: message.type });
  }
}

/**
 * The message a reply quotes: its first line, from those loaded (a click
 * shows it) or as the service gave it with the reply; else that it quotes one.
 */
function Quoted({ message, wamid }: { message: Message; wamid: string }) {
  const loaded = messages.value.find((m) => m.wamid === wamid);
  const given = message.quoted;
  if (!loaded && !given) return <p class="quoted">{t('conversation.inReplyTo')}</p>;
  const direction = loaded?.direction ?? given!.direction;
  const who =
    direction === 'inbound'
      ? t('conversation.customer')
      : loaded
        ? sender(loaded)
        : t(`contacts.sentBy.${given!.sent_by ?? 'api'}`);
  const line = loaded
    ? preview(loaded)
    : (given!.text ??
      t(`conversation.kinds.${given!.type}`, {
        defaultValue: t('conversation.unsupported', { type: given!.type }),
      }));
  if (!loaded) {
    return (
      <p class="quoted">
        <span class="who">{who}</span> {line}
      </p>
    );
  }
  return (
    <button
      type="button"
      class="quoted"
      onClick={() => {
        const target = document.querySelector<HTMLElement>(
          `li.message[data-wamid="${CSS.escape(wamid)}"]`,
        );
        target?.scrollIntoView({ block: 'center' });
        target?.focus();
      }}
    >
      <span class="who">{who}</span> {line}
    </button>
  );
}

/** Who sent an outbound message: the agent, a client's API key, a person by name. */
function sender(message: Message): string | null {
  if (message.direction !== 'outbound') return null;
  if (message.sent_by === 'person') {
    return t('conversation.by.person', { name: message.sent_by_account?.display_name ?? '' });
  }
  if (message.sent_by === 'phone_app') return t('conversation.by.phone');
  return t(`conversation.by.${message.sent_by === 'agent' ? 'agent' : 'api'}`);
}

/** Sent ✓, delivered ✓✓, read ✓✓ (coloured), failed with the platform's reason. */
function Ticks({ message }: { message: Message }) {
  if (message.direction !== 'outbound') return null;
  const label = t(`conversation.status.${message.status}`);
  const marks: Record<string, string> = { sent: '✓', delivered: '✓✓', read: '✓✓', failed: '!' };
  return (
    <span class={`ticks ${message.status}`} title={label} aria-label={label} role="img">
      {marks[message.status] ?? ''}
    </span>
  );
}

function failure(message: Message): string | null {
  if (message.status !== 'failed' || !message.errors?.length) return null;
  const error = message.errors[0] as { title?: string; error_data?: { details?: string } };
  return error.error_data?.details ?? error.title ?? null;
}

export function MessageItem({ message, onReply }: { message: Message; onReply: () => void }) {
  const quoted = str(obj(message.content.context).id) || str(message.content.reply_to);
  const by = sender(message);
  const reason = failure(message);
  return (
    <li
      class={`message ${message.direction} ${message.sent_by ?? ''}`}
      data-wamid={message.wamid}
      tabIndex={-1}
    >
      {by && <span class="by">{by}</span>}
      {quoted && <Quoted message={message} wamid={quoted} />}
      <Body message={message} />
      {reason && (
        <p class="error" role="note">
          {t('conversation.failedBecause', { reason })}
        </p>
      )}
      <span class="meta">
        <time dateTime={message.created_at}>{when(message.created_at)}</time>
        <Ticks message={message} />
        <button
          type="button"
          class="link reply"
          onClick={onReply}
          aria-label={t('conversation.replyTo')}
        >
          ↩
        </button>
      </span>
    </li>
  );
}
