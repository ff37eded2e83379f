import { useCallback, useEffect, useRef, useState } from 'react';
import type { ImpactOptions } from '@arbiter/sdk/client';
import { useSession } from '../lib/session.js';
import { nodeSentences } from '../lib/reasons.js';
import {
  examplesNote,
  IMPACT_COUNTS,
  impactRunReason,
  inputText,
  nextImpactState,
  pathText,
  sideText,
  transitionRows,
  type ImpactSide,
  type ImpactState,
  type ShownImpact,
} from '../lib/impact.js';
import { ChangeCounts, TransitionsTable } from './ChangeSummary.js';
import { ErrorBox } from './ErrorBox.js';

const DEFAULT_LIMIT = 1000;
const MAX_LIMIT = 10_000;

/** What the panel asks of the API for one draft. */
export interface ImpactEndpoints {
  /** `GET /{noun}/{id}/review`: the draft's review summary, whose `impact` is the current report (null: none or stale). */
  review: () => Promise<{ impact?: ShownImpact | null }>;
  /** `POST /{noun}/{id}/impact`. */
  analyse: (opts: ImpactOptions) => Promise<ShownImpact>;
}

/** One side of a changed decision: its result or error code, then a flow's path or a policy's named outcomes. */
function Side({ side, flow }: { side: ImpactSide; flow: boolean }) {
  const outcomes = Object.entries(side.outcomes);
  return (
    <>
      <strong className={side.errorCode !== null ? 'fail' : undefined}>{sideText(side)}</strong>
      {flow && (
        <div className="impact-path">
          Path: <code data-testid="impact-path">{pathText(side.path ?? [])}</code>
        </div>
      )}
      {!flow && outcomes.length > 0 && (
        <ul className="impact-outcomes">
          {outcomes.map(([name, value]) => (
            <li key={name}>
              {name}: {JSON.stringify(value)}
            </li>
          ))}
        </ul>
      )}
      {side.reasons && (
        <p className="impact-why" data-testid="impact-why">
          {side.reasons.sentence}
          {side.reasonsReplayed && (
            <span className="muted"> (the run did not ask for reasons: replayed through the version that decided it)</span>
          )}
        </p>
      )}
      {nodeSentences(side.nodeReasons ?? []).map((n) => (
        <p key={n.nodeId} className="impact-why" data-testid="impact-why">
          {n.nodeId}: {n.sentence}
        </p>
      ))}
    </>
  );
}

function Report({ report, noun }: { report: ShownImpact; noun: 'policy' | 'flow' }) {
  const outcomes = Object.entries(report.outcomes).sort((a, b) => b[1] - a[1]);
  const flow = report.flowId !== undefined;
  const examples = report.examples ?? [];
  const note = examplesNote(report);
  return (
    <div data-testid="impact-report" data-impact-id={report.impactId}>
      <p className="muted">
        Report of <time dateTime={report.at}>{new Date(report.at).toLocaleString()}</time>: the {noun}'s most recent recorded decisions
        replayed through this draft, each at its own time.
      </p>
      <ChangeCounts counts={IMPACT_COUNTS} values={report} testIdPrefix="impact" />
      {report.replayed === 0 && (
        <p className="hint" data-testid="impact-hint">
          No recorded decisions to replay. Decisions are recorded when the published {noun} runs (by base id, single or batch; sampled and
          capped per second, see docs/decisions.md). Run it, then analyse again.
        </p>
      )}
      {report.unreplayable > 0 && (
        <p className="hint">
          {report.unreplayable} decision{report.unreplayable === 1 ? '' : 's'} read a masked value and could not be replayed.
        </p>
      )}
      <TransitionsTable
        rows={transitionRows(report)}
        caption="Transitions"
        head={['Before', 'After', 'Decisions']}
        testId="impact-transitions"
      />
      {outcomes.length > 0 && (
        <table className="list impact-outcomes-changed" data-testid="impact-outcomes">
          <caption>Outcomes changed</caption>
          <thead>
            <tr>
              <th scope="col">Outcome</th>
              <th scope="col">Decisions whose value changed</th>
            </tr>
          </thead>
          <tbody>
            {outcomes.map(([name, n]) => (
              <tr key={name}>
                <td>{name}</td>
                <td>{n}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {note !== null && (
        <p className="hint" data-testid="impact-examples-note">
          {note}
        </p>
      )}
      {examples.length > 0 && (
        <table className="list impact-examples" data-testid="impact-examples">
          <caption>
            Examples ({examples.length} of {report.changed} changed)
          </caption>
          <thead>
            <tr>
              <th scope="col">Recorded</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
              <th scope="col">Input (masked, as recorded)</th>
            </tr>
          </thead>
          <tbody>
            {examples.map((ex) => (
              <tr key={ex.decisionId} data-testid="impact-example">
                <td>
                  <time dateTime={ex.at}>{new Date(ex.at).toLocaleString()}</time>
                </td>
                <td data-testid="impact-before">
                  <Side side={ex.before} flow={flow} />
                </td>
                <td data-testid="impact-after">
                  <Side side={ex.after} flow={flow} />
                </td>
                <td>
                  <pre className="impact-input">{inputText(ex.input)}</pre>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/**
 * The review view's impact analysis of a draft: the report the review summary carries
 * for the draft's current content, or why there is none (never run, or the draft changed since),
 * and a "Run impact analysis" button for whoever may run one. `reloadKey` changes after every load
 * of the page's records, so an edit shows the report as stale.
 */
export function ImpactPanel({
  draftId,
  noun,
  endpoints,
  reloadKey,
}: {
  draftId: string;
  noun: 'policy' | 'flow';
  /** Stable for one draft (memoized by the page): a new object reloads the summary. */
  endpoints: ImpactEndpoints;
  reloadKey: number;
}) {
  const { me } = useSession();
  const [state, setState] = useState<ImpactState | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [running, setRunning] = useState(false);
  const [limit, setLimit] = useState(String(DEFAULT_LIMIT));
  // What was shown last, and for which draft: a report that then disappears became stale.
  const shown = useRef<{ draftId: string; state: ImpactState }>({ draftId, state: { kind: 'none' } });

  const show = useCallback(
    (next: ImpactState) => {
      shown.current = { draftId, state: next };
      setState(next);
    },
    [draftId],
  );

  useEffect(() => {
    let live = true;
    endpoints
      .review()
      .then((summary) => {
        if (!live) return;
        const previous = shown.current.draftId === draftId ? shown.current.state : { kind: 'none' as const };
        const next = nextImpactState(previous, summary.impact);
        show(next);
        setError(null);
      })
      .catch((err: unknown) => live && setError(err));
    return () => {
      live = false;
    };
  }, [draftId, endpoints, reloadKey, show]);

  const reason = impactRunReason(me);
  const parsedLimit = Number(limit);
  const limitOk = Number.isInteger(parsedLimit) && parsedLimit >= 1 && parsedLimit <= MAX_LIMIT;

  const run = async () => {
    setRunning(true);
    setError(null);
    try {
      show({ kind: 'current', report: await endpoints.analyse({ limit: parsedLimit }) });
    } catch (err) {
      setError(err);
    } finally {
      setRunning(false);
    }
  };

  return (
    <section aria-label="Impact analysis" className="impact" data-testid="impact" data-state={state?.kind ?? 'loading'}>
      <h2>Impact analysis</h2>
      <p className="muted">What the saved draft would change: the base's recorded decisions replayed through it (docs/decisions.md).</p>
      <div className="actions">
        <label>
          Decisions to replay{' '}
          <input
            type="number"
            min={1}
            max={MAX_LIMIT}
            value={limit}
            onChange={(e) => setLimit(e.target.value)}
            disabled={reason !== null || running}
            aria-invalid={!limitOk}
            className="impact-limit"
          />
        </label>
        <button
          type="button"
          onClick={() => void run()}
          disabled={reason !== null || running || !limitOk}
          aria-describedby={reason !== null ? 'impact-run-reason' : undefined}
          data-testid="run-impact"
        >
          Run impact analysis
        </button>
        {reason !== null && (
          <span className="muted" id="impact-run-reason" data-testid="impact-run-reason">
            {reason}
          </span>
        )}
        {!limitOk && <span className="fail">Between 1 and 10,000 decisions.</span>}
      </div>
      {running && (
        <p role="status" data-testid="impact-running">
          <progress aria-label="Impact analysis running" /> Replaying up to {parsedLimit.toLocaleString()} recorded decisions through the
          draft…
        </p>
      )}
      <ErrorBox error={error} />
      {state === null && error === null && <p className="loading">Loading…</p>}
      {state?.kind === 'none' && (
        <p className="muted" data-testid="impact-none">
          No impact report for the draft as it is now: none was run yet, or the draft changed since the last one.
        </p>
      )}
      {state?.kind === 'stale' && (
        <p className="stale-note" data-testid="impact-stale">
          Stale: the draft changed after the report of <time dateTime={state.was.at}>{new Date(state.was.at).toLocaleString()}</time> (
          {state.was.changed} changed of {state.was.replayed}). Run the analysis again.
        </p>
      )}
      {state?.kind === 'current' && <Report report={state.report} noun={noun} />}
    </section>
  );
}
