import { useEffect, useState, type FormEvent } from 'react';
import type { Paged } from '@arbiter/sdk/client';
import { navigate } from '../lib/router.js';
import { can, useSession } from '../lib/session.js';
import type { FlowDefinition, FlowSummary, Page, PolicySummary, RecordStatus } from '@arbiter/contracts';
import { ErrorBox } from '../components/ErrorBox.js';
import { Link } from '../components/Link.js';
import { CursorPager } from '../components/CursorPager.js';

const PAGE_SIZE = 20;

const NEW_RULE = 'A **customer** gets free shipping if the __total__ of the **order** is greater than 50.\n';
const NEW_FLOW: FlowDefinition = { start: 'end', nodes: { end: { type: 'return', value: true } } };

/** Policies or flows: search by name, filter by status, page through, create one. */
export function RecordList({ kind }: { kind: 'policy' | 'flow' }) {
  const { api, me } = useSession();
  const plural = kind === 'policy' ? 'policies' : 'flows';
  const title = kind === 'policy' ? 'Policies' : 'Flows';
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<Page<PolicySummary | FlowSummary> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [newName, setNewName] = useState('');
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    const abort = new AbortController();
    setError(null);
    const filter = { pageSize: PAGE_SIZE, ...(search ? { q: search } : {}), ...(status ? { status: status as RecordStatus } : {}) };
    const scoped = api.withOptions({ signal: abort.signal });
    const list: Paged<PolicySummary | FlowSummary> = kind === 'policy' ? scoped.policies.list(filter) : scoped.flows.list(filter);
    list.page(cursor).then(setPage, (err: unknown) => {
      if (!abort.signal.aborted) setError(err);
    });
    return () => abort.abort();
  }, [api, kind, search, status, cursor]);

  const onSearch = (e: FormEvent) => {
    e.preventDefault();
    setCursors([undefined]);
    setSearch(q.trim());
  };

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const name = newName.trim();
      const rec =
        kind === 'policy' ? await api.policies.create({ name, rule: NEW_RULE }) : await api.flows.create({ name, definition: NEW_FLOW });
      navigate(`/${plural}/${rec.baseId}`);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <main>
      <h1>{title}</h1>
      <div className="toolbar">
        <form role="search" onSubmit={onSearch}>
          <label>
            Search by name <input type="search" value={q} onChange={(e) => setQ(e.target.value)} data-testid="search" />
          </label>
          <label>
            Status{' '}
            <select
              value={status}
              onChange={(e) => {
                setCursors([undefined]);
                setStatus(e.target.value);
              }}
            >
              <option value="">any</option>
              <option value="published">published</option>
              <option value="draft">never published</option>
            </select>
          </label>
          <button type="submit">Search</button>
        </form>
        {can(me, 'edit') && (
          <form onSubmit={(e) => void create(e)} aria-label={`New ${kind}`}>
            <label>
              New {kind}{' '}
              <input value={newName} onChange={(e) => setNewName(e.target.value)} placeholder="Name" data-testid="new-name" required />
            </label>
            <button type="submit">Create</button>
          </form>
        )}
      </div>
      <ErrorBox error={error} />
      {page && (
        <>
          <table className="list" data-testid={`${kind}-list`}>
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th>Version</th>
                <th>Created by</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {page.items.length === 0 && (
                <tr>
                  <td colSpan={5} className="muted">
                    Nothing here{search ? ` matching “${search}”` : ''}.
                  </td>
                </tr>
              )}
              {page.items.map((s) => (
                <tr key={s.baseId}>
                  <td>
                    <Link to={`/${plural}/${s.baseId}`}>{s.name}</Link>
                  </td>
                  <td>
                    <span className={`badge ${s.status}`}>{s.status}</span>
                    {s.draftId && s.status === 'published' ? <span className="badge draft">draft</span> : null}
                  </td>
                  <td>{s.latestVersion ?? '—'}</td>
                  <td>{s.createdBy}</td>
                  <td>{new Date(s.updatedAt).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <CursorPager cursors={cursors} nextCursor={page.nextCursor} onChange={setCursors} back="← Previous" forward="Next →" />
        </>
      )}
    </main>
  );
}
