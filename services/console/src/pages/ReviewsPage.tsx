import { useEffect, useState } from 'react';
import type { Page, ReviewInboxItem } from '@arbiter/contracts';
import { useSession } from '../lib/session.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { Link } from '../components/Link.js';
import { CursorPager } from '../components/CursorPager.js';

const PAGE_SIZE = 20;

/** The review inbox (publishers and admins): the org's drafts waiting for approval, oldest request first. */
export function ReviewsPage() {
  const { api } = useSession();
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<Page<ReviewInboxItem> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    const abort = new AbortController();
    setError(null);
    api
      .withOptions({ signal: abort.signal })
      .reviews.inbox({ pageSize: PAGE_SIZE })
      .page(cursor)
      .then(setPage, (err: unknown) => {
        if (!abort.signal.aborted) setError(err);
      });
    return () => abort.abort();
  }, [api, cursor]);

  return (
    <main>
      <h1>Reviews</h1>
      <p className="muted">Drafts waiting for approval, oldest request first. Open one to approve or reject it.</p>
      <ErrorBox error={error} />
      {page && (
        <>
          <table className="list" data-testid="review-list">
            <thead>
              <tr>
                <th>Name</th>
                <th>Kind</th>
                <th>Asked by</th>
                <th>Asked at</th>
                <th>Checks</th>
              </tr>
            </thead>
            <tbody>
              {page.items.length === 0 && (
                <tr>
                  <td colSpan={5} className="muted">
                    Nothing waits for a review.
                  </td>
                </tr>
              )}
              {page.items.map((r) => (
                <tr key={r.requestId ?? r.recordId}>
                  <td>
                    <Link to={`/${r.kind === 'policy' ? 'policies' : 'flows'}/${r.baseId}`}>{r.name}</Link>
                  </td>
                  <td>{r.kind}</td>
                  <td>{r.requestedBy}</td>
                  <td>{r.requestedAt ? <time dateTime={r.requestedAt}>{new Date(r.requestedAt).toLocaleString()}</time> : '—'}</td>
                  <td>{r.checks ? (r.checks.passed ? 'passed' : 'failed') : '—'}</td>
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
