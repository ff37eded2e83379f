/**
 * A grid of decision-table cells compiled to closures: columns are paths read from the data,
 * rows are conjunctions of cells. Each cell is the comparison `<column's value> <cell>` with the
 * language's semantics (LANGUAGE.md §7: operators, negation, `if present`, `is empty` on an absent
 * property, missing data as an engine error) and its step cost (§8.1: one step per evaluated
 * cell plus the size of what it compares). `-` cells cost nothing. A row stops at its first cell
 * that does not match: cells after it are not evaluated (nor traced).
 *
 * Two ways to evaluate: `begin` walks the rows one by one through each cell's closure (with a
 * trace when asked); `scan` (no trace) gives the same rows, errors and steps faster, testing the
 * common cell forms inline (fast-cells.ts) against each column's value prepared once.
 */

import type { StepBudgetLike } from '../api-types.js';
import { overBudget, sizeCost } from '../evaluate/budget.js';
import { MISSING, type EvalContext } from '../evaluate/context.js';
import { EvalFailure } from '../evaluate/failure.js';
import { leftMode, operandMode, operandValue } from '../compile/lowering.js';
import { compilePath, planPath, type CompiledPath } from '../compile/paths.js';
import { compileTest, usesClock } from '../operators/index.js';
import type { EngineErrorCode } from '../api-types.js';
import type { ComparisonCondition } from '../ast/types.js';
import { arrow, json, operatorText, valueOperandText } from '../trace/text.js';
import { nowInDays } from '../values/dates.js';
import { toNumber } from '../values/numbers.js';
import {
  ColumnIds,
  GENERIC,
  IN_SET,
  NUM_EQ,
  NUM_GT,
  NUM_GTE,
  NUM_LT,
  NUM_LTE,
  specialiseCell,
  TEXT_EQ,
  type FastCell,
} from './fast-cells.js';
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
  /** With `trace`: write each cell's `line` (default true); false leaves it '' (reasons read the cells, not the lines). */
  lines?: boolean;
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

/** The per-evaluation state the cell closures read. */
interface RunState {
  readonly ctx: EvalContext;
  /** Column values looked up leniently (MISSING when absent). */
  readonly values: unknown[];
  readonly paths: string[];
  readonly trace: CellTrace[] | null;
  /** Whether trace entries get their `line`. */
  readonly lines: boolean;
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

/** The rows of one untraced evaluation that match, and the engine error that stopped it, if any. */
export interface CellScan {
  /** Matching rows in order (only the first with `firstOnly`); those found before an error. */
  matched: number[];
  error: CellRunError | null;
}

/** A decision table's cells, compiled. Immutable; evaluate with {@link begin} or {@link scan}. */
export interface CompiledCellTable {
  readonly columns: number;
  readonly rows: number;
  begin(data: unknown, options: CellRunOptions): CellRun;
  /**
   * Evaluates every row without a trace (up to the first match with `firstOnly`) and writes the
   * steps into the budget: the rows, error and steps of `matches` over each row then `end`, faster.
   */
  scan(data: unknown, options: Omit<CellRunOptions, 'trace'>, firstOnly: boolean): CellScan;
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
  const scanRows: ScanCell[][] = [];
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
      if (parsed.cell.kind === 'comparison' && usesClock(parsed.cell.condition.op.name)) needsToday = true;
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
    const kept: ScanCell[] = [];
    compiled.forEach((fn, c) => {
      if (fn === null || fn === undefined) return;
      const parsed = parsedByText.get(cells[c])!;
      kept.push({ column: c, fn, fast: parsed.ok && parsed.cell.kind === 'comparison' ? specialiseCell(parsed.cell.condition) : null });
    });
    scanRows.push(kept);
  });
  if (problems.length > 0) throw new CellTableError(problems);
  return new Table(cols, grid as CellFn[][], needsToday, memoIds.size, new Scan(cols.length, scanRows));
}

class Table implements CompiledCellTable {
  readonly columns: number;
  readonly rows: number;

  constructor(
    private readonly cols: readonly Column[],
    private readonly grid: readonly (readonly CellFn[])[],
    private readonly needsToday: boolean,
    private readonly memoSize: number,
    private readonly fast: Scan,
  ) {
    this.columns = cols.length;
    this.rows = grid.length;
  }

  private context(data: unknown, options: Omit<CellRunOptions, 'trace'>): EvalContext {
    const budget = options.stepBudget;
    const now = options.now;
    const today = this.needsToday ? nowInDays(now === undefined ? Date.now() : typeof now === 'number' ? now : now.getTime()) : NaN;
    return {
      data,
      states: EMPTY_STATES,
      today,
      its: undefined,
      itsPath: '',
      trace: null,
      left: budget.limit - budget.used,
      limit: budget.limit,
    };
  }

  scan(data: unknown, options: Omit<CellRunOptions, 'trace'>, firstOnly: boolean): CellScan {
    const ctx = this.context(data, options);
    const n = this.cols.length;
    const values: unknown[] = new Array(n);
    for (let c = 0; c < n; c++) {
      const v = this.cols[c].lenient.get(ctx);
      // An absent value is an error or `if present`/`is empty` business: the general path decides.
      if (v === MISSING) return this.scanGeneric(data, options, firstOnly);
      values[c] = v;
    }
    const state: RunState = {
      ctx,
      values,
      paths: NO_PATHS,
      trace: null,
      lines: false,
      memo: this.fast.generic ? new Uint8Array(this.memoSize) : NO_MEMO,
    };
    const out = this.fast.run(state, firstOnly);
    const budget = options.stepBudget;
    budget.used = budget.limit - Math.max(0, ctx.left);
    return out;
  }

  private scanGeneric(data: unknown, options: Omit<CellRunOptions, 'trace'>, firstOnly: boolean): CellScan {
    const run = this.begin(data, options);
    const matched: number[] = [];
    for (let r = 0; r < this.rows; r++) {
      if (run.matches(r)) {
        matched.push(r);
        if (firstOnly) break;
      }
      if (run.error !== null) break;
    }
    run.end();
    return { matched, error: run.error };
  }

  begin(data: unknown, options: CellRunOptions): CellRun {
    const budget = options.stepBudget;
    const ctx = this.context(data, options);
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
    return new Run(this.grid, { ctx, values, paths, trace, lines: options.lines !== false, memo: new Uint8Array(this.memoSize) }, budget);
  }
}

const EMPTY_STATES = new Uint8Array(0);
const NO_PATHS: string[] = [];
const NO_MEMO = new Uint8Array(0);

/** One kept (not `-`) cell of a row: its column, its closure, and its specialised form if it has one. */
interface ScanCell {
  column: number;
  fn: CellFn;
  fast: FastCell | null;
}

const NEGATED = 1;
const OPTIONAL = 2;

/**
 * The untraced evaluation: every kept cell of every row, flattened in row order. The specialised
 * cells (fast-cells.ts) are tested inline against what is prepared once per evaluation for each
 * column: its value's number, the ids of its text and number among those the column's cells list,
 * and the steps a cell on it costs (§8.1: one, plus the size of the value). Generic cells run
 * their closure.
 */
class Scan {
  /** Cells of row r: indexes rowStart[r] to rowStart[r + 1]. */
  private readonly rowStart: Int32Array;
  private readonly kind: Uint8Array;
  private readonly column: Int32Array;
  private readonly flags: Uint8Array;
  /** The number of an ordering or NUM_EQ, the text id of a TEXT_EQ. */
  private readonly operand: Float64Array;
  /** Per IN_SET cell: 1 at the ids it lists. */
  private readonly members: (Uint8Array | null)[];
  private readonly fns: CellFn[];
  /** Per column: the ids of the texts and numbers its cells list, or null when none does. */
  private readonly ids: (ColumnIds | null)[];
  /** Some cell is generic: the run needs a memo for them. */
  readonly generic: boolean;
  // Scratch per column, refilled by each evaluation: a scan runs to its end synchronously and never re-enters.
  private readonly cost: Float64Array;
  private readonly nums: Float64Array;
  private readonly textId: Int32Array;
  private readonly numId: Int32Array;

  constructor(
    private readonly columns: number,
    rows: readonly (readonly ScanCell[])[],
  ) {
    const size = rows.reduce((s, r) => s + r.length, 0);
    this.rowStart = new Int32Array(rows.length + 1);
    this.kind = new Uint8Array(size);
    this.column = new Int32Array(size);
    this.flags = new Uint8Array(size);
    this.operand = new Float64Array(size);
    this.members = new Array<Uint8Array | null>(size).fill(null);
    this.fns = [];
    this.ids = new Array<ColumnIds | null>(columns).fill(null);
    const lists: (number[] | null)[] = new Array<number[] | null>(size).fill(null);
    let i = 0;
    let generic = false;
    rows.forEach((row, r) => {
      this.rowStart[r] = i;
      for (const cell of row) {
        const f = cell.fast;
        const c = cell.column;
        this.column[i] = c;
        this.fns.push(cell.fn);
        if (f === null) {
          this.kind[i] = GENERIC;
          generic = true;
        } else {
          this.kind[i] = f.kind;
          this.flags[i] = (f.negated ? NEGATED : 0) | (f.optional ? OPTIONAL : 0);
          if (f.kind === TEXT_EQ || f.kind === IN_SET) {
            const ids = (this.ids[c] ??= new ColumnIds());
            const listed = [...f.texts, ...f.numbers].map((key) => ids.add(key));
            if (f.kind === TEXT_EQ) this.operand[i] = listed[0];
            else lists[i] = listed;
          } else this.operand[i] = f.num;
        }
        i++;
      }
    });
    this.rowStart[rows.length] = i;
    lists.forEach((listed, j) => {
      if (listed === null) return;
      const member = new Uint8Array(this.ids[this.column[j]]!.count);
      for (const id of listed) member[id] = 1;
      this.members[j] = member;
    });
    this.generic = generic;
    this.cost = new Float64Array(columns);
    this.nums = new Float64Array(columns);
    this.textId = new Int32Array(columns);
    this.numId = new Int32Array(columns);
  }

  run(state: RunState, firstOnly: boolean): CellScan {
    const { ctx, values } = state;
    const { cost, nums, textId, numId, ids: columnIds } = this;
    for (let c = 0; c < this.columns; c++) {
      const v = values[c];
      const n = toNumber(v);
      cost[c] = sizeCost(v) + 1;
      nums[c] = n;
      const ids = columnIds[c];
      if (ids !== null) {
        textId[c] = typeof v === 'string' ? ids.ofText(v) : -1;
        numId[c] = ids.ofNumber(n);
      }
    }
    const { rowStart, kind, column, flags, operand, members, fns } = this;
    const rows = rowStart.length - 1;
    const matched: number[] = [];
    let left = ctx.left;
    for (let r = 0; r < rows; r++) {
      let hit = true;
      for (let i = rowStart[r], end = rowStart[r + 1]; i < end; i++) {
        const k = kind[i];
        const c = column[i];
        let result: boolean;
        if (k === GENERIC) {
          ctx.left = left;
          try {
            result = fns[i](state, r);
          } catch (err) {
            if (!(err instanceof EvalFailure)) throw err;
            return { matched, error: { code: err.code, message: err.message } };
          } finally {
            left = ctx.left;
          }
        } else {
          left -= cost[c];
          const f = flags[i];
          if ((f & OPTIONAL) !== 0 && values[c] === null) result = true;
          else {
            let positive: boolean;
            switch (k) {
              case NUM_GT:
                positive = nums[c] > operand[i];
                break;
              case NUM_GTE:
                positive = nums[c] >= operand[i];
                break;
              case NUM_LT:
                positive = nums[c] < operand[i];
                break;
              case NUM_LTE:
                positive = nums[c] <= operand[i];
                break;
              case NUM_EQ:
                positive = nums[c] === operand[i];
                break;
              case TEXT_EQ:
                positive = textId[c] === operand[i];
                break;
              default: {
                // IN_SET
                const member = members[i]!;
                const t = textId[c];
                const m = numId[c];
                positive = (t >= 0 && member[t] === 1) || (m >= 0 && member[m] === 1);
              }
            }
            result = (f & NEGATED) !== 0 ? !positive : positive;
          }
          if (left < 0) {
            ctx.left = left;
            const failure = overBudget(ctx.limit);
            return { matched, error: { code: failure.code, message: failure.message } };
          }
        }
        if (!result) {
          hit = false;
          break;
        }
      }
      if (hit) {
        matched.push(r);
        if (firstOnly) break;
      }
    }
    ctx.left = left;
    return { matched, error: null };
  }
}

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
      const actual = l === undefined ? null : l;
      const path = state.paths[column];
      trace.push({
        row,
        column,
        path,
        actual,
        result,
        skipped: false,
        line: state.lines
          ? `${path} = ${json(actual)}: ${operator}${right ? ` ${right.written} (= ${json(r)})` : valueOperandText(opName, literal)}${arrow(result)}`
          : '',
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
  return { row, column, path, actual: null, result: false, skipped: false, error: message, line: state.lines ? `${path}: ${message}` : '' };
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
    line: state.lines ? `${path}: ${raw === MISSING || raw === null ? 'missing' : json(raw)} (if present) -> skipped, true` : '',
  };
}
