import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, must } from '../api/client';
import { t, when } from '../i18n';
import { Composer, replyingTo } from './composer';
import { MessageItem } from './message';
import { isAdmin } from '../session';
import {
  instanceId,
  keyOf,
  loadOlder,
  loading,
  messages,
  olderCursor,
  openConversation,
  upsertContact,
  type Contact,
} from './state';

/** The handoff bar: who answers, until when, and Take over / Hand back. */
function Handoff({ contact }: { contact: Contact }) {
  const [includePending, setIncludePending] = useState(false);
  const [busy, setBusy] = useState(false);
  const key = keyOf(contact);
  const { handoff } = contact;
  const change = async (take: boolean) => {
    setBusy(true);
    try {
      const params = { path: { key } };
      const instance_id = instanceId.value!;
      const changed = take
        ? must(await api.POST('/contacts/{key}/handoff', { params, body: { instance_id } }))
        : must(
            await api.DELETE('/contacts/{key}/handoff', {
              params,
              body: { instance_id, include_pending: includePending },
            }),
          );
      upsertContact(changed);
    } finally {
      setBusy(false);
    }
  };
  const who =
    handoff.by === 'agent'
      ? t('conversation.by.agent')
      : (handoff.account?.display_name ?? (handoff.by === 'api' ? t('conversation.by.api') : null));
  return (
    <div class="handoff" role="status">
      {handoff.active ? (
        <>
          <span>
            {t('conversation.pausedUntil', { time: when(handoff.until) })}
            {who && ` ${t('conversation.pausedBy', { name: who })}`}
          </span>
          {handoff.reason && (
            <span class="muted"> · {t('conversation.reason', { reason: handoff.reason })}</span>
          )}
          <label class="pending">
            <input
              type="checkbox"
              checked={includePending}
              onChange={(e) => setIncludePending(e.currentTarget.checked)}
            />
            {t('conversation.includePending')}
          </label>
          <button type="button" disabled={busy} onClick={() => void change(false)}>
            {t('conversation.handBack')}
          </button>
        </>
      ) : (
        <>
          <span>{t('conversation.agentActive')}</span>
          <button type="button" disabled={busy} onClick={() => void change(true)}>
            {t('conversation.takeOver')}
          </button>
        </>
      )}
    </div>
  );
}

/**
 * Why the agent could not answer, for an admin (the error may name internal
 * addresses: operators and API keys are not given it), and the way to the turn.
 */
function TurnError({ turnId }: { turnId: string }) {
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let shown = true;
    void api
      .GET('/admin/turns/{id}', { params: { path: { id: turnId } } })
      .then((answer) => shown && setError(answer.data?.last_error ?? null));
    return () => {
      shown = false;
    };
  }, [turnId]);
  return (
    <>
      {error && <span class="error-detail"> {error}</span>}{' '}
      <a href={`/console/turns/${turnId}`}>{t('conversation.turnOpen')}</a>
    </>
  );
}

export function Conversation({ contact }: { contact: Contact }) {
  const list = useRef<HTMLOListElement>(null);
  const atBottom = useRef(true);
  const key = keyOf(contact);

  // New messages keep the view at the bottom when it was there; older ones keep the place read.
  useEffect(() => {
    const element = list.current;
    if (element && atBottom.current) element.scrollTop = element.scrollHeight;
  }, [messages.value]);

  return (
    <section class="conversation" aria-labelledby="conversation-title">
      <header>
        <button type="button" class="link back" onClick={() => void openConversation(null)}>
          ← {t('conversation.back')}
        </button>
        <h2 id="conversation-title">{contact.name ?? key}</h2>
        <span class="muted">{contact.name ? key : ''}</span>
        {contact.phone_name && contact.phone_name !== contact.name && (
          <span class="muted">{t('conversation.phoneName', { name: contact.phone_name })}</span>
        )}
        <Handoff contact={contact} />
      </header>
      <ol
        ref={list}
        class="messages"
        tabIndex={0}
        aria-label={contact.name ?? key}
        aria-busy={loading.value}
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
          if (el.scrollTop < 40 && olderCursor.value) void loadOlder();
        }}
      >
        {olderCursor.value && (
          <li class="older">
            <button type="button" class="link" onClick={() => void loadOlder()}>
              {t('conversation.older')}
            </button>
          </li>
        )}
        {messages.value.map((message, i) => (
          <Fragment key={message.wamid}>
            <MessageItem
              message={message}
              onReply={() => {
                replyingTo.value = { ...replyingTo.value, [key]: message.wamid };
                document.getElementById('composer-text')?.focus();
              }}
            />
            {message.turn_status === 'failed' &&
              !messages.value.slice(i + 1).some((later) => later.turn_id === message.turn_id) && (
                <li class="turn-failed">
                  <p role="note">
                    {t('conversation.turnFailed')}
                    {isAdmin.value && message.turn_id && <TurnError turnId={message.turn_id} />}
                  </p>
                </li>
              )}
          </Fragment>
        ))}
      </ol>
      <Composer contact={contact} />
    </section>
  );
}
