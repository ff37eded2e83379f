import { lazy, Suspense, useCallback, useEffect, useMemo, useState } from 'react';
import { consoleClient, problemText } from './lib/api.js';
import { clearCredentials, loadCredentials, saveCredentials, type Credentials } from './lib/credentials.js';
import { matchRoute, navigate, redirect, useRoute } from './lib/router.js';
import { can, SessionContext, type Session } from './lib/session.js';
import type { MeResponse, Scope } from '@arbiter/contracts';
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

/** The menu: each page with the right it needs; the first one the caller has is where they land. */
const PAGES: { to: string; label: string; needs: Scope; current: (route: string) => boolean }[] = [
  { to: '/', label: 'Editor', needs: 'view', current: (r) => r === '/' || r === '/editor' },
  { to: '/policies', label: 'Policies', needs: 'view', current: (r) => r.startsWith('/policies') },
  { to: '/flows', label: 'Flows', needs: 'view', current: (r) => r.startsWith('/flows') },
  { to: '/reviews', label: 'Reviews', needs: 'publish', current: (r) => r === '/reviews' },
  { to: '/audit', label: 'Audit', needs: 'audit', current: (r) => r === '/audit' },
  { to: '/people', label: 'People', needs: 'admin', current: (r) => r === '/people' },
  { to: '/webhooks', label: 'Webhooks', needs: 'admin', current: (r) => r === '/webhooks' },
];

function Page({ route, me, home }: { route: string; me: MeResponse; home: string | null }) {
  let m: Record<string, string> | null;
  const viewer = can(me, 'view');
  if (viewer && (route === '/' || route === '/editor')) return <Playground />;
  if (viewer && route === '/policies') return <RecordList kind="policy" />;
  if (viewer && (m = matchRoute('/policies/:id', route))) return <PolicyPage key={m.id} id={m.id ?? ''} />;
  if (viewer && route === '/flows') return <RecordList kind="flow" />;
  if (viewer && (m = matchRoute('/flows/:id', route))) return <FlowPage key={m.id} id={m.id ?? ''} />;
  if (route === '/reviews' && can(me, 'publish')) return <ReviewsPage />;
  if (route === '/audit' && can(me, 'audit')) return <AuditPage />;
  if (route === '/people' && can(me, 'admin')) return <PeoplePage />;
  if (route === '/webhooks' && can(me, 'admin')) return <WebhooksPage />;
  if (home === null) {
    return (
      <main>
        <h1>Nothing to show</h1>
        <p data-testid="no-pages">
          The credential you signed in with allows none of the console&apos;s pages (its scopes: {me.scopes?.join(', ') || 'none'}). Sign
          out and use a key with the <code>view</code> scope, or ask an admin for one.
        </p>
      </main>
    );
  }
  return (
    <main>
      <h1>Not found</h1>
      <p>
        There is no page at <code>{route}</code> for you. <Link to={home}>Go to the start page</Link>.
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

  const home = me ? (PAGES.find((p) => can(me, p.needs))?.to ?? null) : null;
  // The start page is the editor; a key that cannot view rules (say, only `audit`) starts on its first page.
  const shown = route === '/' && home !== null ? home : route;
  useEffect(() => {
    if (shown !== route) redirect(shown);
  }, [shown, route]);

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
  const nav = PAGES.filter((p) => can(me, p.needs));
  return (
    <SessionContext.Provider value={session}>
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Arbiter</span>
        <nav aria-label="Main">
          {nav.map((p) => (
            <Link key={p.to} to={p.to} current={p.current(shown)}>
              {p.label}
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
        <ErrorBoundary key={shown}>
          <Suspense fallback={<p className="loading">Loading…</p>}>
            <Page route={shown} me={me} home={home} />
          </Suspense>
        </ErrorBoundary>
      </div>
    </SessionContext.Provider>
  );
}
