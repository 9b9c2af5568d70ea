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

/** A field the API refused: validation_failed's `details` name each one. */
export interface FieldProblem {
  field: string;
  message: string;
}

/** The fields a failure names (a 400 validation_failed), if any. */
export function problemsOf(failure: unknown): FieldProblem[] {
  const details = (failure as { details?: unknown }).details;
  if (!Array.isArray(details)) return [];
  return details.filter(
    (detail): detail is FieldProblem =>
      typeof (detail as FieldProblem).field === 'string' &&
      typeof (detail as FieldProblem).message === 'string',
  );
}

/**
 * Runs an action, keeping its error to show beside the button that ran it
 * (and the fields it names, to show beside them); `busy` while it runs, so a
 * second click does not send it twice.
 */
export function useAction(): {
  busy: boolean;
  error: string | null;
  /** The API's error code ('unknown' for a failure without one). */
  code: string | null;
  problems: FieldProblem[];
  /** The error's other details (a conflict's state, a template's status). */
  details: Array<Record<string, unknown>>;
  run: <T>(action: () => Promise<T>) => Promise<T | undefined>;
} {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<{
    message: string;
    code: string;
    problems: FieldProblem[];
    details: Array<Record<string, unknown>>;
  } | null>(null);
  const run = async <T,>(action: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setFailure(null);
    try {
      return await action();
    } catch (caught) {
      const { details, code } = caught as { details?: unknown; code?: unknown };
      setFailure({
        message: (caught as Error).message,
        code: typeof code === 'string' ? code : 'unknown',
        problems: problemsOf(caught),
        details: Array.isArray(details) ? (details as Array<Record<string, unknown>>) : [],
      });
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return {
    busy,
    error: failure?.message ?? null,
    code: failure?.code ?? null,
    problems: failure?.problems ?? [],
    details: failure?.details ?? [],
    run,
  };
}

/**
 * The API's field errors placed beside the form's fields: `place` says which
 * of the form's fields an API field is (null: none), `at(name)` gives the
 * message(s) for one, `rest` those no field shows.
 */
export function placeProblems(
  problems: FieldProblem[],
  place: (field: string) => string | null,
): { at: (name: string) => string | undefined; rest: FieldProblem[]; placed: number } {
  const byName = new Map<string, string[]>();
  const rest: FieldProblem[] = [];
  for (const problem of problems) {
    const name = place(problem.field);
    if (name === null) rest.push(problem);
    else byName.set(name, [...(byName.get(name) ?? []), problem.message]);
  }
  return {
    at: (name) => byName.get(name)?.join('; '),
    rest,
    placed: problems.length - rest.length,
  };
}

/** What an input shows when the API refused it: invalid, described by its error. */
export function invalid(id: string, error: string | undefined) {
  return error ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {};
}

/** The API's error beside a field (the field names it with `invalid(id, error)`). */
export function FieldError({ id, error }: { id: string; error: string | undefined }) {
  return error ? (
    <p class="field-error" id={`${id}-error`}>
      {error}
    </p>
  ) : null;
}

/**
 * A form's failure: the whole message when no field shows it; otherwise a
 * pointer to the fields, and what none of them shows.
 */
export function FormFailure({
  error,
  placed,
  rest,
}: {
  error: string | null;
  placed: number;
  rest: FieldProblem[];
}) {
  if (!error) return null;
  if (placed === 0) return <Failure error={error} />;
  return (
    <p class="error" role="alert">
      {t('errors.fields')}
      {rest.map((problem) => (
        <span key={problem.field} class="block">
          {problem.field}: {problem.message}
        </span>
      ))}
    </p>
  );
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
    <main class="admin-page" id="content" aria-labelledby="page-title">
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
 * `label`: a table with nothing to focus in it (no link, no button) is a
 * region of that name that takes the focus, so the keyboard scrolls it too.
 */
export function Table<T>({
  columns,
  items,
  empty,
  row,
  actions = false,
  label,
}: {
  columns: string[];
  items: T[];
  empty: string;
  row: (item: T) => JSX.Element;
  actions?: boolean;
  label?: string;
}) {
  if (items.length === 0) return <p class="muted">{empty}</p>;
  return (
    <div class="scroll" {...(label ? { role: 'region', 'aria-label': label, tabIndex: 0 } : {})}>
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
