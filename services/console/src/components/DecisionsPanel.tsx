import { useCallback, useEffect, useState } from 'react';
import type { DecisionRecord, Page } from '@arbiter/contracts';
import { can, useSession } from '../lib/session.js';
import { nodeSentences } from '../lib/reasons.js';
import { CursorPager, type CursorTrail } from './CursorPager.js';
import { ErrorBox } from './ErrorBox.js';
import { ReasonsSentence } from './RunResultView.js';

/** What the panel asks of the API: a page of the base's decisions, and a saved test made from one. */
export interface DecisionsEndpoints {
  page: (cursor: string | undefined) => Promise<Page<DecisionRecord>>;
  saveAsTest: (decisionId: string, name: string) => Promise<unknown>;
}

/** The answer of a decision in words: its result, or its error code. */
export function decisionOutcome(d: Pick<DecisionRecord, 'result' | 'errorCode'>): string {
  return d.errorCode !== null ? `error (${d.errorCode})` : typeof d.result === 'string' ? d.result : JSON.stringify(d.result);
}

/** The default name of a test saved from a decision: its outcome and when it was recorded. */
export function testNameOf(d: Pick<DecisionRecord, 'result' | 'errorCode' | 'at'>): string {
  return `recorded ${decisionOutcome(d)} at ${d.at}`;
}

function Decision({
  decision,
  mayMakeTests,
  onSave,
}: {
  decision: DecisionRecord;
  mayMakeTests: boolean;
  onSave: (name: string) => Promise<void>;
}) {
  const [name, setName] = useState(() => testNameOf(decision));
  const [busy, setBusy] = useState(false);
  const sentences = nodeSentences(decision.nodeReasons ?? []);
  const outcomes = Object.entries(decision.outcomes ?? {});
  return (
    <section className="decision-detail" aria-label="Decision" data-testid="decision-detail">
      <h3>
        Decision <code>{decision.decisionId}</code>
      </h3>
      <p>
        Answer: <strong data-testid="decision-answer">{decisionOutcome(decision)}</strong>
        {decision.version !== null ? <span className="muted"> (version {decision.version})</span> : <span className="muted"> (draft)</span>}
        {decision.path && <span> — path {decision.path.join(' → ')}</span>}
      </p>
      {outcomes.length > 0 && <p className="muted">Outcomes: {outcomes.map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')}</p>}
      {decision.reasons && <ReasonsSentence reasons={decision.reasons} />}
      {sentences.map((n) => (
        <p key={n.nodeId} className="reasons-sentence" data-testid="reasons-sentence" role="note">
          <strong>{n.nodeId}: </strong>
          {n.sentence}
        </p>
      ))}
      {!decision.reasons && sentences.length === 0 && (
        <p className="muted" data-testid="decision-no-reasons">
          {decision.reasonsLeftOut
            ? 'The run asked for reasons, but they were left out to keep the record within the bus limit.'
            : 'No reasons: the run did not ask for them (runs with ?reasons=true are recorded with them).'}
        </p>
      )}
      <h4>Input {decision.masked && <span className="badge">masked</span>}</h4>
      <pre className="decision-input" data-testid="decision-input">
        {JSON.stringify(decision.input, null, 2)}
      </pre>
      {mayMakeTests ? (
        <div className="actions">
          <label className="field">
            Test name <input value={name} maxLength={200} onChange={(e) => setName(e.target.value)} data-testid="decision-test-name" />
          </label>
          <button
            type="button"
            data-testid="save-as-test"
            disabled={busy || name.trim() === '' || decision.errorCode !== null}
            title={decision.errorCode !== null ? 'A decision that ended in an error cannot be a test: a test expects a result' : undefined}
            onClick={() => {
              setBusy(true);
              void onSave(name.trim()).finally(() => setBusy(false));
            }}
          >
            Save as test
          </button>
        </div>
      ) : null}
    </section>
  );
}

/**
 * The recorded decisions of a base (docs/decisions.md), newest first, for callers with the `audit`
 * right: one decision's masked input, answer and reasons, and, for callers who may also edit,
 * **Save as test** (`POST /{noun}/{id}/tests/from-decision`), which adds it to the base's draft.
 */
export function DecisionsPanel({ endpoints, onSaved }: { endpoints: DecisionsEndpoints; onSaved: (message: string) => void }) {
  const { me } = useSession();
  const [cursors, setCursors] = useState<CursorTrail>([undefined]);
  const [page, setPage] = useState<Page<DecisionRecord> | null>(null);
  const [shown, setShown] = useState<DecisionRecord | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loads, setLoads] = useState(0);
  const mayMakeTests = can(me, 'edit') && can(me, 'audit');

  const cursor = cursors[cursors.length - 1];
  const load = useCallback(async () => {
    setError(null);
    try {
      setPage(await endpoints.page(cursor));
    } catch (err) {
      setError(err);
    }
  }, [endpoints, cursor]);
  useEffect(() => {
    void load();
  }, [load, loads]);

  const save = async (decision: DecisionRecord, name: string) => {
    setError(null);
    try {
      await endpoints.saveAsTest(decision.decisionId, name);
      onSaved(`Saved the decision as a test of the draft: “${name}”${decision.masked ? ' (masked input)' : ''}.`);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section aria-label="Recorded decisions" className="decisions" data-testid="decisions">
      <h2>Recorded decisions</h2>
      <p className="muted">
        Runs of this base as they were recorded, inputs masked. Runs that asked for reasons show why they came out.{' '}
        <button type="button" onClick={() => setLoads((n) => n + 1)} data-testid="decisions-refresh">
          Refresh
        </button>
      </p>
      <ErrorBox error={error} />
      {page && page.items.length === 0 && <p data-testid="decisions-empty">No decisions recorded for this base yet.</p>}
      {page && page.items.length > 0 && (
        <>
          <table className="list" data-testid="decisions-list">
            <thead>
              <tr>
                <th>Recorded</th>
                <th>Answer</th>
                <th>Caller</th>
                <th>Version</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {page.items.map((d) => (
                <tr key={d.decisionId} data-testid="decision-row" className={shown?.decisionId === d.decisionId ? 'selected' : undefined}>
                  <td>
                    <time dateTime={d.at}>{new Date(d.at).toLocaleString()}</time>
                  </td>
                  <td>
                    {decisionOutcome(d)} {d.masked && <span className="badge">masked</span>}
                  </td>
                  <td>{d.caller.userId}</td>
                  <td>{d.version ?? 'draft'}</td>
                  <td>
                    <button type="button" onClick={() => setShown(d)} data-testid="decision-show">
                      Show
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <CursorPager cursors={cursors} nextCursor={page.nextCursor} onChange={setCursors} back="← Newer" forward="Older →" />
        </>
      )}
      {shown && <Decision key={shown.decisionId} decision={shown} mayMakeTests={mayMakeTests} onSave={(name) => save(shown, name)} />}
    </section>
  );
}
