import { signal } from '@preact/signals';
import { useRef, useState } from 'preact/hooks';
import { api, must } from '../api/client';
import { t } from '../i18n';
import { preview } from './message';
import { instanceId, keyOf, messages, type Contact } from './state';

/** The first words of the message a reply quotes, when it is loaded. */
function quotedText(wamid: string): string {
  const quoted = messages.value.find((m) => m.wamid === wamid);
  return quoted ? preview(quoted).slice(0, 80) : '';
}

/**
 * What is being written, per contact: kept when the session ends and the
 * login shows, and when another conversation is opened and this one again.
 * In memory only: it never outlives the tab.
 */
export const drafts = signal<Record<string, string>>({});
/** The message being replied to, per contact. */
export const replyingTo = signal<Record<string, string | undefined>>({});

const KIND_OF: Array<[RegExp, 'image' | 'video' | 'audio' | 'sticker' | 'document']> = [
  [/^image\/webp$/, 'sticker'],
  [/^image\//, 'image'],
  [/^video\//, 'video'],
  [/^audio\//, 'audio'],
];

/** A send to the open contact; a person's send takes the conversation over (the service pauses the agent). */
export function Composer({ contact }: { contact: Contact }) {
  // Per instance and contact: the same number may be a contact of two instances.
  const key = `${instanceId.value}:${keyOf(contact)}`;
  const to = contact.wa_id ? { to: contact.wa_id } : { recipient: contact.user_id! };
  const text = drafts.value[key] ?? '';
  const reply = replyingTo.value[key];
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const file = useRef<HTMLInputElement>(null);
  const closed = !contact.window.open;
  const optedOut = contact.opted_out_at !== null;
  const blocked = closed || optedOut;

  const setText = (value: string) => (drafts.value = { ...drafts.value, [key]: value });
  const done = () => {
    setText('');
    replyingTo.value = { ...replyingTo.value, [key]: undefined };
  };
  const attempt = async (send: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await send();
      done();
    } catch (failure) {
      setError(t('composer.failed', { message: (failure as Error).message }));
    } finally {
      setBusy(false);
    }
  };
  const sendText = () =>
    attempt(async () =>
      must(
        await api.POST('/send/text', {
          body: {
            instance_id: instanceId.value!,
            ...to,
            body: text,
            ...(reply ? { reply_to: reply } : {}),
          },
        }),
      ),
    );
  const sendFile = (chosen: File) =>
    attempt(async () => {
      const instance_id = instanceId.value!;
      const { id } = must(
        await api.POST('/media/upload', {
          params: { query: { instance_id } },
          // The file goes as the multipart body's `file`; the query names the instance.
          body: { file: chosen.name },
          bodySerializer: () => {
            const form = new FormData();
            form.append('file', chosen, chosen.name);
            return form;
          },
        }),
      );
      const kind = KIND_OF.find(([pattern]) => pattern.test(chosen.type))?.[1] ?? 'document';
      const base = { instance_id, ...to, media: { id } };
      const caption = text ? { caption: text } : {};
      switch (kind) {
        case 'image':
          return must(await api.POST('/send/image', { body: { ...base, ...caption } }));
        case 'video':
          return must(await api.POST('/send/video', { body: { ...base, ...caption } }));
        case 'audio':
          return must(await api.POST('/send/audio', { body: base }));
        case 'sticker':
          return must(await api.POST('/send/sticker', { body: base }));
        default:
          return must(
            await api.POST('/send/document', {
              body: { ...base, ...caption, filename: chosen.name },
            }),
          );
      }
    });

  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault();
        // Enter pressed twice sends once: the second waits for the first.
        if (text.trim() && !blocked && !busy) void sendText();
      }}
    >
      {closed && !optedOut && <p class="notice">{t('composer.windowClosed')}</p>}
      {optedOut && <p class="notice">{t('composer.optedOut')}</p>}
      {reply && (
        <p class="replying">
          {t('composer.replyingTo')}
          {quotedText(reply) && <q>{quotedText(reply)}</q>}{' '}
          <button
            type="button"
            class="link"
            onClick={() => (replyingTo.value = { ...replyingTo.value, [key]: undefined })}
          >
            {t('composer.cancelReply')}
          </button>
        </p>
      )}
      {!blocked && !contact.handoff.active && <p class="hint">{t('composer.takesOver')}</p>}
      <div class="row">
        <label class="visually-hidden" for="composer-text">
          {t('composer.label')}
        </label>
        <textarea
          id="composer-text"
          rows={2}
          value={text}
          disabled={blocked}
          placeholder={t('composer.placeholder')}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              e.currentTarget.form?.requestSubmit();
            }
          }}
        />
        <input
          ref={file}
          type="file"
          class="visually-hidden"
          id="composer-file"
          aria-label={t('composer.attach')}
          tabIndex={-1}
          disabled={blocked}
          onChange={(e) => {
            const chosen = e.currentTarget.files?.[0];
            e.currentTarget.value = '';
            if (chosen) void sendFile(chosen);
          }}
        />
        <button
          type="button"
          disabled={blocked || busy}
          aria-label={t('composer.attach')}
          title={t('composer.attach')}
          onClick={() => file.current?.click()}
        >
          📎
        </button>
        <button type="submit" disabled={blocked || busy || !text.trim()}>
          {busy ? t('composer.sending') : t('composer.send')}
        </button>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
