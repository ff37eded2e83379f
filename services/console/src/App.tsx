import { lazy, Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import { consoleClient, problemText } from './lib/api.js';
import { clearCredentials, loadCredentials, saveCredentials, type Credentials } from './lib/credentials.js';
import { matchRoute, navigate, useRoute } from './lib/router.js';
import { can, SessionContext, type Session } from './lib/session.js';
import type { MeResponse } from '@arbiter/contracts';
import { Link } from './components/Link.js';
import { ErrorBoundary } from './components/ErrorBoundary.js';
import { SignIn } from './pages/SignIn.js';
import { Playground } from './pages/Playground.js';

// Pages past the editor load on first visit (the flow graph's layout and the diff stay out of the first bundle).
const RecordList = lazy(() => import('./pages/RecordList.js').then((m) => ({ default: m.RecordList })));
const PolicyPage = lazy(() => import('./pages/PolicyPage.js').then((m) => ({ default: m.PolicyPage })));
const FlowPage = lazy(() => import('./pages/FlowPage.js').then((m) => ({ default: m.FlowPage })));
const AuditPage = lazy(() => import('./pages/AuditPage.js').then((m) => ({ default: m.AuditPage })));
const ReviewsPage = lazy(() => import('./pages/ReviewsPage.js').then((m) => ({ default: m.ReviewsPage })));
const PeoplePage = lazy(() => import('./pages/PeoplePage.js').then((m) => ({ default: m.PeoplePage })));
const WebhooksPage = lazy(() => import('./pages/WebhooksPage.js').then((m) => ({ default: m.WebhooksPage })));

function Page({ route, me }: { route: string; me: MeResponse }) {
  let m: Record<string, string> | null;
  if (route === '/' || route === '/editor') return <Playground />;
  if (route === '/policies') return <RecordList kind="policy" />;
  if ((m = matchRoute('/policies/:id', route))) return <PolicyPage key={m.id} id={m.id ?? ''} />;
  if (route === '/flows') return <RecordList kind="flow" />;
  if ((m = matchRoute('/flows/:id', route))) return <FlowPage key={m.id} id={m.id ?? ''} />;
  if (route === '/reviews' && can(me, 'publish')) return <ReviewsPage />;
  if (route === '/audit' && can(me, 'audit')) return <AuditPage />;
  if (route === '/people' && can(me, 'admin')) return <PeoplePage />;
  if (route === '/webhooks' && can(me, 'admin')) return <WebhooksPage />;
  return (
    <main>
      <h1>Not found</h1>
      <p>
        There is no page at <code>{route}</code>. <Link to="/">Go to the editor</Link>.
      </p>
    </main>
  );
}

export function App() {
  const route = useRoute();
  const [credentials, setCredentials] = useState<Credentials | null>(() => loadCredentials());
  const [me, setMe] = useState<MeResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const api = useMemo(() => (credentials ? consoleClient(credentials) : null), [credentials]);

  // A key kept from earlier in this tab is checked again (it may have been revoked).
  useEffect(() => {
    if (!api || me) return;
    api.me().then(setMe, (err: unknown) => {
      setError(problemText(err));
      clearCredentials();
      setCredentials(null);
    });
  }, [api, me]);

  const signOut = useCallback(() => {
    clearCredentials();
    setCredentials(null);
    setMe(null);
    navigate('/');
  }, []);

  if (!credentials || !api) {
    return (
      <>
        {error && (
          <div className="error banner" role="alert">
            {error}
          </div>
        )}
        <SignIn
          onSignedIn={(c, who) => {
            saveCredentials(c);
            setError(null);
            setMe(who);
            setCredentials(c);
          }}
        />
      </>
    );
  }
  if (!me) return <p className="loading">Signing in…</p>;

  const session: Session = { api, me, signOut };
  const nav: [string, string, boolean][] = [
    ['/', 'Editor', route === '/' || route === '/editor'],
    ['/policies', 'Policies', route.startsWith('/policies')],
    ['/flows', 'Flows', route.startsWith('/flows')],
  ];
  if (can(me, 'publish')) nav.push(['/reviews', 'Reviews', route === '/reviews']);
  if (can(me, 'audit')) nav.push(['/audit', 'Audit', route === '/audit']);
  if (can(me, 'admin')) nav.push(['/people', 'People', route === '/people']);
  if (can(me, 'admin')) nav.push(['/webhooks', 'Webhooks', route === '/webhooks']);
  return (
    <SessionContext.Provider value={session}>
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Arbiter</span>
        <nav aria-label="Main">
          {nav.map(([to, label, current]) => (
            <Link key={to} to={to} current={current}>
              {label}
            </Link>
          ))}
        </nav>
        <span className="who" data-testid="who">
          {me.userId} · {me.role} · {me.orgId}
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <div id="content">
        <ErrorBoundary key={route}>
          <Suspense fallback={<p className="loading">Loading…</p>}>
            <Page route={route} me={me} />
          </Suspense>
        </ErrorBoundary>
      </div>
    </SessionContext.Provider>
  );
}
