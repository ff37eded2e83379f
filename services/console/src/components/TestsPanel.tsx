import { useState } from 'react';
import { json } from '@codemirror/lang-json';
import type { TestRunReport } from '@arbiter/contracts';
import { problemText } from '../lib/api.js';
import { coverageSummaryText, uncoveredItemText } from '../lib/coverage.js';
import { CodeEditor } from '../editor/CodeEditor.js';
import { ErrorBox } from './ErrorBox.js';

export interface SavedTest {
  name: string;
  data: unknown;
  expect: unknown;
}

export type TestOutcome = { pass: true; got: unknown } | { pass: false; got?: unknown; error?: string };

const jsonExt = [json()];

/** The server's run of the saved tests (`POST /{noun}/{baseId}/tests/run`) as the panel shows it. */
export interface SavedTestsRun {
  /** What the run is of: `the draft`, `version 3`. */
  target: string;
  /** Runs the saved tests on the server; the page keeps the report (the editors mark what it left uncovered). */
  run: () => Promise<void>;
  report: TestRunReport | null;
  /** Why the report no longer matches what is on screen, or null while it does. */
  stale: string | null;
}

/** The server's answer: each test's result, the coverage summary and the uncovered parts. */
function TestRunReportView({ report, stale }: { report: TestRunReport; stale: string | null }) {
  const { summary, uncovered } = report.coverage;
  return (
    <div className={stale ? 'test-run stale' : 'test-run'} data-testid="test-run" data-stale={stale !== null}>
      {stale && (
        <p className="stale-note" role="status" data-testid="test-run-stale">
          {stale}: run the tests again.
        </p>
      )}
      <p role="status" data-testid="test-run-summary" className={report.failed ? 'fail' : 'pass'}>
        {report.results.length === 0
          ? 'no saved tests'
          : report.failed
            ? `${report.failed} of ${report.results.length} failed`
            : `all ${report.passed} passed`}
      </p>
      {report.results.length > 0 && (
        <table className="list" data-testid="test-run-results">
          <thead>
            <tr>
              <th>Test</th>
              <th>Expected</th>
              <th>Outcome</th>
            </tr>
          </thead>
          <tbody>
            {report.results.map((r, i) => (
              <tr key={i} className={r.ok ? 'pass' : 'fail'}>
                <td>{r.name}</td>
                <td>{JSON.stringify(r.expected)}</td>
                <td>{r.ok ? '✓ pass' : `✗ ${r.error ?? `got ${JSON.stringify(r.actual)}`}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p>
        Coverage:{' '}
        <span className="coverage-summary" data-testid="coverage-summary">
          {coverageSummaryText(summary)}
        </span>
      </p>
      {uncovered.length === 0 ? (
        <p className="muted">Nothing left uncovered.</p>
      ) : (
        <>
          <h3>Not covered ({uncovered.length})</h3>
          <ul className="uncovered-list" data-testid="uncovered">
            {uncovered.map((u, i) => (
              <li key={i}>{uncoveredItemText(u)}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

/** JSON with object keys sorted: a table's output object equals the expected one whatever the key order (as the server compares). */
function sortedJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

/**
 * The saved tests of a draft: run them all against the text being edited and see which fail;
 * add, edit (as JSON) and remove tests. Changes are saved with the draft. "Run tests (with
 * coverage)" runs what is saved on the server and shows each result, the coverage and what the
 * tests left uncovered.
 */
export function TestsPanel({
  tests,
  onChange,
  runOne,
  editable,
  newTestData,
  saved,
}: {
  tests: SavedTest[];
  onChange: (tests: SavedTest[]) => void;
  runOne: (test: SavedTest) => Promise<unknown>;
  editable: boolean;
  newTestData: () => unknown;
  saved?: SavedTestsRun;
}) {
  const [outcomes, setOutcomes] = useState<(TestOutcome | null)[]>([]);
  const [running, setRunning] = useState(false);
  const [text, setText] = useState(() => JSON.stringify(tests, null, 2));
  const [textError, setTextError] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [savedRunning, setSavedRunning] = useState(false);
  const [savedError, setSavedError] = useState<unknown>(null);

  const runSaved = async () => {
    if (!saved) return;
    setSavedRunning(true);
    setSavedError(null);
    try {
      await saved.run();
    } catch (err) {
      setSavedError(err);
    } finally {
      setSavedRunning(false);
    }
  };

  const runAll = async () => {
    setRunning(true);
    const results: (TestOutcome | null)[] = [];
    for (const t of tests) {
      try {
        const got = await runOne(t);
        results.push(sortedJson(got) === sortedJson(t.expect) ? { pass: true, got } : { pass: false, got });
      } catch (err) {
        results.push({ pass: false, error: problemText(err) });
      }
    }
    setOutcomes(results);
    setRunning(false);
  };

  const add = () => {
    const next = [...tests, { name: `test ${tests.length + 1}`, data: newTestData(), expect: true }];
    onChange(next);
    setText(JSON.stringify(next, null, 2));
  };

  const applyText = () => {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (!Array.isArray(parsed)) throw new Error('tests must be a JSON array of {name, data, expect}');
      onChange(parsed as SavedTest[]);
      setTextError(null);
      setEditing(false);
    } catch (err) {
      setTextError((err as Error).message);
    }
  };

  const failed = outcomes.filter((o) => o && !o.pass).length;
  return (
    <section aria-label="Saved tests" className="tests" data-testid="tests">
      <h2>Saved tests ({tests.length})</h2>
      <div className="actions">
        <button type="button" onClick={() => void runAll()} disabled={running || tests.length === 0} data-testid="run-tests">
          {running ? 'Running…' : 'Run all tests'}
        </button>
        {editable && (
          <>
            <button type="button" onClick={add} data-testid="add-test">
              Add test from data pane
            </button>
            <button
              type="button"
              onClick={() => {
                setText(JSON.stringify(tests, null, 2));
                setEditing(!editing);
              }}
            >
              {editing ? 'Close JSON' : 'Edit tests as JSON'}
            </button>
          </>
        )}
        {outcomes.length > 0 && (
          <span role="status" data-testid="tests-summary" className={failed ? 'fail' : 'pass'}>
            {failed ? `${failed} of ${outcomes.length} failed` : `all ${outcomes.length} passed`}
          </span>
        )}
      </div>
      <table className="list">
        <thead>
          <tr>
            <th>Name</th>
            <th>Expect</th>
            <th>Outcome</th>
            {editable && <th>Remove</th>}
          </tr>
        </thead>
        <tbody>
          {tests.map((t, i) => {
            const o = outcomes[i];
            return (
              <tr key={i} className={o ? (o.pass ? 'pass' : 'fail') : undefined}>
                <td>
                  {editable ? (
                    <input
                      aria-label={`Name of test ${i + 1}`}
                      value={t.name}
                      onChange={(e) => onChange(tests.map((x, j) => (j === i ? { ...x, name: e.target.value } : x)))}
                    />
                  ) : (
                    t.name
                  )}
                </td>
                <td>
                  {editable && typeof t.expect === 'boolean' ? (
                    <select
                      aria-label={`Expected result of test ${i + 1}`}
                      value={String(t.expect)}
                      onChange={(e) => onChange(tests.map((x, j) => (j === i ? { ...x, expect: e.target.value === 'true' } : x)))}
                    >
                      <option value="true">true</option>
                      <option value="false">false</option>
                    </select>
                  ) : (
                    JSON.stringify(t.expect)
                  )}
                </td>
                <td>{o ? (o.pass ? '✓ pass' : `✗ ${o.error ?? `got ${JSON.stringify(o.got)}`}`) : ''}</td>
                {editable && (
                  <td>
                    <button type="button" aria-label={`Remove test ${t.name}`} onClick={() => onChange(tests.filter((_, j) => j !== i))}>
                      ✕
                    </button>
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
      {saved && (
        <section aria-label="Saved tests with coverage" className="coverage" data-testid="coverage">
          <h3>Run the saved tests with coverage</h3>
          <p className="muted">
            Runs the tests saved with {saved.target} on the server, against its saved text (save the draft first to include edits), and
            counts what they cover.
          </p>
          <button type="button" onClick={() => void runSaved()} disabled={savedRunning} data-testid="run-coverage">
            {savedRunning ? 'Running…' : 'Run tests (with coverage)'}
          </button>
          <ErrorBox error={savedError} />
          {saved.report && <TestRunReportView report={saved.report} stale={saved.stale} />}
        </section>
      )}
      {editing && (
        <div>
          <CodeEditor value={text} onChange={setText} extensions={jsonExt} label="Tests as JSON" />
          {textError && (
            <p className="error" role="alert">
              {textError}
            </p>
          )}
          <button type="button" onClick={applyText}>
            Apply
          </button>
        </div>
      )}
    </section>
  );
}
