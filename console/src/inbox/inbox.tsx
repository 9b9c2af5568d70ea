import { useEffect } from 'preact/hooks';
import { sessionEnded } from '../api/client';
import { language, t } from '../i18n';
import type { Session } from '../session';
import { ContactList } from './contact-list';
import { Conversation } from './conversation';
import { follow } from './live';
import {
  contacts,
  instanceId,
  liveState,
  markRead,
  openConversation,
  openContact,
  openKey,
  waitingContacts,
  waitingCount,
} from './state';

/** The instance shown: the one chosen before in this tab, else the first the person may see. */
const CHOSEN = 'console.instance';

export function Inbox({ session }: { session: Session }) {
  const instances = session.instances;
  if (!instanceId.value || !instances.some((i) => i.id === instanceId.value)) {
    const stored = sessionStorage.getItem(CHOSEN);
    instanceId.value = instances.find((i) => i.id === stored)?.id ?? instances[0]?.id ?? null;
  }

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

  const choose = (id: string) => {
    // The number shown already: nothing to change (emptying the list would leave it empty).
    if (id === instanceId.value) return;
    sessionStorage.setItem(CHOSEN, id);
    contacts.value = [];
    waitingContacts.value = [];
    void openConversation(null);
    instanceId.value = id;
  };

  return (
    <div class={`inbox${openKey.value ? ' reading' : ''}`}>
      <div class="inbox-bar">
        <label class="visually-hidden" for="instance">
          {t('header.instance')}
        </label>
        <select
          id="instance"
          value={instanceId.value ?? ''}
          onChange={(e) => choose(e.currentTarget.value)}
        >
          {instances.map((instance) => (
            <option key={instance.id} value={instance.id}>
              {instance.name}
              {instance.display_phone_number ? ` · ${instance.display_phone_number}` : ''}
            </option>
          ))}
        </select>
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
