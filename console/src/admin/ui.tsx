import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { t } from '../i18n';

/** What a load gives a page: the data, the error, and a way to load again. */
export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  reload: () => void;
}

/** Loads `load()` now and whenever `deps` change; a page shows its error, never throws. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    load().then(
      (value) => current && (setData(value), setError(null)),
      (failure: Error) => current && setError(failure.message),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { data, error, reload };
}

/**
 * Runs an action, keeping its error to show beside the button that ran it;
 * `busy` while it runs, so a second click does not send it twice.
 */
export function useAction(): {
  busy: boolean;
  error: string | null;
  run: <T>(action: () => Promise<T>) => Promise<T | undefined>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await action();
    } catch (failure) {
      setError((failure as Error).message);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export function Page({
  title,
  actions,
  children,
}: {
  title: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  useEffect(() => {
    document.title = `${title} · ${t('app.title')}`;
  }, [title]);
  return (
    <main class="admin-page" aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title">{title}</h1>
        {actions}
      </div>
      {children}
    </main>
  );
}

export function Failure({ error }: { error: string | null }) {
  return error ? (
    <p class="error" role="alert">
      {t('errors.generic', { message: error })}
    </p>
  ) : null;
}

/** A button that copies `value`, and says so once it did. */
export function Copy({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={() =>
        void navigator.clipboard.writeText(value).then(() => {
          setCopied(true);
          window.setTimeout(() => setCopied(false), 2000);
        })
      }
    >
      {copied ? t('admin.copied') : label}
    </button>
  );
}

/** A value to copy, shown in full (a URL, a verify token). */
export function CopyField({ label, value }: { label: string; value: string }) {
  return (
    <div class="copy-field">
      <span class="label">{label}</span>
      <code>{value}</code>
      <Copy value={value} label={t('admin.copy')} />
    </div>
  );
}

/** A secret the service shows this once (an API key, a signing secret). */
export function OnceSecret({
  label,
  value,
  onDone,
}: {
  label: string;
  value: string;
  onDone: () => void;
}) {
  return (
    <section class="once" role="alert" aria-label={label}>
      <p>
        <strong>{label}</strong> {t('admin.shownOnce')}
      </p>
      <code class="secret">{value}</code>
      <div class="row">
        <Copy value={value} label={t('admin.copy')} />
        <button type="button" class="secondary" onClick={onDone}>
          {t('admin.stored')}
        </button>
      </div>
    </section>
  );
}

/** A date and time in full, as the chosen language writes it. */
export function At({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  return <time dateTime={iso}>{new Date(iso).toLocaleString(document.documentElement.lang)}</time>;
}

/** Seconds as people read an age: 42 s, 5 min, 3 h, 2 d. */
export function age(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 90) return t('admin.age.s', { n: s });
  if (s < 90 * 60) return t('admin.age.min', { n: Math.round(s / 60) });
  if (s < 36 * 3600) return t('admin.age.h', { n: Math.round(s / 3600) });
  return t('admin.age.d', { n: Math.round(s / 86_400) });
}

/** A form's text field, trimmed ('' when absent). */
export function field(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === 'string' ? value.trim() : '';
}

/** A form's checked boxes of one name. */
export function fields(form: FormData, name: string): string[] {
  return form.getAll(name).filter((value): value is string => typeof value === 'string');
}

/**
 * Pages read by cursor: the cursor of the page shown, a way back to the
 * first (a filter changed), and the Previous / Next buttons for a page whose
 * answer gave `next`.
 */
export function usePages(): {
  cursor: string | null;
  restart: () => void;
  pager: (next: string | null | undefined) => JSX.Element;
} {
  const [pages, setPages] = useState<Array<string | null>>([null]);
  return {
    cursor: pages.at(-1) ?? null,
    restart: () => setPages([null]),
    pager: (next) => (
      <div class="row">
        {pages.length > 1 && (
          <button type="button" class="secondary" onClick={() => setPages(pages.slice(0, -1))}>
            {t('admin.previous')}
          </button>
        )}
        {next && (
          <button type="button" class="secondary" onClick={() => setPages([...pages, next])}>
            {t('admin.next')}
          </button>
        )}
      </div>
    ),
  };
}

/**
 * A list as a table that scrolls sideways in its own box on a narrow screen,
 * or `empty` when there is nothing; `actions`: a last column of buttons.
 */
export function Table<T>({
  columns,
  items,
  empty,
  row,
  actions = false,
}: {
  columns: string[];
  items: T[];
  empty: string;
  row: (item: T) => JSX.Element;
  actions?: boolean;
}) {
  if (items.length === 0) return <p class="muted">{empty}</p>;
  return (
    <div class="scroll">
      <table>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span class="visually-hidden">{t('admin.actions')}</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{items.map(row)}</tbody>
      </table>
    </div>
  );
}
