import { useCallback, useEffect, useState } from 'react';
import type { ShadowBody, ShadowReport } from '@arbiter/contracts';
import { ArbiterError } from '@arbiter/sdk/client';
import { transitionsOf } from '../lib/impact.js';
import { mostlyDropped, SHADOW_COUNTS, shadowExamplesNote, shadowStatus } from '../lib/shadow.js';
import { ChangeCounts, TransitionsTable } from './ChangeSummary.js';
import { ErrorBox } from './ErrorBox.js';

/** What the panel asks of the API for one base (docs/api.md#shadow-runs). */
export interface ShadowEndpoints {
  get: () => Promise<ShadowReport>;
  start: (body: ShadowBody) => Promise<ShadowReport>;
  stop: () => Promise<ShadowReport>;
}

/**
 * The base's shadow runs: the report of its shadow candidate (running or stopped) and, for editors
 * and up, a button to shadow the draft at a chosen share of runs and one to stop. Everyone reads
 * the counts; examples need the `audit` right (the API leaves them out otherwise).
 */
export function ShadowPanel({
  draftId,
  canEdit,
  endpoints,
  reloadKey,
}: {
  draftId: string | null;
  /** The caller has the `edit` right: the buttons show (the API checks again). */
  canEdit: boolean;
  endpoints: ShadowEndpoints;
  reloadKey: number;
}) {
  const [report, setReport] = useState<ShadowReport | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [percent, setPercent] = useState('10');
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setReport(await endpoints.get());
      setError(null);
    } catch (err) {
      if (err instanceof ArbiterError && err.code === 'not_found') setReport(null);
      else setError(err);
    }
  }, [endpoints]);
  useEffect(() => {
    void load();
  }, [load, reloadKey]);

  const act = async (what: () => Promise<ShadowReport>) => {
    setBusy(true);
    setError(null);
    try {
      setReport(await what());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const rate = Number(percent) / 100;
  const running = report?.state === 'running';
  const examples = report?.examples ?? [];
  const note = report ? shadowExamplesNote(report) : null;
  return (
    <section aria-label="Shadow runs" className="shadow" data-testid="shadow-panel">
      <h2>Shadow runs</h2>
      <ErrorBox error={error} />
      {report === null ? (
        <p className="muted">No shadow: the draft does not run beside the live record.</p>
      ) : (
        <div data-testid="shadow-report">
          <p data-testid="shadow-status">{shadowStatus(report)}</p>
          <ChangeCounts counts={SHADOW_COUNTS} values={report} testIdPrefix="shadow" />
          {mostlyDropped(report) && (
            <p className="hint">Many sampled runs were dropped while the service was busy: the counts say little.</p>
          )}
          <TransitionsTable rows={transitionsOf(report.transitions)} caption="Transitions (live → candidate)" testId="shadow-transitions" />
          {note && <p className="hint">{note}</p>}
          {examples.length > 0 && (
            <ul className="shadow-examples" data-testid="shadow-examples">
              {examples.map((e, i) => (
                <li key={i}>
                  <code>{JSON.stringify(e.input)}</code>: live {JSON.stringify(e.live.result)}, candidate{' '}
                  {JSON.stringify(e.candidate.result)}
                  {e.candidate.errorCode !== null ? ` (${e.candidate.errorCode})` : ''}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <div className="actions">
        {canEdit && draftId !== null && (
          <>
            <label>
              Share of runs (%){' '}
              <input
                type="number"
                min="0"
                max="100"
                value={percent}
                onChange={(e) => setPercent(e.target.value)}
                data-testid="shadow-percent"
              />
            </label>{' '}
            <button
              type="button"
              disabled={busy || !(rate >= 0 && rate <= 1)}
              onClick={() => void act(() => endpoints.start({ recordId: draftId, sampleRate: rate }))}
            >
              {running ? 'Shadow the draft again (counts restart)' : 'Shadow the draft'}
            </button>
          </>
        )}
        {canEdit && running && (
          <button type="button" disabled={busy} onClick={() => void act(endpoints.stop)}>
            Stop shadowing
          </button>
        )}
      </div>
    </section>
  );
}
