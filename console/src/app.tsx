import { useEffect } from 'preact/hooks';
import { sessionEnded } from './api/client';
import { Inbox } from './inbox/inbox';
import { Login } from './login';
import { loadSession, session } from './session';

/**
 * The console: the login, then the inbox. When the session ends (a 401) the
 * login shows over the page, which stays as it was (a half-written reply
 * included) and carries on once logged in again.
 */
export function App() {
  useEffect(() => {
    void loadSession();
  }, []);
  if (session.value === undefined) return null;
  if (session.value === null) return <Login />;
  return (
    <>
      <Inbox session={session.value} />
      {sessionEnded.value && <Login expired />}
    </>
  );
}
