import { useState } from 'preact/hooks';
import { t } from './i18n';
import { logIn } from './session';

/** The login form; `expired`: shown over the page after the session ended. */
export function Login({ expired = false }: { expired?: boolean }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await logIn(username, password);
    } catch (failure) {
      const { code, message } = failure as Error & { code?: string };
      setError(
        code === 'invalid_credentials'
          ? t('login.wrong')
          : code === 'rate_limited'
            ? t('login.limited')
            : t('login.failed', { message }),
      );
    } finally {
      setBusy(false);
    }
  };

  const form = (
    <form class="login" onSubmit={(event) => void submit(event)} aria-labelledby="login-title">
      <h1 id="login-title">{t('login.title')}</h1>
      {expired && <p class="notice">{t('login.expired')}</p>}
      <label>
        {t('login.username')}
        <input
          name="username"
          autocomplete="username"
          required
          value={username}
          onInput={(e) => setUsername(e.currentTarget.value)}
        />
      </label>
      <label>
        {t('login.password')}
        <input
          name="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
      </label>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" disabled={busy}>
        {t('login.submit')}
      </button>
    </form>
  );
  return expired ? (
    <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="login-title">
      {form}
    </div>
  ) : (
    <main class="login-page">{form}</main>
  );
}
