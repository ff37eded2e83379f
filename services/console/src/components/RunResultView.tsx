import type { Reasons, RunResponse, StoredPolicyRunResponse } from '@arbiter/contracts';

/** Why a result came out, in the rule's own words (a run's reasons, docs/LANGUAGE.md §10.4). */
export function ReasonsSentence({ reasons, label }: { reasons: Reasons; label?: string }) {
  return (
    <p className={`reasons-sentence ${reasons.result ? 'true' : 'false'}`} data-testid="reasons-sentence" role="note">
      {label && <strong>{label}: </strong>}
      {reasons.sentence}
      {reasons.truncated && <span className="muted"> (cut to fit)</span>}
    </p>
  );
}

/** A run's result, why it came out (its reasons' sentence), outcomes and trace; trace lines that come from a rule line link to it. */
export function RunResultView({
  result,
  sources,
  onGoToLine,
  stale = null,
}: {
  result: RunResponse | StoredPolicyRunResponse;
  sources?: (number | null)[];
  onGoToLine?: (line: number) => void;
  /** Why this result no longer matches what is in the editors (see `staleness`); null when it does. */
  stale?: string | null;
}) {
  const outcomes = Object.entries(result.outcomes ?? {});
  return (
    <section
      className={stale ? 'run-result stale' : 'run-result'}
      aria-label="Run result"
      data-testid="run-result"
      data-stale={stale !== null}
    >
      {stale && (
        <p className="stale-note" role="status" data-testid="run-stale">
          {stale}: this result and trace are from the previous run. Run again.
        </p>
      )}
      <p>
        Result: <strong data-testid="run-value">{JSON.stringify(result.result)}</strong>
        {'version' in result && <span className="muted"> (version {result.version ?? 'draft'})</span>}
      </p>
      {result.error && (
        <p className="error" role="status">
          {result.error}
          {result.errorCode ? ` (${result.errorCode})` : ''}
        </p>
      )}
      {result.reasons && <ReasonsSentence reasons={result.reasons} />}
      {outcomes.length > 0 && (
        <table className="outcomes">
          <caption>Outcomes</caption>
          <tbody>
            {outcomes.map(([name, value]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>{JSON.stringify(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {result.trace && result.trace.length > 0 && (
        <details open>
          <summary>Trace</summary>
          <ol className="trace" data-testid="trace">
            {result.trace.map((line, i) => {
              const source = sources?.[i] ?? null;
              return (
                <li key={i}>
                  {source !== null && onGoToLine ? (
                    <button type="button" className="trace-link" title={`Go to rule line ${source}`} onClick={() => onGoToLine(source)}>
                      <span className="line-ref">L{source}</span> <code>{line}</code>
                    </button>
                  ) : (
                    <code>{line}</code>
                  )}
                </li>
              );
            })}
          </ol>
        </details>
      )}
    </section>
  );
}
