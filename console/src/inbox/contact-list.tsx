import { useRef } from 'preact/hooks';
import { t, when } from '../i18n';
import {
  contactsCursor,
  filter,
  isWaiting,
  keyOf,
  loadContacts,
  moreContacts,
  openConversation,
  openKey,
  query,
  shown,
  type Contact,
  type Filter,
} from './state';

const FILTERS: Filter[] = ['all', 'waiting', 'agent', 'open', 'optedOut'];

function Row({ contact }: { contact: Contact }) {
  const key = keyOf(contact);
  const waiting = isWaiting(contact);
  const selected = openKey.value === key;
  return (
    <li class={`contact${waiting ? ' waiting' : ''}`}>
      <button
        type="button"
        aria-current={selected ? 'true' : undefined}
        onClick={() => void openConversation(key)}
      >
        <span class={`name${contact.unread > 0 ? ' has-unread' : ''}`}>{contact.name ?? key}</span>
        <time class="muted" dateTime={contact.last_activity_at ?? undefined}>
          {when(contact.last_activity_at)}
        </time>
        <span class="badges">
          {waiting ? (
            <span class="badge waiting">
              {t('contacts.waitingSince', { time: when(contact.handoff.since) })}
            </span>
          ) : contact.handoff.active ? (
            <span class="badge paused">
              {t('contacts.pausedUntil', { time: when(contact.handoff.until) })}
            </span>
          ) : null}
          {contact.opted_out_at ? (
            <span class="badge opted-out">{t('contacts.optedOut')}</span>
          ) : contact.window.open ? (
            <span class="badge open">
              {t('contacts.windowOpen', { time: when(contact.window.until) })}
            </span>
          ) : (
            <span class="badge closed">{t('contacts.windowClosed')}</span>
          )}
          {contact.marketing_opted_out_at && (
            <span class="badge opted-out" title={t('contacts.marketingOptedOutHint')}>
              {t('contacts.marketingOptedOut')}
            </span>
          )}
        </span>
        {contact.last_message && (
          <span class="last">
            {contact.last_message.direction === 'outbound' && (
              <span class="muted">
                {t(`contacts.sentBy.${contact.last_message.sent_by ?? 'api'}`)}:{' '}
              </span>
            )}
            {contact.last_message.text ??
              t(`conversation.kinds.${contact.last_message.type}`, {
                defaultValue: t('conversation.unsupported', { type: contact.last_message.type }),
              })}
          </span>
        )}
        {contact.unread > 0 && (
          <span class="unread" aria-label={t('contacts.unread', { count: contact.unread })}>
            {contact.unread >= 100 ? '99+' : contact.unread}
          </span>
        )}
        {waiting && contact.handoff.reason && <span class="reason">{contact.handoff.reason}</span>}
      </button>
    </li>
  );
}

export function ContactList() {
  const searchTimer = useRef<number | undefined>(undefined);
  return (
    <nav class="contacts" aria-labelledby="contacts-title">
      <h2 id="contacts-title" class="visually-hidden">
        {t('contacts.title')}
      </h2>
      <div class="tools">
        <input
          type="search"
          aria-label={t('contacts.search')}
          placeholder={t('contacts.search')}
          value={query.value}
          onInput={(e) => {
            query.value = e.currentTarget.value;
            window.clearTimeout(searchTimer.current);
            searchTimer.current = window.setTimeout(() => void loadContacts(), 250);
          }}
        />
        <label class="visually-hidden" for="contact-filter">
          {t('contacts.filter')}
        </label>
        <select
          id="contact-filter"
          value={filter.value}
          onChange={(e) => {
            filter.value = e.currentTarget.value as Filter;
            void loadContacts();
          }}
        >
          {FILTERS.map((f) => (
            <option key={f} value={f}>
              {t(`contacts.filters.${f}`)}
            </option>
          ))}
        </select>
      </div>
      {shown.value.length === 0 ? (
        <p class="muted empty">{t('contacts.empty')}</p>
      ) : (
        <ul>
          {shown.value.map((contact) => (
            <Row key={keyOf(contact)} contact={contact} />
          ))}
        </ul>
      )}
      {contactsCursor.value && (
        <button type="button" class="link" onClick={() => void moreContacts()}>
          {t('contacts.more')}
        </button>
      )}
    </nav>
  );
}
