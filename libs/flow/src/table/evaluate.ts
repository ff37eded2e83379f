import type { TableCellRun, TableOutputObject, TableResult, TableValue } from '@arbiter/contracts';
import type { CellRun, CellRunError, Reasons, StepBudgetLike } from '@arbiter/rule-lang';
import type { CompiledTable } from './compile.js';
import { reasonRows, tableReasons, type RowCells } from './reasons.js';

/** Engine error codes of a table run (HTTP 200, like a policy's). */
export const TABLE_NOT_UNIQUE = 'table_not_unique';
export const TABLE_CONFLICT = 'table_conflict';

/** What one table node gives. */
export interface TableOutcome {
  result: TableResult;
  /** Matching rules (0-based): the one chosen first for `priority`, else in rule order. */
  matched: number[];
  cells: TableCellRun[];
  trace: string[];
  error?: string;
  errorCode?: string;
  /** Why the result came out (docs/LANGUAGE.md §10.4): only when asked. */
  reasons?: Reasons;
}

/** Options of {@link evaluateTable}. */
export interface TableRunOptions {
  trace: boolean;
  now?: Date | number;
  /** Say why: the rows that matched with their cells, or each row's first failing cell. */
  reasons?: boolean;
}

const json = (v: unknown): string => JSON.stringify(v);

/**
 * Runs a compiled table on `data` under its hit policy (DMN 1.4 §8.2.8):
 * - `unique`: at most one rule may match; more is the engine error `table_not_unique`;
 * - `any`: every matching rule must give the same outputs, else `table_conflict`;
 * - `priority`: the matching rule whose outputs come first in the outputs' `values` order
 *   (outputs compared in order; ties go to the earlier rule);
 * - `first`: the first matching rule in rule order (later rules are not evaluated);
 * - `rule order`: every match's outputs, in rule order;
 * - `collect`: every match's outputs (in rule order), or with `aggregation` their `sum`, `min`,
 *   `max` (nulls ignored) or `count`, as `{<output>: value}`.
 * No match: single-hit policies give the defaults object (each output's default, else null);
 * `rule order` and `collect` give `[]`, or `[defaults]` when an output declares a default;
 * `sum`/`min`/`max` give the output's default, else null; `count` gives 0.
 * The cells count against `budget` like a policy's comparisons (advancing `used`).
 */
export function evaluateTable(
  nodeId: string,
  table: CompiledTable,
  data: unknown,
  budget: StepBudgetLike,
  options: TableRunOptions,
): TableOutcome {
  const { node } = table;
  const stopAtFirst = node.hitPolicy === 'first';
  let matched: number[];
  let cells: TableCellRun[] = [];
  let lines: string[] | null = null;
  let error: CellRunError | null;
  let rows: RowCells | null = null;
  const used = budget.used;
  const scanned = options.trace ? null : table.cells.scan(data, { stepBudget: budget, now: options.now }, stopAtFirst);
  if (options.reasons === true && scanned !== null && scanned.error === null) {
    // Reasons without a trace: the untraced scan decides, and only the rows the reasons show are traced (reasons.ts).
    ({ matched, error } = scanned);
    rows = reasonRows(table, data, matched, budget.limit, options.now);
  } else if (options.trace || options.reasons === true) {
    // With reasons, a scan stopped by an error is done again, traced, from the same budget: the failing cell is in the reasons.
    if (scanned !== null) budget.used = used;
    if (options.trace)
      lines = [`table "${nodeId}" [${node.hitPolicy}${node.aggregation ? ` ${node.aggregation}` : ''}]: ${node.rules.length} rules`];
    if (options.reasons === true) rows = new Map();
    ({ matched, cells, error } = tracedRows(table, data, budget, options, lines, stopAtFirst, rows));
    if (!options.trace) cells = [];
  } else {
    ({ matched, error } = scanned!);
  }
  if (error !== null) {
    const failed = fail(lines, cells, matched, noMatchResult(table), error.message, error.code);
    if (rows !== null) failed.reasons = tableReasons(nodeId, table, rows, [], failed.result, error);
    return failed;
  }
  const outputs = table.outputs;
  let result: TableResult;
  switch (node.hitPolicy) {
    case 'unique':
      if (matched.length > 1) {
        return withReasons(
          nodeId,
          table,
          rows,
          fail(
            lines,
            cells,
            matched,
            noMatchResult(table),
            `table \`${nodeId}\`: rules ${list(matched)} match, but the hit policy \`unique\` allows one`,
            TABLE_NOT_UNIQUE,
          ),
        );
      }
      result = matched.length === 1 ? outputs[matched[0]] : noMatchResult(table);
      break;
    case 'any': {
      const differs = matched.find((r) => !sameOutputs(outputs[r], outputs[matched[0]]));
      if (differs !== undefined) {
        return withReasons(
          nodeId,
          table,
          rows,
          fail(
            lines,
            cells,
            matched,
            noMatchResult(table),
            `table \`${nodeId}\`: rules ${matched[0] + 1} and ${differs + 1} match with different outputs, but the hit policy \`any\` needs them to agree`,
            TABLE_CONFLICT,
          ),
        );
      }
      result = matched.length > 0 ? outputs[matched[0]] : noMatchResult(table);
      break;
    }
    case 'priority':
      matched.sort((a, b) => compareRanks(table.ranks[a], table.ranks[b]) || a - b);
      result = matched.length > 0 ? outputs[matched[0]] : noMatchResult(table);
      break;
    case 'first':
      result = matched.length > 0 ? outputs[matched[0]] : noMatchResult(table);
      break;
    case 'rule order':
      result = matched.length > 0 ? matched.map((r) => outputs[r]) : noMatchResult(table);
      break;
    case 'collect':
      result = node.aggregation ? aggregate(table, matched) : matched.length > 0 ? matched.map((r) => outputs[r]) : noMatchResult(table);
      break;
  }
  lines?.push(`result: ${json(result)}`);
  return withReasons(nodeId, table, rows, { result, matched, cells, trace: lines ?? [] });
}

/** `outcome` with its reasons when they were asked for (`rows`: the cells of each row evaluated). */
function withReasons(nodeId: string, table: CompiledTable, rows: RowCells | null, outcome: TableOutcome): TableOutcome {
  if (rows !== null) {
    const error = outcome.error === undefined ? null : { message: outcome.error };
    outcome.reasons = tableReasons(nodeId, table, rows, outcome.matched, outcome.result, error);
  }
  return outcome;
}

/** The rules that match, one by one, with each rule's trace lines and evaluated cells. */
function tracedRows(
  table: CompiledTable,
  data: unknown,
  budget: StepBudgetLike,
  options: TableRunOptions,
  lines: string[] | null,
  stopAtFirst: boolean,
  rows: RowCells | null,
): { matched: number[]; cells: TableCellRun[]; error: CellRunError | null } {
  // Reasons alone read the cells, not their lines: none are written then.
  const run = table.cells.begin(data, { stepBudget: budget, trace: true, now: options.now, lines: lines !== null });
  const matched: number[] = [];
  try {
    for (let r = 0; r < table.cells.rows; r++) {
      const from = run.cells.length;
      const hit = run.matches(r);
      if (lines !== null) traceRule(lines, run, from, r, hit, table.outputs[r]);
      if (rows !== null) rows.set(r, run.cells.slice(from));
      if (run.error !== null) break;
      if (hit) {
        matched.push(r);
        if (stopAtFirst) break;
      }
    }
  } finally {
    run.end();
  }
  const cells = run.cells.map((c) => ({ rule: c.row, input: c.column, result: c.result }));
  return { matched, cells, error: run.error };
}

function fail(
  lines: string[] | null,
  cells: TableCellRun[],
  matched: number[],
  result: TableResult,
  error: string,
  errorCode: string,
): TableOutcome {
  lines?.push(`error: ${error}`);
  return { result, matched, cells, trace: lines ?? [], error, errorCode };
}

/** `1 and 3`, `1, 3 and 4` (1-based). */
function list(rows: number[]): string {
  const n = rows.map((r) => String(r + 1));
  return n.length <= 1 ? n.join('') : `${n.slice(0, -1).join(', ')} and ${n[n.length - 1]}`;
}

function traceRule(lines: string[], run: CellRun, from: number, row: number, hit: boolean, outputs: TableOutputObject): void {
  lines.push(`  rule ${row + 1}`);
  const cells = run.cells;
  for (let i = from; i < cells.length; i++) lines.push(`    ${i === from ? 'if' : 'and'} ${cells[i].line}`);
  if (run.error === null) lines.push(hit ? `    => match: ${json(outputs)}` : '    => no match');
}

function sameOutputs(a: TableOutputObject, b: TableOutputObject): boolean {
  for (const k of Object.keys(a)) if (a[k] !== b[k]) return false;
  return true;
}

/** Lexicographic over the ranked outputs; a value outside the list (-1) ranks last. */
export function compareRanks(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] < 0 ? Infinity : a[i];
    const y = b[i] < 0 ? Infinity : b[i];
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function noMatchResult(table: CompiledTable): TableResult {
  const { node } = table;
  if (node.hitPolicy === 'rule order' || (node.hitPolicy === 'collect' && node.aggregation === undefined)) {
    return node.outputs.some((o) => o.default !== undefined) ? [table.defaults] : [];
  }
  if (node.aggregation === 'count') return { [node.outputs[0].name]: 0 };
  return table.defaults;
}

/** `collect` with an aggregation over the one output (checked numeric at validation). */
function aggregate(table: CompiledTable, matched: number[]): TableOutputObject {
  const name = table.node.outputs[0].name;
  const agg = table.node.aggregation!;
  if (agg === 'count') return { [name]: matched.length };
  const values = matched.map((r) => table.outputs[r][name]).filter((v): v is number => typeof v === 'number');
  if (values.length === 0) return { [name]: table.defaults[name] };
  let out: TableValue;
  if (agg === 'sum') out = values.reduce((s, v) => s + v, 0);
  else if (agg === 'min') out = Math.min(...values);
  else out = Math.max(...values);
  return { [name]: out };
}
