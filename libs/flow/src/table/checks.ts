/**
 * Static checks of a decision table, from its cells alone (no test data): rules that overlap where
 * the hit policy forbids it, inputs no rule matches, rules an earlier or higher-priority rule always
 * shadows, and rules whose cells exclude each other. Reasoning is over pieces of each input's values
 * (`cell-sets.ts`), by sweeping the rules' ranges one input at a time, never by enumerating inputs.
 * The work is counted, so a table of any shape finishes in bounded time on any machine; past the
 * bound the result says the checks are incomplete.
 */

import type { FlowTableNode } from '@arbiter/contracts';
import { compileTable } from './compile.js';
import { compareRanks } from './evaluate.js';
import { intersect, isSubset, tableSpace, type PieceSet, type TableSpace } from './cell-sets.js';

export type TableCheckKind = 'overlap' | 'conflict' | 'gap' | 'unreachable' | 'never_matches';

/** One finding: errors block a publish, warnings never do. */
export interface TableCheck {
  check: TableCheckKind;
  severity: 'error' | 'warning';
  /** One sentence naming the table and the rules (numbered from 1). */
  message: string;
  /** Where it is in the definition: the later rule involved, or the table's rules. */
  path: string;
  /** The rules involved, numbered from 1. */
  rules: number[];
  /** An input showing it (data as the flow reads it), where one can be given. */
  example?: Record<string, unknown>;
}

export interface TableChecks {
  checks: TableCheck[];
  /** False when the work bound stopped a search: a finding may be missing, none is wrong. */
  complete: boolean;
}

/** Units of work (rule ranges looked at) one table's checks may spend. */
export const TABLE_CHECK_WORK = 3_000_000;
/** Findings reported per kind and table; the rest are counted in the last one's message. */
const MAX_PER_KIND = 10;
/** Sets of rules a search remembers having explored (beyond it, it explores again rather than hold more memory). */
const MEMO_MAX = 4096;

class Work {
  spent = 0;
  stopped = false;
  constructor(readonly limit: number) {}
  spend(units: number): boolean {
    this.spent += units;
    if (this.spent > this.limit) this.stopped = true;
    return !this.stopped;
  }
}

const ordinal = (r: number) => r + 1;

function listRules(rules: number[]): string {
  const n = rules.map(ordinal);
  return n.length === 1 ? `rule ${n[0]}` : `rules ${n.slice(0, -1).join(', ')} and ${n[n.length - 1]}`;
}

/** The data object of one piece per dimension. */
function exampleOf(space: TableSpace, pieces: number[]): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  space.dimensions.forEach((dim, d) => {
    let at: Record<string, unknown> = data;
    dim.steps.forEach((step, s) => {
      if (s === dim.steps.length - 1) {
        at[step] = dim.examples[pieces[d]];
        return;
      }
      const next = at[step];
      if (typeof next !== 'object' || next === null) at[step] = {};
      at = at[step] as Record<string, unknown>;
    });
  });
  return data;
}

/** The ranges of `set` that start at or after piece `from`, as `[start, end)` cuts. */
function cutsOf(set: PieceSet, into: Set<number>): void {
  for (let i = 0; i < set.length; i += 2) {
    into.add(set[i]);
    into.add(set[i + 1] + 1);
  }
}

function contains(set: PieceSet, piece: number): boolean {
  for (let i = 0; i < set.length; i += 2) if (piece >= set[i] && piece <= set[i + 1]) return true;
  return false;
}

/**
 * A point of `region` (one piece per dimension) that none of `rows` covers, `null` when they cover
 * it all, `undefined` when the work ran out first. `cover(r, d)` is the pieces rule r covers in d.
 * One dimension at a time: the region's pieces in dimension d are cut where some rule's range starts
 * or ends, and each stretch is searched on with the rules that cover it; a rule covering the region
 * in every dimension from d on settles the stretch at once.
 */
function uncovered(
  space: TableSpace,
  region: PieceSet[],
  rows: number[],
  cover: (r: number, d: number) => PieceSet,
  work: Work,
): number[] | null | undefined {
  const dims = space.dimensions.length;
  const witness: number[] = new Array<number>(dims).fill(0);
  // doneFrom[r]: the first dimension from which rule r covers the whole region.
  const doneFrom = new Map<number, number>();
  for (const r of rows) {
    let d = dims;
    while (d > 0 && isSubset(region[d - 1], cover(r, d - 1))) d--;
    doneFrom.set(r, d);
  }
  if (!work.spend(rows.length * dims)) return undefined;
  const explored = new Map<string, number[][]>();
  const seen = (d: number, active: number[]): boolean => {
    let h = active.length;
    for (const r of active) h = (Math.imul(h, 31) + r) | 0;
    const key = `${d}:${h}`;
    const list = explored.get(key);
    if (list?.some((a) => a.length === active.length && a.every((v, i) => v === active[i]))) return true;
    if (explored.size >= MEMO_MAX) return false;
    if (list) list.push(active);
    else explored.set(key, [active]);
    return false;
  };
  const search = (d: number, active: number[]): boolean | undefined => {
    if (active.length === 0) {
      for (let k = d; k < dims; k++) witness[k] = region[k][0];
      return true;
    }
    if (d === dims) return false;
    for (const r of active) if (doneFrom.get(r)! <= d) return false;
    if (seen(d, active)) return false;
    const cuts = new Set<number>();
    cutsOf(region[d], cuts);
    const partial: number[] = [];
    const whole: number[] = [];
    for (const r of active) {
      if (isSubset(region[d], cover(r, d))) whole.push(r);
      else {
        partial.push(r);
        cutsOf(cover(r, d), cuts);
      }
    }
    if (!work.spend(active.length + cuts.size)) return undefined;
    const points = [...cuts].sort((a, b) => a - b);
    let previous: number[] | null = null;
    for (let p = 0; p + 1 < points.length; p++) {
      const piece = points[p];
      if (!contains(region[d], piece)) continue;
      if (!work.spend(partial.length)) return undefined;
      const covering = partial.filter((r) => contains(cover(r, d), piece));
      if (previous !== null && covering.length === previous.length && covering.every((v, i) => v === previous![i])) continue;
      previous = covering;
      witness[d] = piece;
      const next = whole.length === 0 ? covering : mergeSorted(whole, covering);
      const found = search(d + 1, next);
      if (found !== false) return found;
    }
    return false;
  };
  const found = search(0, rows);
  return found === undefined ? undefined : found ? witness : null;
}

/** Two ascending lists of rule numbers merged into one. */
function mergeSorted(a: number[], b: number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) out.push(j >= b.length || (i < a.length && a[i] < b[j]) ? a[i++] : b[j++]);
  return out;
}

/** The first piece both sets hold, or -1. */
function firstCommon(a: PieceSet, b: PieceSet): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i], b[j]);
    if (lo <= Math.min(a[i + 1], b[j + 1])) return lo;
    if (a[i + 1] < b[j + 1]) i += 2;
    else j += 2;
  }
  return -1;
}

/** The findings of kind `kind` kept, the last saying how many more there were. */
/** Findings of one kind: the first MAX_PER_KIND built, the rest only counted. */
class Findings {
  readonly kept: TableCheck[] = [];
  private more = 0;
  add(make: () => TableCheck): void {
    if (this.kept.length < MAX_PER_KIND) this.kept.push(make());
    else this.more++;
  }
  /** The kept findings, the last saying how many more there were. */
  list(): TableCheck[] {
    if (this.more === 0) return this.kept;
    const last = this.kept[this.kept.length - 1];
    return [...this.kept.slice(0, -1), { ...last, message: `${last.message} (and ${this.more} more like it)` }];
  }
}

/** Runs every static check of table node `nodeId`; a table that does not compile has none (its problems say why). */
export function checkTable(nodeId: string, node: FlowTableNode, workLimit = TABLE_CHECK_WORK): TableChecks {
  const compiled = compileTable(nodeId, node);
  const space = compiled.ok ? tableSpace(node) : null;
  if (!compiled.ok || space === null) return { checks: [], complete: true };
  const { outputs, ranks } = compiled.table;
  const work = new Work(workLimit);
  const at = `nodes.${nodeId}`;
  const table = `table \`${nodeId}\``;
  const dims = space.dimensions.length;
  const rules = space.rows.map((_, r) => r);
  const pathText = (d: number) => space.dimensions[d].steps.join('.');

  const never = new Findings();
  const empty = new Set<number>();
  for (const r of rules) {
    const d = space.rows[r].findIndex((set) => set.pieces.length === 0);
    if (d < 0) continue;
    empty.add(r);
    never.add(() => ({
      check: 'never_matches',
      severity: 'warning',
      message: `${table}: rule ${ordinal(r)} can never match: its cells on \`${pathText(d)}\` exclude each other`,
      path: `${at}.rules.${r}`,
      rules: [r + 1],
    }));
  }
  const live = rules.filter((r) => !empty.has(r));

  // Overlaps: both rules match one input in every dimension (an opaque cell on either side: unknown, not reported).
  const overlaps = new Findings();
  if (node.hitPolicy === 'unique' || node.hitPolicy === 'any') {
    const outputKeys = outputs.map((o) => JSON.stringify(o));
    const same = (a: number, b: number) => outputKeys[a] === outputKeys[b];
    outer: for (let j = 0; j < live.length; j++) {
      for (let i = 0; i < j; i++) {
        if (!work.spend(1)) break outer;
        const a = live[i];
        const b = live[j];
        if (node.hitPolicy === 'any' && same(a, b)) continue;
        const point: number[] = [];
        let meets = true;
        for (let d = 0; d < dims && meets; d++) {
          const x = space.rows[a][d];
          const y = space.rows[b][d];
          const piece = x.opaque || y.opaque ? -1 : firstCommon(x.pieces, y.pieces);
          meets = piece >= 0;
          point.push(piece);
        }
        if (!meets) continue;
        const unique = node.hitPolicy === 'unique';
        overlaps.add(() => ({
          check: unique ? 'overlap' : 'conflict',
          severity: 'error',
          message: unique
            ? `${table}: rules ${ordinal(a)} and ${ordinal(b)} both match one input, which the \`unique\` hit policy forbids`
            : `${table}: rules ${ordinal(a)} and ${ordinal(b)} both match one input with different outputs, which the \`any\` hit policy forbids`,
          path: `${at}.rules.${b}`,
          rules: [a + 1, b + 1],
          example: exampleOf(space, point),
        }));
      }
    }
  }

  // Gaps: an input no rule matches, unless an output declares a default (then no match has an answer).
  const gaps = new Findings();
  const full = space.dimensions.map((dim): PieceSet => [0, dim.examples.length - 1]);
  if (!node.outputs.some((o) => o.default !== undefined) && !work.stopped) {
    const point = uncovered(space, full, live, (r, d) => space.rows[r][d].pieces, work);
    if (point) {
      gaps.add(() => ({
        check: 'gap',
        severity: 'warning',
        message: `${table}: no rule matches some inputs, and no output has a default`,
        path: `${at}.rules`,
        rules: [],
        example: exampleOf(space, point),
      }));
    }
  }

  // Rules never chosen: under `first`, every input they match is matched by an earlier rule; under
  // `priority`, by a rule that outranks them. Rules with an opaque cell never count as covering.
  const shadowed = new Findings();
  if (node.hitPolicy === 'first' || node.hitPolicy === 'priority') {
    const clear = live.filter((r) => space.rows[r].every((set) => !set.opaque));
    for (const r of live) {
      if (work.stopped) break;
      const region = space.rows[r].map((set) => set.pieces);
      const beats = (i: number) =>
        node.hitPolicy === 'first' ? i < r : compareRanks(ranks[i], ranks[r]) < 0 || (compareRanks(ranks[i], ranks[r]) === 0 && i < r);
      const coverers = clear.filter(
        (i) => i !== r && beats(i) && region.every((set, d) => intersect(set, space.rows[i][d].pieces).length > 0),
      );
      if (coverers.length === 0) continue;
      const single = coverers.find((i) => region.every((set, d) => isSubset(set, space.rows[i][d].pieces)));
      const covered = single !== undefined || uncovered(space, region, coverers, (i, d) => space.rows[i][d].pieces, work) === null;
      if (!covered) continue;
      const by = single !== undefined ? [single] : coverers;
      shadowed.add(() => ({
        check: 'unreachable',
        severity: 'warning',
        message:
          node.hitPolicy === 'first'
            ? `${table}: rule ${ordinal(r)} can never be chosen: ${listRules(by)} before it match${by.length === 1 ? 'es' : ''} every input it matches (\`first\` hit policy)`
            : `${table}: rule ${ordinal(r)} can never be chosen: ${listRules(by)}, ranked before it, match${by.length === 1 ? 'es' : ''} every input it matches (\`priority\` hit policy)`,
        path: `${at}.rules.${r}`,
        rules: [...by.map((i) => i + 1), r + 1],
      }));
    }
  }

  return { checks: [...overlaps.list(), ...gaps.list(), ...shadowed.list(), ...never.list()], complete: !work.stopped };
}
