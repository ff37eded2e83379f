import { useEffect, useMemo, useState } from 'react';
import { json } from '@codemirror/lang-json';
import { useSession } from '../lib/session.js';
import { uncoveredRows } from '../lib/coverage.js';
import { nodeSentences, tableReasonMarks } from '../lib/reasons.js';
import type { ArbiterClient } from '@arbiter/sdk/client';
import type { FlowDefinition, FlowRecord, FlowRunResponse, FlowTableNode, FlowTableNodeRun } from '@arbiter/contracts';
import { CodeEditor } from '../editor/CodeEditor.js';
import { FlowGraph } from '../components/FlowGraph.js';
import { TableEditor, type TableRunView } from '../components/TableEditor.js';
import { ErrorBox } from '../components/ErrorBox.js';
import { parseData } from '../components/RuleWorkbench.js';
import { RecordPage, type EditorSlotProps, type RecordKind } from './RecordPage.js';

function parseDefinition(text: string): FlowDefinition {
  const parsed = JSON.parse(text) as FlowDefinition;
  if (!parsed || typeof parsed !== 'object' || typeof parsed.nodes !== 'object' || parsed.nodes === null) {
    throw new Error('a flow definition is {"start": "<node id>", "nodes": {...}}');
  }
  return parsed;
}

function flowKind(api: ArbiterClient): RecordKind<FlowRecord> {
  return {
    noun: 'flow',
    plural: 'flows',
    endpoints: api.flows,
    idOf: (r) => r.flowId,
    contentOf: (r) => JSON.stringify(r.definition, null, 2),
    contentBody: (text) => {
      try {
        return { definition: parseDefinition(text) };
      } catch (err) {
        throw new Error(`Definition: ${(err as Error).message}`, { cause: err });
      }
    },
    runTest: async (text, data) => {
      const r = await api.flows.test(parseDefinition(text), data as Record<string, unknown>);
      if (r.error) throw new Error(r.error);
      return r.result;
    },
    impactAnalysis: true,
  };
}

const jsonExt = [json()];

/** The names of the policies the definition's policy nodes call, fetched once per base id (a base not found keeps its id). */
function usePolicyNames(api: ArbiterClient, definition: FlowDefinition | null): ReadonlyMap<string, string> {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const [asked] = useState(() => new Set<string>());
  const wanted = useMemo(
    () =>
      [
        ...new Set(
          Object.values(definition?.nodes ?? {}).flatMap((n) => (n?.type === 'policy' && typeof n.baseId === 'string' ? [n.baseId] : [])),
        ),
      ].join(' '),
    [definition],
  );
  useEffect(() => {
    for (const baseId of wanted.split(' ').filter(Boolean)) {
      if (asked.has(baseId)) continue;
      asked.add(baseId);
      api.policies.get(baseId).then(
        (p) => setNames((m) => new Map(m).set(baseId, p.name)),
        () => undefined, // an unknown or malformed id keeps the short id; saving reports it
      );
    }
  }, [api, wanted, asked]);
  return names;
}

/** The flow's definition (JSON), its graph, a grid per decision table, and test runs whose path (and matched rules) are highlighted. */
function FlowEditor({ content, setContent, data, setData, baseId, readOnlyReason, uncovered }: EditorSlotProps) {
  const { api } = useSession();
  const [result, setResult] = useState<FlowRunResponse | null>(null);
  // What the result on screen ran: the definition (null for a run of the stored flow) and the data.
  const [ran, setRan] = useState<{ content: string | null; data: string }>({ content: null, data: '' });
  const [error, setError] = useState<unknown>(null);
  const definition = useMemo(() => {
    try {
      return parseDefinition(content);
    } catch {
      return null;
    }
  }, [content]);
  const names = usePolicyNames(api, definition);

  const run = async (stored: boolean) => {
    setError(null);
    const parsed = parseData(data);
    if (!parsed.ok) return setError(new Error(parsed.error));
    try {
      const input = parsed.value as Record<string, unknown>;
      // With reasons: each node says why it came out, a table node which rows and cells decided.
      if (stored) setResult(await api.flows.run(baseId, input, { reasons: true }));
      else {
        if (!definition) throw new Error('The definition is not valid JSON');
        setResult(await api.flows.test(definition, input, { reasons: true }));
      }
      setRan({ content: stored ? null : content, data });
    } catch (err) {
      setError(err);
    }
  };

  const stale =
    result === null
      ? null
      : ran.content !== null && ran.content !== content
        ? definition
          ? 'Out of date: the definition changed since this run'
          : 'Out of date: the definition changed since this run and is no longer valid JSON'
        : ran.data !== data
          ? 'Out of date: the data changed since this run'
          : null;
  const path = stale ? [] : (result?.path?.map((s) => s.nodeId) ?? []);
  const tables = definition ? Object.entries(definition.nodes).filter((e): e is [string, FlowTableNode] => e[1]?.type === 'table') : [];
  const tableRuns = new Map<string, TableRunView>(
    (stale ? [] : (result?.nodes ?? []))
      .filter((n): n is FlowTableNodeRun => 'type' in n && n.type === 'table')
      .map((n) => [n.nodeId, { matched: n.matched, cells: n.cells, reasons: tableReasonMarks(n.reasons) }]),
  );
  const sentences = stale || result === null ? [] : nodeSentences(result.nodes ?? []);
  /** The grid's edit, written back into the definition text (the JSON editor follows). */
  const setTable = (id: string, node: FlowTableNode) => {
    if (!definition) return;
    setContent(JSON.stringify({ ...definition, nodes: { ...definition.nodes, [id]: node } }, null, 2));
  };
  return (
    <div className="workbench">
      <div className="panes">
        <section className="pane" aria-label="Definition">
          <h2>Definition (JSON)</h2>
          {readOnlyReason && (
            <p className="read-only-note" role="note" data-testid="read-only-note">
              {readOnlyReason}
            </p>
          )}
          <CodeEditor
            value={content}
            onChange={setContent}
            extensions={jsonExt}
            label="Flow definition"
            minHeight="14rem"
            readOnly={readOnlyReason !== null}
          />
        </section>
        <section className="pane" aria-label="Graph">
          <h2>Graph</h2>
          <div className="graph-scroll">
            {definition ? (
              <FlowGraph definition={definition} path={path} names={names} />
            ) : (
              <p className="error">The definition is not valid JSON.</p>
            )}
          </div>
        </section>
      </div>
      {tables.map(([id, node]) => (
        <section key={id} className="pane" aria-label={`Decision table ${id}`}>
          <h2>Decision table {id}</h2>
          <TableEditor
            nodeId={id}
            node={node}
            onChange={(n) => setTable(id, n)}
            run={tableRuns.get(id) ?? null}
            editable={readOnlyReason === null}
            uncovered={uncovered ? uncoveredRows(uncovered, id) : undefined}
          />
        </section>
      ))}
      <section className="pane" aria-label="Data">
        <h2>Data (JSON)</h2>
        <CodeEditor value={data} onChange={setData} extensions={jsonExt} label="Data editor" minHeight="6rem" />
      </section>
      <div className="actions">
        <button type="button" onClick={() => void run(false)} data-testid="run">
          Test run (this definition)
        </button>
        <button type="button" onClick={() => void run(true)} data-testid="run-stored">
          Run stored flow by base id
        </button>
      </div>
      <ErrorBox error={error} />
      {result && (
        <section
          className={stale ? 'run-result stale' : 'run-result'}
          aria-label="Flow result"
          data-testid="run-result"
          data-stale={stale !== null}
        >
          {stale && (
            <p className="stale-note" role="status" data-testid="run-stale">
              {stale}: this result and path are from the previous run. Run again.
            </p>
          )}
          <p>
            Result: <strong data-testid="run-value">{JSON.stringify(result.result)}</strong>
          </p>
          {result.error && <p className="error">{result.error}</p>}
          {sentences.map((n) => (
            <p key={n.nodeId} className="reasons-sentence" data-testid="reasons-sentence" data-node={n.nodeId} role="note">
              <strong>{n.nodeId}: </strong>
              {n.sentence}
            </p>
          ))}
          <p>Path: {path.join(' → ')}</p>
          {[...tableRuns].map(([id, t]) => (
            <p key={id} data-testid={`matched-${id}`}>
              Table {id}:{' '}
              {t.matched.length === 0
                ? 'no rule matched'
                : `rule${t.matched.length === 1 ? '' : 's'} ${t.matched.map((r) => r + 1).join(', ')} matched`}
            </p>
          ))}
        </section>
      )}
    </div>
  );
}

export function FlowPage({ id }: { id: string }) {
  const { api } = useSession();
  const kind = useMemo(() => flowKind(api), [api]);
  return <RecordPage id={id} kind={kind} renderEditor={(p) => <FlowEditor {...p} />} initialData={'{\n  \n}\n'} />;
}
