import { useMemo, useState } from 'react';
import { json } from '@codemirror/lang-json';
import { useSession } from '../lib/session.js';
import type { Api } from '../lib/api.js';
import type { FlowDefinition, FlowRecord, FlowRunResponse } from '@arbiter/contracts';
import { CodeEditor } from '../editor/CodeEditor.js';
import { FlowGraph } from '../components/FlowGraph.js';
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

function flowKind(api: Api): RecordKind<FlowRecord> {
  return {
    noun: 'flow',
    plural: 'flows',
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
      const r = await api.post<FlowRunResponse>('/flow/test', { definition: parseDefinition(text), data });
      if (r.error) throw new Error(r.error);
      return r.result;
    },
  };
}

const jsonExt = [json()];

/** The flow's definition (JSON), its graph, and test runs whose path is highlighted on the graph. */
function FlowEditor({ content, setContent, data, setData, baseId }: EditorSlotProps) {
  const { api } = useSession();
  const [result, setResult] = useState<FlowRunResponse | null>(null);
  const [error, setError] = useState<unknown>(null);
  const definition = useMemo(() => {
    try {
      return parseDefinition(content);
    } catch {
      return null;
    }
  }, [content]);

  const run = async (stored: boolean) => {
    setError(null);
    const parsed = parseData(data);
    if (!parsed.ok) return setError(new Error(parsed.error));
    try {
      if (stored) setResult(await api.post<FlowRunResponse>(`/run/flow/${baseId}`, parsed.value));
      else {
        if (!definition) throw new Error('The definition is not valid JSON');
        setResult(await api.post<FlowRunResponse>('/flow/test', { definition, data: parsed.value }));
      }
    } catch (err) {
      setError(err);
    }
  };

  const path = result?.path?.map((s) => s.nodeId) ?? [];
  return (
    <div className="workbench">
      <div className="panes">
        <section className="pane" aria-label="Definition">
          <h2>Definition (JSON)</h2>
          <CodeEditor value={content} onChange={setContent} extensions={jsonExt} label="Flow definition" minHeight="14rem" />
        </section>
        <section className="pane" aria-label="Graph">
          <h2>Graph</h2>
          <div className="graph-scroll">
            {definition ? <FlowGraph definition={definition} path={path} /> : <p className="error">The definition is not valid JSON.</p>}
          </div>
        </section>
      </div>
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
        <section className="run-result" aria-label="Flow result" data-testid="run-result">
          <p>
            Result: <strong data-testid="run-value">{JSON.stringify(result.result)}</strong>
          </p>
          {result.error && <p className="error">{result.error}</p>}
          <p>Path: {path.join(' → ')}</p>
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
