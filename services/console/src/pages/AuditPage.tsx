import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { can, useSession } from '../lib/session.js';
import { auditSummary, nameKey } from '../lib/audit-summary.js';
import { Link } from '../components/Link.js';
import type { AuditEvent, AuditListFilter, EventKind, EventResourceType, Page } from '@arbiter/contracts';
import { EVENT_KINDS, EVENT_RESOURCE_TYPES } from '@arbiter/contracts/event-kinds';
import { ErrorBox } from '../components/ErrorBox.js';
import { CursorPager } from '../components/CursorPager.js';

const PAGE_SIZE = 25;

interface Filters {
  kind: string;
  actor: string;
  resourceType: string;
  baseId: string;
  from: string;
  to: string;
}
const EMPTY: Filters = { kind: '', actor: '', resourceType: '', baseId: '', from: '', to: '' };

/** `datetime-local` values are local times; the API takes ISO 8601 instants. */
const iso = (local: string): string | undefined => (local ? new Date(local).toISOString() : undefined);

/**
 * The names of the policies and flows a page of events is about: fetched for a caller who may
 * view them (a deleted one keeps the name its events carry, or its short id).
 */
function useRecordNames(events: AuditEvent[] | undefined): ReadonlyMap<string, string> {
  const { api, me } = useSession();
  const [fetched, setFetched] = useState<ReadonlyMap<string, string>>(new Map());
  const [asked] = useState(() => new Set<string>());
  useEffect(() => {
    if (!events || !can(me, 'view')) return;
    for (const e of events) {
      const key = nameKey(e);
      if ((e.resource.type !== 'policy' && e.resource.type !== 'flow') || asked.has(key)) continue;
      asked.add(key);
      const records = e.resource.type === 'policy' ? api.policies : api.flows;
      records.get(key).then(
        (r) => setFetched((m) => new Map(m).set(key, r.name)),
        () => undefined, // deleted, or not visible: the event's own name or id stands
      );
    }
  }, [api, me, events, asked]);
  return useMemo(() => {
    // names the events themselves carry (created, imported, restored), newest first; fetched names win
    const names = new Map<string, string>();
    for (const e of events ?? []) {
      if (typeof e.details.name === 'string' && !names.has(nameKey(e))) names.set(nameKey(e), e.details.name);
    }
    for (const [k, v] of fetched) names.set(k, v);
    return names;
  }, [events, fetched]);
}

/** The org's audit trail (admins and auditors): filters and paging over `GET /audit`, each event said in words. */
export function AuditPage() {
  const { api, me } = useSession();
  const [form, setForm] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<Page<AuditEvent> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const cursor = cursors[cursors.length - 1];
  const names = useRecordNames(page?.items);

  useEffect(() => {
    const abort = new AbortController();
    setError(null);
    const from = iso(filters.from);
    const to = iso(filters.to);
    const filter: AuditListFilter = {
      ...(filters.kind ? { kind: [filters.kind as EventKind] } : {}),
      ...(filters.actor.trim() ? { actor: filters.actor.trim() } : {}),
      ...(filters.resourceType ? { resourceType: filters.resourceType as EventResourceType } : {}),
      ...(filters.baseId.trim() ? { baseId: filters.baseId.trim() } : {}),
      ...(from ? { from } : {}),
      ...(to ? { to } : {}),
    };
    const scoped = api.withOptions({ signal: abort.signal });
    scoped.audit
      .list({ ...filter, pageSize: PAGE_SIZE })
      .page(cursor)
      .then(setPage, (err: unknown) => {
        if (!abort.signal.aborted) setError(err);
      });
    return () => abort.abort();
  }, [api, filters, cursor]);

  const apply = (e: FormEvent) => {
    e.preventDefault();
    setCursors([undefined]);
    setFilters(form);
  };
  const set = (k: keyof Filters) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });

  return (
    <main>
      <h1>Audit trail</h1>
      <form className="toolbar filters" onSubmit={apply} aria-label="Audit filters">
        <label>
          Kind{' '}
          <select value={form.kind} onChange={set('kind')}>
            <option value="">any</option>
            {EVENT_KINDS.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <label>
          Actor <input value={form.actor} onChange={set('actor')} placeholder="user id" />
        </label>
        <label>
          Resource{' '}
          <select value={form.resourceType} onChange={set('resourceType')}>
            <option value="">any</option>
            {EVENT_RESOURCE_TYPES.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <label>
          Base id <input value={form.baseId} onChange={set('baseId')} />
        </label>
        <label>
          From <input type="datetime-local" value={form.from} onChange={set('from')} />
        </label>
        <label>
          To <input type="datetime-local" value={form.to} onChange={set('to')} />
        </label>
        <button type="submit">Apply</button>
      </form>
      <ErrorBox error={error} />
      {page && (
        <>
          <table className="list" data-testid="audit-list">
            <thead>
              <tr>
                <th>When</th>
                <th>What happened</th>
              </tr>
            </thead>
            <tbody>
              {page.items.length === 0 && (
                <tr>
                  <td colSpan={2} className="muted">
                    No events match.
                  </td>
                </tr>
              )}
              {page.items.map((e) => {
                const linked = (e.resource.type === 'policy' || e.resource.type === 'flow') && e.kind !== 'deleted' && can(me, 'view');
                return (
                  <tr key={e.eventId} data-kind={e.kind}>
                    <td className="when">
                      <time dateTime={e.at}>{new Date(e.at).toLocaleString()}</time>
                    </td>
                    <td>
                      <span className="badge">{e.kind}</span> <span data-testid="event-summary">{auditSummary(e, names)}</span>
                      {linked && (
                        <>
                          {' '}
                          <Link to={`/${e.resource.type === 'policy' ? 'policies' : 'flows'}/${nameKey(e)}`}>open</Link>
                        </>
                      )}
                      <details className="event-raw">
                        <summary>Raw event</summary>
                        <pre className="details" data-testid="event-raw">
                          {JSON.stringify({ eventId: e.eventId, actor: e.actor, resource: e.resource, details: e.details }, null, 2)}
                        </pre>
                      </details>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <CursorPager cursors={cursors} nextCursor={page.nextCursor} onChange={setCursors} back="← Newer" forward="Older →" />
        </>
      )}
    </main>
  );
}
