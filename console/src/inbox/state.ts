import { computed, signal } from '@preact/signals';
import { api, must, type Schemas } from '../api/client';

/** A contact as the list shows it (GET /contacts, the live stream): with unread and last message. */
export type Contact = Schemas['ContactListItemDto'];
/** A contact as other answers give it (a handoff, a conversation page): without them. */
type ContactAnswer = Schemas['ContactDto'] & Partial<Pick<Contact, 'unread' | 'last_message'>>;
export type Message = Schemas['ConversationMessageDto'];
export type Filter = 'all' | 'waiting' | 'agent' | 'open' | 'optedOut';

/** The instance shown. */
export const instanceId = signal<string | null>(null);
export const contacts = signal<Contact[]>([]);
export const contactsCursor = signal<string | null>(null);
export const query = signal('');
export const filter = signal<Filter>('all');
/** The contact whose conversation is open, by key (its number, or its user id). */
export const openKey = signal<string | null>(null);
export const messages = signal<Message[]>([]);
export const olderCursor = signal<string | null>(null);
export const loading = signal(false);
export const liveState = signal<'connecting' | 'live' | 'offline'>('connecting');

const STATUS_RANK: Record<string, number> = { sent: 1, delivered: 2, read: 3, failed: 4 };

/** A contact's key in the API's routes. */
export const keyOf = (contact: Pick<Contact, 'wa_id' | 'user_id'>): string =>
  contact.wa_id ?? contact.user_id ?? '';

/** Handed over by the agent (or asking for a person), and still paused: someone must answer. */
export const isWaiting = (contact: Contact): boolean =>
  contact.handoff.active && contact.handoff.by === 'agent';

/** As the service sorts the list (imported history included). */
const activity = (contact: Contact): string => contact.last_activity_at ?? '';

/** Waiting contacts first (the longest waiting at the top), then the newest activity. */
function ordered(list: Contact[]): Contact[] {
  return [...list].sort((a, b) => {
    const wa = isWaiting(a);
    const wb = isWaiting(b);
    if (wa !== wb) return wa ? -1 : 1;
    if (wa && wb) return (a.handoff.since ?? '') < (b.handoff.since ?? '') ? -1 : 1;
    return activity(a) > activity(b) ? -1 : activity(a) < activity(b) ? 1 : 0;
  });
}

const matches: Record<Filter, (contact: Contact) => boolean> = {
  all: () => true,
  waiting: (c) => c.handoff.active,
  agent: (c) => !c.handoff.active && c.opted_out_at === null,
  open: (c) => c.window.open,
  optedOut: (c) => c.opted_out_at !== null,
};

/** What each filter asks GET /contacts for (the list also filters what comes live). */
const FILTER_STATE = {
  waiting: 'paused',
  agent: 'agent',
  open: 'window_open',
  optedOut: 'opted_out',
} as const;

const listQuery = () => {
  const q = query.value;
  const f = filter.value;
  return { ...(q ? { q } : {}), ...(f === 'all' ? {} : { state: FILTER_STATE[f] }) };
};

/**
 * The contacts waiting for a person, all of them (not only the list's page):
 * the page title counts them, and the list shows them first whatever page
 * it has loaded (unless a search or another filter leaves them out).
 */
export const waitingContacts = signal<Contact[]>([]);

/** The list as shown: filtered, waiting contacts first. */
export const shown = computed(() => {
  const listed = contacts.value;
  const keys = new Set(listed.map(keyOf));
  const everyWaiting = !query.value && (filter.value === 'all' || filter.value === 'waiting');
  const extra = everyWaiting ? waitingContacts.value.filter((c) => !keys.has(keyOf(c))) : [];
  return ordered([...extra, ...listed].filter(matches[filter.value]));
});
export const waitingCount = computed(() => waitingContacts.value.length);
export const openContact = computed(
  () => contacts.value.find((c) => keyOf(c) === openKey.value) ?? null,
);

/**
 * What the live stream brought while a read of the list or of the open
 * conversation was on its way: the read's answer may predate it, so it is
 * applied again on top of the answer (a status never moves back).
 */
const during = {
  list: null as Contact[] | null,
  waiting: null as Contact[] | null,
  conversation: null as Message[] | null,
};

export async function loadContacts(): Promise<void> {
  const id = instanceId.value;
  if (!id) return;
  const caught: Contact[] = [];
  during.list = caught;
  const q = query.value;
  const f = filter.value;
  try {
    const page = must(
      await api.GET('/contacts', {
        params: { query: { instance_id: id, limit: 100, ...listQuery() } },
      }),
    );
    // A newer search or filter, or another instance, was asked for meanwhile: its answer wins.
    if (id !== instanceId.value || q !== query.value || f !== filter.value) return;
    void loadWaiting(id);
    contacts.value = page.data;
    contactsCursor.value = page.next_cursor;
  } finally {
    if (during.list === caught) during.list = null;
  }
  for (const contact of caught) upsertContact(contact);
}

/** The most waiting contacts read (ten pages): beyond, the count stops there. */
const WAITING_PAGES = 10;

/**
 * Reads every contact waiting for a person (the title's count), page by page;
 * what the live stream changed meanwhile is applied again on top.
 */
async function loadWaiting(id: string): Promise<void> {
  const caught: Contact[] = [];
  during.waiting = caught;
  try {
    const found: Contact[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < WAITING_PAGES; page++) {
      const answer = await api.GET('/contacts', {
        params: {
          query: { instance_id: id, limit: 100, state: 'waiting', ...(cursor ? { cursor } : {}) },
        },
      });
      if (!answer.data || id !== instanceId.value) return;
      found.push(...answer.data.data);
      if (!answer.data.next_cursor) break;
      cursor = answer.data.next_cursor;
    }
    waitingContacts.value = found;
  } finally {
    if (during.waiting === caught) during.waiting = null;
  }
  for (const contact of caught) upsertContact(contact);
}

export async function moreContacts(): Promise<void> {
  const id = instanceId.value;
  const cursor = contactsCursor.value;
  const asked = listQuery();
  if (!id || !cursor) return;
  const page = must(
    await api.GET('/contacts', {
      params: {
        query: {
          instance_id: id,
          limit: 100,
          cursor,
          ...asked,
        },
      },
    }),
  );
  // Another instance, search or filter was asked for meanwhile: this page is not its.
  if (
    id !== instanceId.value ||
    cursor !== contactsCursor.value ||
    asked.q !== listQuery().q ||
    asked.state !== listQuery().state
  ) {
    return;
  }
  const known = new Set(contacts.value.map(keyOf));
  contacts.value = [...contacts.value, ...page.data.filter((c) => !known.has(keyOf(c)))];
  contactsCursor.value = page.next_cursor;
}

export async function openConversation(key: string | null): Promise<void> {
  openKey.value = key;
  messages.value = [];
  olderCursor.value = null;
  const id = instanceId.value;
  if (!key || !id) return;
  loading.value = true;
  const caught: Message[] = [];
  during.conversation = caught;
  try {
    const page = must(
      await api.GET('/contacts/{key}/messages', {
        params: { path: { key }, query: { instance_id: id } },
      }),
    );
    if (openKey.value !== key) return;
    messages.value = page.data;
    olderCursor.value = page.older;
    upsertContact(page.contact);
    for (const message of caught) upsertMessage(page.contact, message);
    void markRead(key);
  } finally {
    if (during.conversation === caught) during.conversation = null;
    loading.value = false;
  }
}

export async function loadOlder(): Promise<void> {
  const key = openKey.value;
  const id = instanceId.value;
  if (!key || !id || !olderCursor.value) return;
  const page = must(
    await api.GET('/contacts/{key}/messages', {
      params: { path: { key }, query: { instance_id: id, before: olderCursor.value } },
    }),
  );
  if (openKey.value !== key) return;
  const known = new Set(messages.value.map((m) => m.wamid));
  messages.value = [...page.data.filter((m) => !known.has(m.wamid)), ...messages.value];
  olderCursor.value = page.older;
}

/**
 * A contact as the API or the live stream gave it: replaced, or added. An
 * answer without the list's fields keeps those the list had.
 */
export function upsertContact(answer: ContactAnswer): void {
  const key = keyOf(answer);
  const known = knownContact(key);
  const contact: Contact = { unread: 0, last_message: null, ...known, ...answer };
  during.list?.push(contact);
  during.waiting?.push(contact);
  const others = contacts.value.filter((c) => keyOf(c) !== key);
  contacts.value = [contact, ...others];
  const stillWaiting = waitingContacts.value.filter((c) => keyOf(c) !== key);
  waitingContacts.value = isWaiting(contact) ? [contact, ...stillWaiting] : stillWaiting;
}

/** A contact as the list or the waiting ones have it. */
function knownContact(key: string): Contact | undefined {
  return (
    contacts.value.find((c) => keyOf(c) === key) ??
    waitingContacts.value.find((c) => keyOf(c) === key)
  );
}

/** When each conversation was last marked read, and a mark waiting its turn. */
const reads = new Map<string, { at: number; later?: number }>();
const READ_EVERY_MS = 2000;

/**
 * The open conversation is read (it was opened, or a message came while it
 * shows) up to its newest message: no longer unread, for every person of the
 * number. At most once every 2 s per conversation; one asked for sooner comes then.
 */
export async function markRead(key: string): Promise<void> {
  const id = instanceId.value;
  // Known to have nothing unread: nothing to mark (the live stream says when that changes).
  if (!id || openKey.value !== key || knownContact(key)?.unread === 0) return;
  const last = reads.get(key);
  const wait = last ? last.at + READ_EVERY_MS - Date.now() : 0;
  if (last && wait > 0) {
    last.later ??= window.setTimeout(() => {
      last.later = undefined;
      void markRead(key);
    }, wait);
    return;
  }
  // Up to the newest message on screen (the service counts what was stored before it read):
  // what comes after it stays unread.
  const newest = messages.value.at(-1);
  if (!newest) return;
  reads.set(key, { at: Date.now() });
  // The new count comes through the live stream (a moved mark is a contact change): an
  // answer applied here could be older than a message that came meanwhile.
  await api.POST('/contacts/{key}/read', {
    params: { path: { key } },
    body: { instance_id: id, wamid: newest.wamid },
  });
}

/** A message of the open conversation, new or changed, kept in its arrival order. */
export function upsertMessage(contact: ContactAnswer, message: Message): void {
  if (keyOf(contact) !== openKey.value) return;
  during.conversation?.push(message);
  const known = messages.value.find((m) => m.wamid === message.wamid);
  // Statuses only move forward: an older copy of a message does not take a tick back.
  const newest =
    known && (STATUS_RANK[known.status] ?? 0) > (STATUS_RANK[message.status] ?? 0)
      ? { ...message, status: known.status, errors: known.errors }
      : message;
  const rest = messages.value.filter((m) => m.wamid !== message.wamid);
  rest.push(newest);
  rest.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
  messages.value = rest;
}
