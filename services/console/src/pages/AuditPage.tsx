import { useEffect, useState, type FormEvent } from 'react';
import { useSession } from '../lib/session.js';
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

/** The org's audit trail (admins and auditors): filters and paging over `GET /audit`. */
export function AuditPage() {
  const { api } = useSession();
  const [form, setForm] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<Page<AuditEvent> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const cursor = cursors[cursors.length - 1];

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
                <th>Kind</th>
                <th>Actor</th>
                <th>Resource</th>
                <th>Details</th>
              </tr>
            </thead>
            <tbody>
              {page.items.length === 0 && (
                <tr>
                  <td colSpan={5} className="muted">
                    No events match.
                  </td>
                </tr>
              )}
              {page.items.map((e) => (
                <tr key={e.eventId}>
                  <td>{new Date(e.at).toLocaleString()}</td>
                  <td>{e.kind}</td>
                  <td>{e.actor.userId}</td>
                  <td>
                    {e.resource.type} <code>{e.resource.id.slice(0, 13)}</code>
                  </td>
                  <td>
                    <code className="details">{JSON.stringify(e.details)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CursorPager cursors={cursors} nextCursor={page.nextCursor} onChange={setCursors} back="← Newer" forward="Older →" />
        </>
      )}
    </main>
  );
}
