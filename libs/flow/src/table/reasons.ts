/**
 * A table node's reasons (docs/LANGUAGE.md §10.4): the rows that matched, each with its cells'
 * text and the value each tested; or, when none matched, `no rule matched` with each row's first
 * failing cell (at most {@link MAX_UNMATCHED_ROWS} rows; `count` says how many there were).
 * Built from the cells a traced evaluation records.
 */

import type { TableResult } from '@arbiter/contracts';
import type { CellTrace, Reason, Reasons } from '@arbiter/rule-lang';
import type { CompiledTable } from './compile.js';

/** Rows a `no rule matched` entry lists at most. */
export const MAX_UNMATCHED_ROWS = 20;

/** The cells of each evaluated row, in order. */
export type RowCells = Map<number, CellTrace[]>;

/**
 * The cells of the rows that reasons show, after an untraced scan of `data` found `matched` without
 * an error: the matching rows, or, none matching, the first {@link MAX_UNMATCHED_ROWS} rows. Only
 * those rows run again, traced, on a budget of their own (the scan already counted their steps):
 * their cells are what a traced evaluation of every row records for them, since a row's cells
 * depend only on the data.
 */
export function reasonRows(
  table: CompiledTable,
  data: unknown,
  matched: readonly number[],
  limit: number,
  now: Date | number | undefined,
): RowCells {
  const shown = matched.length > 0 ? matched : Array.from({ length: Math.min(table.cells.rows, MAX_UNMATCHED_ROWS) }, (_, r) => r);
  const run = table.cells.begin(data, { stepBudget: { limit, used: 0 }, trace: true, now, lines: false });
  const rows: RowCells = new Map();
  try {
    for (const r of shown) {
      const from = run.cells.length;
      run.matches(r);
      rows.set(r, run.cells.slice(from));
    }
  } finally {
    run.end();
  }
  return rows;
}

/** `JSON.stringify(v)` ('null' for undefined); finite numbers and booleans, most cell values, without it (same text). */
const json = (v: unknown): string =>
  typeof v === 'number' && Number.isFinite(v)
    ? String(v)
    : typeof v === 'boolean'
      ? String(v)
      : v === undefined
        ? 'null'
        : (JSON.stringify(v) ?? 'null');

/** `$.applicant.age` → `applicant.age`. */
function dataPath(path: string): string {
  return path.startsWith('$.') ? path.slice(2) : path.startsWith('$') ? path.slice(1) : path;
}

function cellReason(nodeId: string, table: CompiledTable, c: CellTrace): Reason {
  const text = table.node.rules[c.row].when[c.column] ?? '';
  const kind = c.error !== undefined ? 'missing' : 'condition';
  const path = dataPath(c.path);
  const at = { line: c.row + 1, column: c.column + 1 };
  if (c.error !== undefined) return { kind, rule: nodeId, text, holds: false, path, error: c.error, ...at };
  if (c.skipped) return { kind, rule: nodeId, text, holds: c.result, path, ...at };
  return { kind, rule: nodeId, text, holds: c.result, path, value: c.actual, ...at };
}

function rowReason(nodeId: string, table: CompiledTable, row: number, holds: boolean, cells: readonly CellTrace[]): Reason {
  return {
    kind: 'table',
    rule: nodeId,
    text: `rule ${row + 1}`,
    holds,
    row: row + 1,
    line: row + 1,
    column: 1,
    because: cells.map((c) => cellReason(nodeId, table, c)),
  };
}

/** How a cell reads in the sentence: `age: >= 18 (16)`. */
function cellWords(table: CompiledTable, c: Reason): string {
  const input = table.node.inputs[c.column - 1]?.name ?? '';
  const value = 'value' in c ? ` (${json(c.value)})` : ' (absent)';
  return `${input}: ${c.text}${value}${c.holds ? '' : ' does not hold'}`;
}

/** The reasons of a table node that ran to its result (or to `error`). */
export function tableReasons(
  nodeId: string,
  table: CompiledTable,
  rows: RowCells,
  matched: readonly number[],
  result: TableResult,
  error: { message: string } | null,
): Reasons {
  const head = `${nodeId} is ${json(result)}`;
  if (error !== null) {
    // Missing data: the cell that met it (its path and the message); else (the step budget) an error entry.
    let cell: CellTrace | undefined;
    for (const cells of rows.values()) cell = cells.find((c) => c.error !== undefined) ?? cell;
    const because: Reason[] = [
      cell !== undefined && /^Missing (selector|property)/.test(error.message)
        ? cellReason(nodeId, table, cell)
        : { kind: 'error', rule: nodeId, text: '', holds: false, error: error.message, line: 0, column: 0 },
    ];
    return { result: false, sentence: `${nodeId} stopped: ${error.message}`, because };
  }
  if (matched.length > 0) {
    const because = matched.map((r) => rowReason(nodeId, table, r, true, rows.get(r) ?? []));
    const said = because.map((b) => `rule ${b.row!} matched (${(b.because ?? []).map((c) => cellWords(table, c)).join(', ')})`);
    return { result: true, sentence: `${head} because ${said.join(' and ')}`, because };
  }
  const total = table.node.rules.length;
  const listed: Reason[] = [];
  for (let r = 0; r < total && listed.length < MAX_UNMATCHED_ROWS; r++) {
    const cells = rows.get(r) ?? [];
    const failing = cells.find((c) => !c.result);
    listed.push(rowReason(nodeId, table, r, false, failing === undefined ? [] : [failing]));
  }
  const said = listed.map((b) => `rule ${b.row!}: ${(b.because ?? []).map((c) => cellWords(table, c)).join(', ') || 'no cell'}`);
  const more = total > listed.length ? `; and ${total - listed.length} more rows` : '';
  const entry: Reason = {
    kind: 'table',
    rule: nodeId,
    text: 'no rule matched',
    holds: false,
    count: total,
    line: 0,
    column: 0,
    because: listed,
  };
  return { result: false, sentence: `${head} because no rule matched (${said.join('; ')}${more})`, because: [entry] };
}
