import { computed, signal } from '@preact/signals';
import { api, must, sessionEnded, type Schemas } from './api/client';
import { drafts } from './inbox/composer';
import { contacts, instanceId, messages, openKey, waitingContacts } from './inbox/state';

export type Session = Schemas['SessionDto'];

/** Who is logged in (null: nobody; undefined: not known yet). */
export const session = signal<Session | null | undefined>(undefined);
/** Whether an admin is logged in (the admin pages are theirs). */
export const isAdmin = computed(() => session.value?.role === 'admin');

/**
 * Reads the session the cookie carries. At start, none shows the login page;
 * later, the page stays and a 401 shows the login over it (sessionEnded).
 */
export async function loadSession(): Promise<void> {
  const answer = await api.GET('/admin/auth/session');
  if (answer.data) {
    session.value = answer.data;
    sessionEnded.value = false;
  } else if (session.value === undefined) {
    session.value = null;
  }
}

/** Logs in: the service sets the session cookie (httpOnly: this code never sees the token). */
export async function logIn(username: string, password: string): Promise<void> {
  session.value = must(await api.POST('/admin/auth/session', { body: { username, password } }));
  sessionEnded.value = false;
}

export async function logOut(): Promise<void> {
  await api.DELETE('/admin/auth/session');
  session.value = null;
  // Nothing of this person's inbox stays for whoever logs in next in this tab.
  forget();
}

function forget(): void {
  drafts.value = {};
  contacts.value = [];
  waitingContacts.value = [];
  messages.value = [];
  openKey.value = null;
  instanceId.value = null;
}
