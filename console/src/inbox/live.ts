import { sessionEnded } from '../api/client';
import { t } from '../i18n';
import { loadSession } from '../session';
import {
  isWaiting,
  liveState,
  loadContacts,
  openConversation,
  openKey,
  upsertContact,
  upsertMessage,
  waitingContacts,
  keyOf,
  markRead,
  type Contact,
  type Message,
} from './state';

/**
 * Follows an instance's live stream (GET /live). The browser reconnects by
 * itself and sends the last event's id: the service sends what was missed,
 * or `reset`. On every `ready` that did not resume, the list and the open
 * conversation are read again: nothing stored between the read and the
 * stream is missed. Returns a function that stops following.
 */
export function follow(instanceId: string): () => void {
  let source: EventSource | null = null;
  let retry: number | undefined;
  let stopped = false;
  const connect = () => {
    source = new EventSource(`/live?instance_id=${encodeURIComponent(instanceId)}`);
    liveState.value = 'connecting';
    source.addEventListener('ready', (event) => {
      liveState.value = 'live';
      const { resumed } = JSON.parse((event as MessageEvent<string>).data) as {
        resumed: boolean;
      };
      if (!resumed) reread();
    });
    // What was missed cannot be told (the service lost its notifications for a while).
    source.addEventListener('reset', () => reread());
    source.addEventListener('message', (event) => {
      const data = JSON.parse((event as MessageEvent<string>).data) as {
        contact: Contact;
        message: Message;
      };
      changed(data.contact);
      upsertMessage(data.contact, data.message);
      // A customer's message in the conversation on screen is read as it comes.
      const key = keyOf(data.contact);
      if (data.message.direction === 'inbound' && key === openKey.value && !document.hidden) {
        void markRead(key);
      }
    });
    source.addEventListener('contact', (event) => {
      changed((JSON.parse((event as MessageEvent<string>).data) as { contact: Contact }).contact);
    });
    source.addEventListener('ended', () => closed());
    source.onerror = () => {
      liveState.value = 'offline';
      // The browser retries a dropped stream by itself; one the service refused stays closed.
      if (source?.readyState === EventSource.CLOSED) closed();
    };
  };
  /** Refused or ended: the session may be over (the login shows), else try again shortly. */
  const closed = () => {
    source?.close();
    if (stopped) return;
    void loadSession().finally(() => {
      if (!stopped && !sessionEnded.value) retry = window.setTimeout(connect, 2000);
    });
  };
  connect();
  return () => {
    stopped = true;
    window.clearTimeout(retry);
    source?.close();
  };
}

/** Reads the list and the open conversation again. */
function reread(): void {
  void loadContacts();
  if (openKey.value) void openConversation(openKey.value);
}

/** A contact changed: replaced in the list; announced when it starts waiting for a person. */
function changed(contact: Contact): void {
  const wasWaiting = waitingContacts.value.some((c) => keyOf(c) === keyOf(contact));
  upsertContact(contact);
  if (isWaiting(contact) && !wasWaiting) announce(contact);
}

/** A browser notification while the console is in the background (when the person allowed them). */
function announce(contact: Contact): void {
  if (!document.hidden || !('Notification' in window) || Notification.permission !== 'granted') {
    return;
  }
  const name = contact.name ?? keyOf(contact);
  new Notification(t('notify.waiting', { name }), {
    body: contact.handoff.reason ?? '',
    tag: `waiting:${keyOf(contact)}`,
  });
}
