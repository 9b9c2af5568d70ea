import { useEffect } from 'preact/hooks';
import { sessionEnded } from '../api/client';
import { language, t } from '../i18n';
import { InstancePicker, shownInstance } from '../instance';
import type { Session } from '../session';
import { ContactList } from './contact-list';
import { Conversation } from './conversation';
import { follow } from './live';
import { instanceId, liveState, markRead, openContact, openKey, waitingCount } from './state';

export function Inbox({ session }: { session: Session }) {
  shownInstance(session);

  // The live stream of the instance shown (again once a new session began).
  useEffect(() => {
    const id = instanceId.value;
    if (!id || sessionEnded.value) return;
    return follow(id);
  }, [instanceId.value, sessionEnded.value]);

  // Back to the tab with a conversation open: what came meanwhile is read now.
  useEffect(() => {
    const seen = () => {
      if (!document.hidden && openKey.value) void markRead(openKey.value);
    };
    document.addEventListener('visibilitychange', seen);
    return () => document.removeEventListener('visibilitychange', seen);
  }, []);

  useEffect(() => {
    const count = waitingCount.value;
    document.title = count > 0 ? `(${count}) ${t('app.title')}` : t('app.title');
  }, [waitingCount.value, language.value]);

  return (
    <div class={`inbox${openKey.value ? ' reading' : ''}`}>
      <div class="inbox-bar">
        <InstancePicker session={session} hideLabel />
        <span class={`live ${liveState.value}`} role="status">
          {liveState.value === 'offline' ? t('errors.offline') : ''}
        </span>
        {'Notification' in window && Notification.permission === 'default' && (
          <button
            type="button"
            class="link"
            aria-label={t('header.notifications')}
            title={t('header.notifications')}
            onClick={() => void Notification.requestPermission()}
          >
            🔔
          </button>
        )}
      </div>
      <main class="panes" id="content">
        <ContactList />
        {openContact.value ? (
          <Conversation contact={openContact.value} />
        ) : (
          <section class="conversation empty">
            <p class="muted">{t('conversation.none')}</p>
          </section>
        )}
      </main>
    </div>
  );
}
