import { useEffect, useState, type FormEvent } from 'react';
import type { Page, Webhook, WebhookCreateBody, WebhookDelivery, WebhookDeliveryStatus, WebhookEventKind } from '@arbiter/contracts';
import { EVENT_KINDS } from '@arbiter/contracts/event-kinds';
import { useSession } from '../lib/session.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { CursorPager, type CursorTrail } from '../components/CursorPager.js';

const PAGE_SIZE = 25;
/** The kinds an endpoint may ask for: every kind of the trail but recorded decisions. */
const KINDS = EVENT_KINDS.filter((k): k is WebhookEventKind => k !== 'decided');
const when = (t: string | null): string => (t ? new Date(t).toLocaleString() : '—');

/**
 * The org's webhook endpoints (admins; docs/webhooks.md): add one (its signing secret shown once),
 * turn it on or off, rotate its secret, send a ping, delete it, and follow its deliveries with
 * every attempt, retrying a failed one.
 */
export function WebhooksPage() {
  const { api } = useSession();
  const [cursors, setCursors] = useState<CursorTrail>([undefined]);
  const [page, setPage] = useState<Page<Webhook> | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [all, setAll] = useState(true);
  const [kinds, setKinds] = useState<WebhookEventKind[]>([]);
  const [reloads, setReloads] = useState(0);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    const abort = new AbortController();
    api
      .withOptions({ signal: abort.signal })
      .webhooks.list({ pageSize: PAGE_SIZE })
      .page(cursor)
      .then(setPage, (err: unknown) => {
        if (!abort.signal.aborted) setError(err);
      });
    return () => abort.abort();
  }, [api, cursor, reloads]);

  /** Runs a change, shows its notice or its error, and reloads the list. */
  const act = async (what: () => Promise<string>): Promise<void> => {
    setError(null);
    setNotice(null);
    try {
      setNotice(await what());
    } catch (err) {
      setError(err);
    } finally {
      setReloads((n) => n + 1);
    }
  };

  const add = (e: FormEvent) => {
    e.preventDefault();
    const body: WebhookCreateBody = {
      url: url.trim(),
      events: all ? ['*'] : kinds,
      ...(description.trim() ? { description: description.trim() } : {}),
    };
    void act(async () => {
      const created = await api.webhooks.create(body);
      setSecret(created.secret);
      setUrl('');
      setDescription('');
      setSelected(created.id);
      return `Added ${created.url}.`;
    });
  };

  const toggle = (k: WebhookEventKind) => setKinds((ks) => (ks.includes(k) ? ks.filter((x) => x !== k) : [...ks, k]));

  return (
    <main>
      <h1>Webhooks</h1>
      <p className="muted">
        Endpoints that receive your organization&apos;s events, signed with Standard Webhooks headers and retried for a day. The signing
        secret is shown once, when you add an endpoint or rotate its secret.
      </p>
      <form className="toolbar filters" onSubmit={add} aria-label="Add an endpoint">
        <label>
          URL <input value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://…" data-testid="webhook-url" required />
        </label>
        <label>
          Description <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
        <label>
          <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} data-testid="webhook-all" /> every event kind
        </label>
        {!all && (
          <fieldset aria-label="Event kinds">
            {KINDS.map((k) => (
              <label key={k}>
                <input type="checkbox" checked={kinds.includes(k)} onChange={() => toggle(k)} /> {k}
              </label>
            ))}
          </fieldset>
        )}
        <button type="submit">Add endpoint</button>
      </form>
      <ErrorBox error={error} />
      {notice && (
        <p className="notice" role="status" data-testid="notice">
          {notice}
        </p>
      )}
      {secret && (
        <p className="notice" data-testid="webhook-secret">
          Signing secret (shown once, store it now): <code>{secret}</code>{' '}
          <button type="button" onClick={() => setSecret(null)}>
            Done
          </button>
        </p>
      )}
      {page && (
        <>
          <table className="list" data-testid="webhook-list">
            <thead>
              <tr>
                <th>URL</th>
                <th>Events</th>
                <th>State</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((w) => (
                <tr key={w.id} aria-selected={w.id === selected}>
                  <td>
                    {w.url}
                    {w.description && <div className="muted">{w.description}</div>}
                  </td>
                  <td>{w.events.join(', ')}</td>
                  <td>{w.enabled ? 'enabled' : `disabled (${w.disabledReason ?? '—'}, ${when(w.disabledAt)})`}</td>
                  <td>
                    <button type="button" onClick={() => setSelected(w.id)} aria-label={`Deliveries of ${w.url}`}>
                      Deliveries
                    </button>{' '}
                    <button type="button" onClick={() => void act(async () => (await api.webhooks.test(w.id), `Ping sent to ${w.url}.`))}>
                      Test
                    </button>{' '}
                    <button
                      type="button"
                      onClick={() =>
                        void act(async () => {
                          setSecret((await api.webhooks.rotateSecret(w.id)).secret);
                          return 'New secret; the old one keeps signing beside it for 24 hours.';
                        })
                      }
                    >
                      Rotate secret
                    </button>{' '}
                    <button
                      type="button"
                      onClick={() =>
                        void act(
                          async () => (await api.webhooks.update(w.id, { enabled: !w.enabled }), w.enabled ? 'Disabled.' : 'Enabled.'),
                        )
                      }
                    >
                      {w.enabled ? 'Disable' : 'Enable'}
                    </button>{' '}
                    <button
                      type="button"
                      onClick={() =>
                        window.confirm(`Delete ${w.url} and its deliveries?`) &&
                        void act(async () => (await api.webhooks.remove(w.id), `Deleted ${w.url}.`))
                      }
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CursorPager cursors={cursors} nextCursor={page.nextCursor} onChange={setCursors} back="← Previous" forward="Next →" />
        </>
      )}
      {selected && page?.items.some((w) => w.id === selected) && <Deliveries key={`${selected}:${reloads}`} webhookId={selected} />}
    </main>
  );
}

/** One endpoint's deliveries, newest first, with each attempt; a failed or pending one can be sent again. */
function Deliveries({ webhookId }: { webhookId: string }) {
  const { api } = useSession();
  const [status, setStatus] = useState<WebhookDeliveryStatus | ''>('');
  const [cursors, setCursors] = useState<CursorTrail>([undefined]);
  const [page, setPage] = useState<Page<WebhookDelivery> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [reloads, setReloads] = useState(0);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    const abort = new AbortController();
    api
      .withOptions({ signal: abort.signal })
      .webhooks.deliveries(webhookId, { pageSize: PAGE_SIZE, ...(status ? { status } : {}) })
      .page(cursor)
      .then(setPage, (err: unknown) => {
        if (!abort.signal.aborted) setError(err);
      });
    return () => abort.abort();
  }, [api, webhookId, status, cursor, reloads]);

  const retry = async (d: WebhookDelivery) => {
    setError(null);
    try {
      await api.webhooks.retry(webhookId, d.id);
    } catch (err) {
      setError(err);
    } finally {
      setReloads((n) => n + 1);
    }
  };

  return (
    <section aria-label="Deliveries">
      <h2>Deliveries</h2>
      <label>
        Status{' '}
        <select
          value={status}
          onChange={(e) => {
            setCursors([undefined]);
            setStatus(e.target.value as WebhookDeliveryStatus | '');
          }}
        >
          <option value="">any</option>
          <option>pending</option>
          <option>delivered</option>
          <option>failed</option>
        </select>
      </label>{' '}
      <button type="button" onClick={() => setReloads((n) => n + 1)}>
        Refresh
      </button>
      <ErrorBox error={error} />
      {page && (
        <>
          <table className="list" data-testid="delivery-list">
            <thead>
              <tr>
                <th>Event</th>
                <th>Status</th>
                <th>Attempts</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {page.items.map((d) => (
                <tr key={d.id}>
                  <td>
                    {d.kind} <code className="muted">{d.eventId}</code>
                    <div className="muted">{when(d.createdAt)}</div>
                  </td>
                  <td>
                    {d.status}
                    {d.nextAttemptAt && <div className="muted">next {when(d.nextAttemptAt)}</div>}
                  </td>
                  <td>
                    {d.attempts.map((a, i) => (
                      <div key={i} title={a.response ?? a.error ?? ''}>
                        {when(a.at)}: {a.statusCode ?? a.error ?? 'no answer'} ({a.durationMs} ms)
                      </div>
                    ))}
                  </td>
                  <td>
                    {d.status !== 'delivered' && (
                      <button type="button" onClick={() => void retry(d)}>
                        Retry
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CursorPager cursors={cursors} nextCursor={page.nextCursor} onChange={setCursors} back="← Previous" forward="Next →" />
        </>
      )}
    </section>
  );
}
