import { useEffect, useMemo, useRef, useState } from 'react';
import { EditorSelection } from '@codemirror/state';
import type { EditorView } from '@codemirror/view';
import { json } from '@codemirror/lang-json';
import { CodeEditor } from '../editor/CodeEditor.js';
import { ruleExtensions, showReasonMarks, showUncovered } from '../editor/rule-extensions.js';
import { reasonMarks } from '../lib/reasons.js';
import { useSession } from '../lib/session.js';
import { traceLineSources } from '../lib/rule-syntax.js';
import type { ExplainResponse, ExplainedCondition, RunResponse, UncoveredCondition, ValidateResponse } from '@arbiter/contracts';
import { ErrorBox } from './ErrorBox.js';
import { RunResultView } from './RunResultView.js';

/** Parses the data pane; a JSON error is shown, not sent. */
export function parseData(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text || '{}') };
  } catch (err) {
    return { ok: false, error: `Data is not valid JSON: ${(err as Error).message}` };
  }
}

function conditionText(c: ExplainedCondition): string {
  const parts = [c.negated ? 'not' : '', c.selector, c.property, c.operator, c.value].filter(Boolean);
  return parts.join(' ') || c.type;
}

function Conditions({ conditions }: { conditions: ExplainedCondition[] }) {
  return (
    <ul>
      {conditions.map((c, i) => (
        <li key={i}>
          {i > 0 && c.logical_op ? <em>{c.logical_op} </em> : null}
          {conditionText(c)}
          {c.optional ? <span className="muted"> (if present)</span> : null}
          {c.conditions && <Conditions conditions={c.conditions} />}
        </li>
      ))}
    </ul>
  );
}

export interface RuleWorkbenchProps {
  rule: string;
  onRuleChange: (rule: string) => void;
  data: string;
  onDataChange: (data: string) => void;
  /** Runs with the parsed data; defaults to `POST /run {rule, data, reasons: true}`. */
  run?: (data: unknown) => Promise<RunResponse>;
  /** Why the rule cannot be edited here (shown above the editor, which then ignores typing); null: editable. */
  readOnlyReason?: string | null;
  /** Put the cursor in the rule editor when it is made. */
  autoFocus?: boolean;
  /** The parts of the rule its saved tests left uncovered, underlined until the rule changes; null or empty: none. */
  uncovered?: readonly UncoveredCondition[] | null;
}

/**
 * Why a result on screen no longer matches the editors, or null while it does: a result stays
 * visible after an edit (to compare), marked so it is never mistaken for the current rule's.
 */
export function staleness(
  ran: { rule: string; data?: string },
  now: { rule: string; data?: string },
  validation: ValidateResponse | null,
): string | null {
  if (ran.rule !== now.rule) {
    return validation && !validation.valid && validation.error !== null
      ? 'Out of date: the rule changed since this run and no longer parses'
      : 'Out of date: the rule changed since this run';
  }
  if (ran.data !== undefined && ran.data !== now.data) return 'Out of date: the data changed since this run';
  return null;
}

/** Rule editor (highlighting, live diagnostics, completion), data pane, Run and Explain. */
export function RuleWorkbench({
  rule,
  onRuleChange,
  data,
  onDataChange,
  run,
  readOnlyReason = null,
  autoFocus = false,
  uncovered = null,
}: RuleWorkbenchProps) {
  const { api } = useSession();
  const [validation, setValidation] = useState<ValidateResponse | null>(null);
  const [result, setResult] = useState<RunResponse | null>(null);
  const [ranRule, setRanRule] = useState('');
  const [ranData, setRanData] = useState('');
  const [explain, setExplain] = useState<ExplainResponse | null>(null);
  const [explainedRule, setExplainedRule] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const view = useRef<EditorView | null>(null);
  const ruleExt = useMemo(() => ruleExtensions(api, setValidation), [api]);
  const jsonExt = useMemo(() => [json()], []);

  const coverageShown = useRef(false);
  useEffect(() => {
    const v = view.current;
    const list = uncovered ?? [];
    if (!v || (list.length === 0 && !coverageShown.current)) return;
    coverageShown.current = list.length > 0;
    showUncovered(v, list);
  }, [uncovered]);

  const doRun = async () => {
    const parsed = parseData(data);
    if (!parsed.ok) {
      setError(new Error(parsed.error));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const r = run
        ? await run(parsed.value)
        : await api.rules.evaluate({ rule, data: parsed.value as Record<string, unknown>, reasons: true });
      setResult(r);
      setRanRule(rule);
      setRanData(data);
      // The deciding conditions, on the text that ran: an edit since the run started clears nothing wrong.
      if (view.current && view.current.state.doc.toString() === rule) showReasonMarks(view.current, reasonMarks(r.reasons));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const doExplain = async () => {
    setError(null);
    try {
      setExplain(await api.rules.explain(rule));
      setExplainedRule(rule);
    } catch (err) {
      setError(err);
    }
  };

  const goToLine = (line: number) => {
    const v = view.current;
    if (!v) return;
    const l = v.state.doc.line(Math.min(line, v.state.doc.lines));
    v.dispatch({ selection: EditorSelection.cursor(l.from), scrollIntoView: true });
    v.focus();
  };

  const sources = useMemo(() => (result?.trace ? traceLineSources(ranRule, result.trace) : []), [result, ranRule]);
  const resultStale = result ? staleness({ rule: ranRule, data: ranData }, { rule, data }, validation) : null;
  const explainStale = explain ? staleness({ rule: explainedRule }, { rule }, validation) : null;

  return (
    <div className="workbench">
      <div className="panes">
        <section className="pane" aria-label="Rule">
          <h2>Rule</h2>
          {readOnlyReason && (
            <p className="read-only-note" role="note" data-testid="read-only-note">
              {readOnlyReason}
            </p>
          )}
          <CodeEditor
            value={rule}
            onChange={onRuleChange}
            extensions={ruleExt}
            label="Rule editor"
            testId="rule-editor"
            placeholder="A **customer** gets free shipping if the __total__ of the **order** is greater than 50."
            onView={(v) => (view.current = v)}
            minHeight="12rem"
            readOnly={readOnlyReason !== null}
            autoFocus={autoFocus}
          />
          <p className="validation" role="status" data-testid="validation">
            {validation === null ? '' : validation.valid ? '✓ Valid' : `✗ ${validation.error ?? 'invalid'}`}
          </p>
        </section>
        <section className="pane" aria-label="Data">
          <h2>Data (JSON)</h2>
          <CodeEditor
            value={data}
            onChange={onDataChange}
            extensions={jsonExt}
            label="Data editor"
            testId="data-editor"
            minHeight="12rem"
          />
        </section>
      </div>
      <div className="actions">
        <button type="button" onClick={() => void doRun()} disabled={busy} data-testid="run">
          {busy ? 'Running…' : 'Run'}
        </button>
        <button type="button" onClick={() => void doExplain()}>
          Explain
        </button>
        <span className="muted">Tip: Ctrl-Space completes operators; Esc then Tab leaves an editor.</span>
      </div>
      <ErrorBox error={error} />
      {result && <RunResultView result={result} sources={sources} onGoToLine={resultStale ? undefined : goToLine} stale={resultStale} />}
      {explain && (
        <section
          className={explainStale ? 'explain stale' : 'explain'}
          aria-label="Explanation"
          data-testid="explanation"
          data-stale={explainStale !== null}
        >
          <h2>Explanation</h2>
          {explainStale && (
            <p className="stale-note" role="status" data-testid="explanation-stale">
              {explainStale}: explain again.
            </p>
          )}
          {explain.error ? (
            <p className="error">{explain.error}</p>
          ) : (
            <ol>
              {explain.rules.map((r, i) => (
                <li key={i}>
                  <strong>{r.label ? `${r.label}: ` : ''}</strong>A <b>{r.selector}</b> {r.verb ? `${r.verb} ` : ''}
                  {r.outcome} if
                  <Conditions conditions={r.conditions} />
                </li>
              ))}
            </ol>
          )}
        </section>
      )}
    </div>
  );
}
