import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { LANGUAGES, language, setLanguage, t, type Language } from './i18n';
import { logOut, type Session } from './session';

/** The pages of everyone who logs in (admins and operators), after the inbox. */
export const WORK_PAGES = [
  { path: '/console/templates', label: 'nav.templates' },
  { path: '/console/campaigns', label: 'nav.campaigns' },
] as const;

/** The admin pages, in the order the navigation shows them. */
export const ADMIN_PAGES = [
  { path: '/console/overview', label: 'nav.overview' },
  { path: '/console/instances', label: 'nav.instances' },
  { path: '/console/keys', label: 'nav.keys' },
  { path: '/console/accounts', label: 'nav.accounts' },
  { path: '/console/events', label: 'nav.events' },
  { path: '/console/turns', label: 'nav.turns' },
] as const;

export const INBOX_PATH = '/console/';

/**
 * The frame of every page: where to go (the inbox, templates and campaigns for
 * everyone; the admin pages for admins), who is logged in, the language, log out.
 */
export function Shell({ session, children }: { session: Session; children: ComponentChildren }) {
  const { path } = useLocation();
  const inInbox = path === INBOX_PATH;
  const current = (page: string) =>
    page === INBOX_PATH ? inInbox : path === page || path.startsWith(`${page}/`);
  return (
    <div class="shell">
      <a class="skip" href={inInbox ? '#composer-text' : '#content'}>
        {inInbox ? t('app.skip') : t('app.skipToContent')}
      </a>
      <header class="top">
        <nav class="sections" aria-label={t('nav.work')}>
          <a href={INBOX_PATH} aria-current={current(INBOX_PATH) ? 'page' : undefined}>
            {t('nav.inbox')}
          </a>
          {WORK_PAGES.map((page) => (
            <a
              key={page.path}
              href={page.path}
              aria-current={current(page.path) ? 'page' : undefined}
            >
              {t(page.label)}
            </a>
          ))}
        </nav>
        {session.role === 'admin' && (
          <nav class="sections admin" aria-label={t('nav.label')}>
            {ADMIN_PAGES.map((page) => (
              <a
                key={page.path}
                href={page.path}
                aria-current={current(page.path) ? 'page' : undefined}
              >
                {t(page.label)}
              </a>
            ))}
          </nav>
        )}
        <span class="who">{t('header.signedInAs', { name: session.display_name })}</span>
        <label class="visually-hidden" for="language">
          {t('header.language')}
        </label>
        <select
          id="language"
          value={language.value}
          onChange={(e) => setLanguage(e.currentTarget.value as Language)}
        >
          {LANGUAGES.map((l) => (
            <option key={l.code} value={l.code}>
              {l.name}
            </option>
          ))}
        </select>
        <button type="button" onClick={() => void logOut()}>
          {t('header.logout')}
        </button>
      </header>
      {children}
    </div>
  );
}

/** What an operator (or a mistyped address) finds outside the inbox. */
export function NotHere({ forbidden }: { forbidden: boolean }) {
  return (
    <main class="admin-page" id="content">
      <h1>{forbidden ? t('nav.forbidden') : t('nav.notFound')}</h1>
      <p>
        <a href={INBOX_PATH}>{t('nav.toInbox')}</a>
      </p>
    </main>
  );
}
