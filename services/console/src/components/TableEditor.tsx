import { useMemo } from 'react';
import { checkCell, checkColumnPath, type CellProblem } from '@arbiter/rule-lang';
import type { FlowTableNode as TableNode, TableCellRun, TableValue } from '@arbiter/contracts';
import type { TableReasonMarks } from '../lib/reasons.js';

/** DMN 1.4 hit policies, as the flow definition names them. */
const HIT_POLICIES = ['unique', 'any', 'priority', 'first', 'rule order', 'collect'] as const;
const AGGREGATIONS = ['', 'sum', 'min', 'max', 'count'] as const;

/** What a run showed of this table: the matched rules and the evaluated cells. */
export interface TableRunView {
  matched: number[];
  cells: TableCellRun[];
  /** The rows and cells that decided (the node's reasons), when the run asked for them. */
  reasons?: TableReasonMarks;
}

/** The text of an output value in its cell: JSON (`"gold"`, `10`, `null`). */
function valueText(v: TableValue | undefined): string {
  return v === undefined ? '' : JSON.stringify(v);
}

/** An output cell's text as a value: JSON when it parses to a string, number, boolean or null, else the text itself. */
function parseValue(text: string): TableValue | undefined {
  if (text.trim() === '') return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) return v as TableValue;
  } catch {
    // a bare word is a string
  }
  return text;
}

function move<T>(xs: readonly T[], from: number, to: number): T[] {
  const out = [...xs];
  if (to < 0 || to >= out.length) return out;
  const [x] = out.splice(from, 1);
  out.splice(to, 0, x);
  return out;
}

/** Cell checks by text: a grid re-checks every cell on each edit, and most texts repeat (`-`, `>= 18`). */
const checked = new Map<string, CellProblem | null>();
function cellProblem(text: string): CellProblem | null {
  let p = checked.get(text);
  if (p === undefined) {
    if (checked.size > 5000) checked.clear();
    p = checkCell(text);
    checked.set(text, p);
  }
  return p;
}

function problemText(p: CellProblem): string {
  return `line ${p.line}, column ${p.column}: ${p.detail}`;
}

/**
 * A decision-table node as a grid: one column per input (its name and path), one per output, one
 * row per rule. Rows and columns can be added, moved and deleted; the hit policy is picked from a
 * list. Every cell is checked as the user types, by the rule language's own parser (the same
 * check the server runs on save): a cell that does not parse is underlined, with the message and
 * position in its title. After a run, the rules that matched are highlighted and each evaluated
 * cell shows whether it held; with the run's reasons, the deciding rows are outlined and the deciding
 * cells coloured (green held, red did not). After a run of the saved tests, the rows no test matched are marked.
 */
export function TableEditor({
  nodeId,
  node,
  onChange,
  run,
  editable = true,
  uncovered,
}: {
  nodeId: string;
  node: TableNode;
  onChange: (node: TableNode) => void;
  run?: TableRunView | null;
  editable?: boolean;
  /** Rows (index from 0) the saved tests never matched, with the title saying so. */
  uncovered?: ReadonlyMap<number, string>;
}) {
  const inputs = node.inputs ?? [];
  const outputs = node.outputs ?? [];
  const rules = node.rules ?? [];
  const matched = new Set(run?.matched ?? []);
  const evaluated = useMemo(() => new Map((run?.cells ?? []).map((c) => [`${c.rule}:${c.input}`, c.result])), [run]);
  const cellProblems = useMemo(() => rules.map((r) => inputs.map((_, c) => cellProblem(r.when?.[c] ?? '-'))), [rules, inputs]);
  const pathProblems = useMemo(() => inputs.map((i) => checkColumnPath(i.path ?? '')), [inputs]);
  const set = (patch: Partial<TableNode>) => onChange({ ...node, ...patch });
  const setRule = (r: number, rule: TableNode['rules'][number]) => set({ rules: rules.map((x, i) => (i === r ? rule : x)) });

  const addInput = () =>
    set({
      inputs: [...inputs, { name: `input${inputs.length + 1}`, path: 'applicant.value' }],
      rules: rules.map((r) => ({ ...r, when: [...(r.when ?? []), '-'] })),
    });
  const deleteInput = (c: number) =>
    set({ inputs: inputs.filter((_, i) => i !== c), rules: rules.map((r) => ({ ...r, when: (r.when ?? []).filter((_, i) => i !== c) })) });
  const moveInput = (c: number, to: number) =>
    set({ inputs: move(inputs, c, to), rules: rules.map((r) => ({ ...r, when: move(r.when ?? [], c, to) })) });
  const addOutput = () => set({ outputs: [...outputs, { name: `output${outputs.length + 1}` }] });
  const deleteOutput = (o: number) => {
    const name = outputs[o].name;
    set({
      outputs: outputs.filter((_, i) => i !== o),
      rules: rules.map((r) => ({ ...r, then: Object.fromEntries(Object.entries(r.then ?? {}).filter(([k]) => k !== name)) })),
    });
  };
  const renameOutput = (o: number, name: string) => {
    const old = outputs[o].name;
    set({
      outputs: outputs.map((x, i) => (i === o ? { ...x, name } : x)),
      rules: rules.map((r) => ({
        ...r,
        then: Object.fromEntries(Object.entries(r.then ?? {}).map(([k, v]) => [k === old ? name : k, v])),
      })),
    });
  };
  const addRule = () => set({ rules: [...rules, { when: inputs.map(() => '-'), then: {} }] });

  const reasonOf = (r: number, c: number): string | undefined => {
    const deciding = run?.reasons?.cells.get(`${r}:${c}`);
    return deciding === undefined ? undefined : String(deciding);
  };
  const cellClass = (r: number, c: number): string => {
    const classes = ['cell'];
    if (cellProblems[r]?.[c]) classes.push('cell-error');
    const result = evaluated.get(`${r}:${c}`);
    if (result === true) classes.push('cell-true');
    if (result === false) classes.push('cell-false');
    const deciding = run?.reasons?.cells.get(`${r}:${c}`);
    if (deciding !== undefined) classes.push(deciding ? 'reason-true' : 'reason-false');
    return classes.join(' ');
  };

  return (
    <div className="table-editor" data-testid={`table-editor-${nodeId}`}>
      <div className="table-toolbar">
        <label>
          Hit policy{' '}
          <select
            value={node.hitPolicy}
            disabled={!editable}
            data-testid="hit-policy"
            onChange={(e) => {
              const hitPolicy = e.target.value as TableNode['hitPolicy'];
              const { aggregation: _drop, ...rest } = node;
              onChange(hitPolicy === 'collect' ? { ...node, hitPolicy } : { ...rest, hitPolicy });
            }}
          >
            {HIT_POLICIES.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        {node.hitPolicy === 'collect' && (
          <label>
            Aggregation{' '}
            <select
              value={node.aggregation ?? ''}
              disabled={!editable}
              data-testid="aggregation"
              onChange={(e) => {
                const { aggregation: _drop, ...rest } = node;
                onChange(e.target.value === '' ? rest : { ...rest, aggregation: e.target.value as NonNullable<TableNode['aggregation']> });
              }}
            >
              {AGGREGATIONS.map((a) => (
                <option key={a} value={a}>
                  {a === '' ? 'none (list)' : a}
                </option>
              ))}
            </select>
          </label>
        )}
        {editable && (
          <>
            <button type="button" onClick={addRule} data-testid="add-rule">
              + Rule
            </button>
            <button type="button" onClick={addInput} data-testid="add-input">
              + Input
            </button>
            <button type="button" onClick={addOutput} data-testid="add-output">
              + Output
            </button>
          </>
        )}
      </div>
      <div className="table-scroll">
        <table className="decision-table" aria-label={`Decision table ${nodeId}`}>
          <thead>
            <tr>
              <th scope="col">#</th>
              {inputs.map((input, c) => (
                <th key={`i${c}`} scope="col" className="input-head">
                  <input
                    aria-label={`Input ${c + 1} name`}
                    value={input.name}
                    readOnly={!editable}
                    onChange={(e) => set({ inputs: inputs.map((x, i) => (i === c ? { ...x, name: e.target.value } : x)) })}
                  />
                  <input
                    aria-label={`Input ${c + 1} path`}
                    className={pathProblems[c] ? 'cell-error' : ''}
                    aria-invalid={pathProblems[c] ? 'true' : 'false'}
                    title={pathProblems[c] ? problemText(pathProblems[c]) : input.path}
                    value={input.path}
                    readOnly={!editable}
                    onChange={(e) => set({ inputs: inputs.map((x, i) => (i === c ? { ...x, path: e.target.value } : x)) })}
                  />
                  {editable && (
                    <span className="col-actions">
                      <button type="button" aria-label={`Move input ${c + 1} left`} onClick={() => moveInput(c, c - 1)} disabled={c === 0}>
                        ←
                      </button>
                      <button
                        type="button"
                        aria-label={`Move input ${c + 1} right`}
                        onClick={() => moveInput(c, c + 1)}
                        disabled={c === inputs.length - 1}
                      >
                        →
                      </button>
                      <button type="button" aria-label={`Delete input ${c + 1}`} onClick={() => deleteInput(c)}>
                        ×
                      </button>
                    </span>
                  )}
                </th>
              ))}
              {outputs.map((output, o) => (
                <th key={`o${o}`} scope="col" className="output-head">
                  <input
                    aria-label={`Output ${o + 1} name`}
                    value={output.name}
                    readOnly={!editable}
                    onChange={(e) => renameOutput(o, e.target.value)}
                  />
                  {editable && (
                    <span className="col-actions">
                      <button
                        type="button"
                        aria-label={`Delete output ${o + 1}`}
                        onClick={() => deleteOutput(o)}
                        disabled={outputs.length === 1}
                      >
                        ×
                      </button>
                    </span>
                  )}
                </th>
              ))}
              {editable && <th scope="col">Rule</th>}
            </tr>
          </thead>
          <tbody>
            {rules.map((rule, r) => (
              <tr
                key={r}
                className={
                  [matched.has(r) ? 'matched' : '', uncovered?.has(r) ? 'uncovered' : '', run?.reasons?.rows.has(r) ? 'deciding' : '']
                    .filter(Boolean)
                    .join(' ') || undefined
                }
                data-rule={r}
                data-matched={matched.has(r) ? 'true' : 'false'}
                data-deciding={run?.reasons?.rows.has(r) ? String(run.reasons.rows.get(r)) : undefined}
                data-uncovered={uncovered?.has(r) ? 'true' : undefined}
                title={uncovered?.get(r)}
              >
                <th scope="row">{r + 1}</th>
                {inputs.map((_, c) => {
                  const problem = cellProblems[r]?.[c] ?? null;
                  return (
                    <td key={`i${c}`} className={cellClass(r, c)} data-reason={reasonOf(r, c)}>
                      <input
                        aria-label={`Rule ${r + 1} ${inputs[c].name}`}
                        aria-invalid={problem ? 'true' : 'false'}
                        title={problem ? problemText(problem) : undefined}
                        data-cell={`${r}:${c}`}
                        value={rule.when?.[c] ?? ''}
                        readOnly={!editable}
                        onChange={(e) =>
                          setRule(r, { ...rule, when: inputs.map((__, i) => (i === c ? e.target.value : (rule.when?.[i] ?? '-'))) })
                        }
                      />
                      {problem && (
                        <span className="cell-problem" role="note">
                          {problemText(problem)}
                        </span>
                      )}
                    </td>
                  );
                })}
                {outputs.map((output, o) => (
                  <td key={`o${o}`} className="cell output">
                    <input
                      aria-label={`Rule ${r + 1} ${output.name}`}
                      value={valueText(rule.then?.[output.name])}
                      placeholder={output.default !== undefined ? valueText(output.default) : 'null'}
                      readOnly={!editable}
                      onChange={(e) => {
                        const v = parseValue(e.target.value);
                        const then = { ...(rule.then ?? {}) };
                        if (v === undefined) delete then[output.name];
                        else then[output.name] = v;
                        setRule(r, { ...rule, then });
                      }}
                    />
                  </td>
                ))}
                {editable && (
                  <td className="row-actions">
                    <button
                      type="button"
                      aria-label={`Move rule ${r + 1} up`}
                      onClick={() => set({ rules: move(rules, r, r - 1) })}
                      disabled={r === 0}
                    >
                      ↑
                    </button>
                    <button
                      type="button"
                      aria-label={`Move rule ${r + 1} down`}
                      onClick={() => set({ rules: move(rules, r, r + 1) })}
                      disabled={r === rules.length - 1}
                    >
                      ↓
                    </button>
                    <button
                      type="button"
                      aria-label={`Delete rule ${r + 1}`}
                      onClick={() => set({ rules: rules.filter((_, i) => i !== r) })}
                    >
                      ×
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
