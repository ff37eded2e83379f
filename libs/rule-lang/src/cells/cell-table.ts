/**
 * A grid of decision-table cells compiled to closures: columns are paths read from the data,
 * rows are conjunctions of cells. Each cell is the comparison `<column's value> <cell>` with the
 * language's semantics (LANGUAGE.md §7: operators, negation, `if present`, `is empty` on an absent
 * property, missing data as an engine error) and its step cost (§8.1: one step per evaluated
 * cell plus the size of what it compares). `-` cells cost nothing. A row stops at its first cell
 * that does not match: cells after it are not evaluated (nor traced).
 */

import type { StepBudgetLike } from '../api-types.js';
import { overBudget, sizeCost } from '../evaluate/budget.js';
import { MISSING, type EvalContext } from '../evaluate/context.js';
import { EvalFailure } from '../evaluate/failure.js';
import { leftMode, operandMode, operandValue } from '../compile/lowering.js';
import { compilePath, planPath, type CompiledPath } from '../compile/paths.js';
import { compileTest } from '../operators/semantics.js';
import type { EngineErrorCode } from '../api-types.js';
import type { ComparisonCondition } from '../ast/types.js';
import { arrow, json, operatorText, valueOperandText } from '../trace/text.js';
import { dayOfInstant } from '../values/dates.js';
import { parseCell, parseColumnPath, type CellProblem, type ParsedCell } from './parse-cell.js';

/** A cell or column that does not parse: `row` is null for a column's path. Indexes count from 0. */
export interface CellTableProblem {
  row: number | null;
  column: number;
  problem: CellProblem;
}

/** Thrown by {@link compileCellTable} with every cell and column that does not parse. */
export class CellTableError extends Error {
  override readonly name = 'CellTableError';
  readonly code = 'parse_error' as const;
  constructor(readonly problems: readonly CellTableProblem[]) {
    super(`${problems.length} cell${problems.length === 1 ? '' : 's'} of the table do not parse`);
  }
}

/** One evaluated cell, recorded only when a trace was asked for. */
export interface CellTrace {
  row: number;
  column: number;
  /** JSON path of the column's value, with the keys actually used. */
  path: string;
  /** The column's value (null when absent). */
  actual: unknown;
  result: boolean;
  /** `if present` skipped the comparison (absent or null value). */
  skipped: boolean;
  error?: string;
  /** The trace line (LANGUAGE.md §10.2 wording): `$.applicant.age = 42: is greater than or equal to 18 -> true`. */
  line: string;
}

/** Options of {@link CompiledCellTable.begin}. */
export interface CellRunOptions {
  /** The budget the cells' steps are counted against (and `used` advanced). */
  stepBudget: StepBudgetLike;
  /** The clock: "today" is this instant's UTC day. Defaults to now. */
  now?: Date | number | undefined;
  /** Record each evaluated cell in `cells`. */
  trace?: boolean;
}

/** The engine error that stopped a table's evaluation. */
export interface CellRunError {
  code: EngineErrorCode;
  message: string;
}

/** One evaluation of the table over one data object. */
export interface CellRun {
  /**
   * Whether every cell of `row` matches; false at the first cell that does not. Never throws:
   * missing data or an exhausted budget answers false and sets {@link error}, after which every
   * row answers false.
   */
  matches(row: number): boolean;
  /** The engine error that stopped the evaluation, if any. */
  readonly error: CellRunError | null;
  /** Evaluated cells in order (with a trace only). */
  readonly cells: readonly CellTrace[];
  /** Writes the steps taken into the budget; call once when done. */
  end(): void;
}

const DATE_RELATIVE = new Set(['period', 'is older than', 'is younger than']);

/** The per-evaluation state the cell closures read. */
interface RunState {
  readonly ctx: EvalContext;
  /** Column values looked up leniently (MISSING when absent). */
  readonly values: unknown[];
  readonly paths: string[];
  readonly trace: CellTrace[] | null;
  /** Per distinct (column, cell text): 0 not evaluated yet, 1 false, 2 true (plain cells without a trace). */
  readonly memo: Uint8Array;
}

type CellFn = (state: RunState, row: number) => boolean;

interface Column {
  /** Lenient lookup (absent → MISSING), done once per evaluation. */
  lenient: CompiledPath;
  /** Strict and `is empty` lookups: run only on an absent value, to raise the language's error. */
  strict: CompiledPath;
  empty: CompiledPath;
}

/** A decision table's cells, compiled. Immutable; evaluate with {@link begin}. */
export interface CompiledCellTable {
  readonly columns: number;
  readonly rows: number;
  begin(data: unknown, options: CellRunOptions): CellRun;
}

/**
 * Compiles a table: `columns` are the inputs' paths, `rows[r][c]` the cell of row r in column c
 * (a row may be shorter: missing cells are `-`). Throws {@link CellTableError} listing every
 * problem. Identical cell texts are parsed once.
 */
export function compileCellTable(columns: readonly string[], rows: readonly (readonly string[])[]): CompiledCellTable {
  const problems: CellTableProblem[] = [];
  const cols: Column[] = [];
  columns.forEach((text, c) => {
    const parsed = parseColumnPath(text);
    if (!parsed.ok) {
      problems.push({ row: null, column: c, problem: parsed.problem });
      return;
    }
    cols[c] = {
      lenient: compilePath(planPath(parsed.path, 'lenient')),
      strict: compilePath(planPath(parsed.path, 'strict')),
      empty: compilePath(planPath(parsed.path, 'empty')),
    };
  });
  const parsedByText = new Map<string, ReturnType<typeof parseCell>>();
  // Cells of the same text in the same column give the same result within one evaluation: one memo slot each.
  const memoIds = new Map<string, number>();
  const grid: (CellFn | null)[][] = [];
  let needsToday = false;
  rows.forEach((cells, r) => {
    const compiled: (CellFn | null)[] = [];
    cells.forEach((text, c) => {
      if (c >= columns.length) return;
      let parsed = parsedByText.get(text);
      if (parsed === undefined) {
        parsed = parseCell(text);
        parsedByText.set(text, parsed);
      }
      if (!parsed.ok) {
        problems.push({ row: r, column: c, problem: parsed.problem });
        return;
      }
      if (parsed.cell.kind === 'comparison' && DATE_RELATIVE.has(parsed.cell.condition.op.name)) needsToday = true;
      if (cols[c] !== undefined) {
        const key = `${c}\u0000${text}`;
        let memoId = memoIds.get(key);
        if (memoId === undefined) {
          memoId = memoIds.size;
          memoIds.set(key, memoId);
        }
        compiled[c] = compileCell(parsed.cell, cols[c], c, memoId);
      }
    });
    // Only evaluated cells are kept, in column order; `-` cells drop out.
    grid.push(compiled.filter((f): f is CellFn => f !== null && f !== undefined));
  });
  if (problems.length > 0) throw new CellTableError(problems);
  return new Table(cols, grid as CellFn[][], needsToday, memoIds.size);
}

class Table implements CompiledCellTable {
  readonly columns: number;
  readonly rows: number;

  constructor(
    private readonly cols: readonly Column[],
    private readonly grid: readonly (readonly CellFn[])[],
    private readonly needsToday: boolean,
    private readonly memoSize: number,
  ) {
    this.columns = cols.length;
    this.rows = grid.length;
  }

  begin(data: unknown, options: CellRunOptions): CellRun {
    const budget = options.stepBudget;
    const now = options.now;
    const today = this.needsToday ? dayOfInstant(now === undefined ? Date.now() : typeof now === 'number' ? now : now.getTime()) : NaN;
    const ctx: EvalContext = {
      data,
      states: EMPTY_STATES,
      today,
      its: undefined,
      itsPath: '',
      trace: null,
      left: budget.limit - budget.used,
      limit: budget.limit,
    };
    const trace = options.trace === true ? [] : null;
    const values: unknown[] = new Array(this.cols.length);
    const paths: string[] = trace ? new Array<string>(this.cols.length) : NO_PATHS;
    for (let c = 0; c < this.cols.length; c++) {
      if (trace) {
        const t = this.cols[c].lenient.getTraced(ctx);
        values[c] = t.value;
        paths[c] = t.jsonPath;
      } else values[c] = this.cols[c].lenient.get(ctx);
    }
    return new Run(this.grid, { ctx, values, paths, trace, memo: new Uint8Array(this.memoSize) }, budget);
  }
}

const EMPTY_STATES = new Uint8Array(0);
const NO_PATHS: string[] = [];

class Run implements CellRun {
  error: CellRunError | null = null;
  private ended = false;

  constructor(
    private readonly grid: readonly (readonly CellFn[])[],
    private readonly state: RunState,
    private readonly budget: StepBudgetLike,
  ) {}

  get cells(): readonly CellTrace[] {
    return this.state.trace ?? [];
  }

  matches(row: number): boolean {
    if (this.error !== null) return false;
    const cells = this.grid[row];
    if (cells === undefined) return false;
    try {
      for (let i = 0; i < cells.length; i++) if (!cells[i](this.state, row)) return false;
      return true;
    } catch (err) {
      if (!(err instanceof EvalFailure)) throw err;
      this.error = { code: err.code, message: err.message };
      return false;
    }
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.budget.used = this.budget.limit - Math.max(0, this.state.ctx.left);
  }
}

/** The closure of one comparison cell in column `column`. */
function compileCell(cell: ParsedCell, col: Column, column: number, memoId: number): CellFn | null {
  if (cell.kind === 'any') return null;
  const c: ComparisonCondition = cell.condition;
  const test = compileTest(c.op.name, c.right);
  const negated = c.op.negated;
  const optional = c.optional;
  const emptyMode = leftMode(c) === 'empty';
  const right: CompiledPath | null = c.right?.kind === 'path' ? compilePath(planPath(c.right.path, operandMode(optional))) : null;
  const getRight = right?.get;
  const operator = operatorText(c.op.name, c.op.written, negated);
  const literal = operandValue(c.right);
  const opName = c.op.name;

  /** The column's value, or the language's error for an absent one (`is empty` takes an absent property as undefined). */
  const left = (state: RunState): unknown => {
    const v = state.values[column];
    if (v !== MISSING) return v;
    if (emptyMode) {
      col.empty.get(state.ctx);
      return undefined;
    }
    col.strict.get(state.ctx);
    return undefined;
  };

  /** The cell's result; records its trace entry when tracing. Throws EvalFailure on missing data. */
  const evaluate = (state: RunState, row: number): boolean => {
    const ctx = state.ctx;
    const trace = state.trace;
    const raw = state.values[column];
    if (optional && (raw === MISSING || raw === null)) {
      if (trace) trace.push(skippedEntry(state, row, column, raw));
      return true;
    }
    let l: unknown;
    let r: unknown;
    try {
      l = left(state);
      if (getRight) r = getRight(ctx);
    } catch (err) {
      if (trace && err instanceof EvalFailure) trace.push(errorEntry(state, row, column, err.message));
      throw err;
    }
    if (optional && (r === MISSING || r === null)) {
      if (trace) trace.push(skippedEntry(state, row, column, raw));
      return true;
    }
    ctx.left -= getRight ? sizeCost(l) + sizeCost(r) : sizeCost(l);
    const positive = test(l, r, ctx.today);
    const result = negated ? !positive : positive;
    if (trace) {
      const operand = right ? ` ${right.written} (= ${json(r)})` : valueOperandText(opName, literal);
      const actual = l === undefined ? null : l;
      const path = state.paths[column];
      trace.push({
        row,
        column,
        path,
        actual,
        result,
        skipped: false,
        line: `${path} = ${json(actual)}: ${operator}${operand}${arrow(result)}`,
      });
    }
    return result;
  };

  // Without a trace, a plain cell (no path operand, no `if present`) on a present value takes this path.
  const plain = getRight === undefined && !optional;
  // One step once the cell finished (its trace entry recorded), as the language counts a comparison.
  return (state, row) => {
    const ctx = state.ctx;
    if (plain && state.trace === null) {
      const v = state.values[column];
      if (v !== MISSING) {
        // A repeated cell is answered from the memo but costs its steps all the same: the count stays that of §8.1.
        ctx.left -= sizeCost(v);
        const memo = state.memo;
        const m = memo[memoId];
        let result: boolean;
        if (m !== 0) result = m === 2;
        else {
          const positive = test(v, undefined, ctx.today);
          result = negated ? !positive : positive;
          memo[memoId] = result ? 2 : 1;
        }
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- an EvalFailure, caught by Run.matches: no stack
        if (--ctx.left < 0) throw overBudget(ctx.limit);
        return result;
      }
    }
    const result = evaluate(state, row);
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- an EvalFailure, caught by Run.matches: no stack
    if (--state.ctx.left < 0) throw overBudget(state.ctx.limit);
    return result;
  };
}

function errorEntry(state: RunState, row: number, column: number, message: string): CellTrace {
  const path = state.paths[column];
  return { row, column, path, actual: null, result: false, skipped: false, error: message, line: `${path}: ${message}` };
}

function skippedEntry(state: RunState, row: number, column: number, raw: unknown): CellTrace {
  const path = state.paths[column];
  return {
    row,
    column,
    path,
    actual: raw === MISSING ? null : raw,
    result: true,
    skipped: true,
    line: `${path}: ${raw === MISSING || raw === null ? 'missing' : json(raw)} (if present) -> skipped, true`,
  };
}
