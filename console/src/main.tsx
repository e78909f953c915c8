import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { api, ApiError, loadCredential, saveCredential, SIGNED_OUT, type Credential, type Me } from './api';
import { HealthPage } from './pages/health';
import { ObjectivePage, ObjectivesPage } from './pages/objectives';
import { TaskPage } from './pages/task';
import { TasksPage } from './pages/tasks';
import { WorkflowPage, WorkflowsPage } from './pages/workflows';
import { follow, href, useRoute, type Route } from './route';
import './style.css';

function SignIn({ onDone, problem }: { onDone: (me: Me) => void; problem?: string }) {
  const [kind, setKind] = useState<Credential['kind']>('key');
  const [value, setValue] = useState('');
  const [error, setError] = useState(problem ?? '');
  const submit = async (e: Event) => {
    e.preventDefault();
    saveCredential({ kind, value: value.trim() });
    try {
      onDone(await api<Me>('/v1/me'));
    } catch (err) {
      saveCredential(null);
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <main class="signin">
      <h1>a2ad console</h1>
      <form aria-label="Sign in" onSubmit={submit}>
        <fieldset>
          <legend>Credential</legend>
          <label>
            <input type="radio" name="kind" checked={kind === 'key'} onChange={() => setKind('key')} /> API key
          </label>
          <label>
            <input type="radio" name="kind" checked={kind === 'bearer'} onChange={() => setKind('bearer')} /> Bearer
            token
          </label>
        </fieldset>
        <label>
          {kind === 'key' ? 'API key' : 'Bearer token'}
          <input
            type="password"
            autoComplete="off"
            required
            value={value}
            onInput={(e) => setValue((e.target as HTMLInputElement).value)}
            aria-describedby={error ? 'signin-error' : undefined}
          />
        </label>
        {error && (
          <p id="signin-error" role="alert" class="error">
            {error}
          </p>
        )}
        <button type="submit">Sign in</button>
      </form>
      <p class="hint">The credential stays in this tab (sessionStorage) and is sent only to this server.</p>
    </main>
  );
}

function Page({ route, me }: { route: Route; me: Me }) {
  switch (route.page) {
    case 'tasks':
      return <TasksPage me={me} query={route.query} />;
    case 'task':
      return <TaskPage me={me} id={route.id} />;
    case 'workflows':
      return <WorkflowsPage />;
    case 'workflow':
      return <WorkflowPage me={me} id={route.id} />;
    case 'objectives':
      return <ObjectivesPage />;
    case 'objective':
      return <ObjectivePage id={route.id} />;
    case 'health':
      return <HealthPage />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>The console has no page at {route.path}.</p>
        </section>
      );
  }
}

const NAV: Array<[string, string, Route['page'][]]> = [
  ['Tasks', href('tasks'), ['tasks', 'task']],
  ['Workflows', href('workflows'), ['workflows', 'workflow']],
  ['Objectives', href('objectives'), ['objectives', 'objective']],
  ['Health', href('health'), ['health']],
];

function App() {
  const route = useRoute();
  const [me, setMe] = useState<Me | null>(null);
  const [state, setState] = useState<'loading' | 'signin' | 'ready'>('loading');
  const [problem, setProblem] = useState<string | undefined>();
  useEffect(() => {
    // A development server without authentication answers /v1/me without a credential.
    api<Me>('/v1/me')
      .then((m) => {
        setMe(m);
        setState('ready');
      })
      .catch((err) => {
        if (loadCredential() && err instanceof ApiError) setProblem(err.message);
        saveCredential(null);
        setState('signin');
      });
    // The credential refused later (revoked, expired): sign in again, saying why.
    const onSignedOut = (e: Event) => {
      saveCredential(null);
      setProblem(`Signed out: ${(e as CustomEvent<string>).detail}`);
      setMe(null);
      setState('signin');
    };
    addEventListener(SIGNED_OUT, onSignedOut);
    return () => removeEventListener(SIGNED_OUT, onSignedOut);
  }, []);
  if (state === 'loading') return <p class="loading">Loading…</p>;
  if (state === 'signin' || !me)
    return (
      <SignIn
        problem={problem}
        onDone={(m) => {
          setMe(m);
          setState('ready');
        }}
      />
    );
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <nav aria-label="Console">
          <span class="brand">a2ad</span>
          {NAV.map(([label, to, pages]) => (
            <a href={to} onClick={follow} aria-current={pages.includes(route.page) ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <div class="who">
          <span>
            {me.tenant} / {me.principal}
          </span>
          {me.authenticated && (
            <button
              type="button"
              onClick={() => {
                saveCredential(null);
                setMe(null);
                setState('signin');
              }}
            >
              Sign out
            </button>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Page route={route} me={me} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
