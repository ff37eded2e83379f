/**
 * Static checks of a decision table, from its cells alone (no test data): rules that overlap where
 * the hit policy forbids it, inputs no rule matches, rules an earlier or higher-priority rule always
 * shadows, and rules whose cells exclude each other. Reasoning is over pieces of each input's values
 * (`cell-sets.ts`): overlaps pair by pair, gaps and shadowed rules by halving a region one input at
 * a time where the rules' ranges split it ({@link uncovered}), never by enumerating inputs.
 * The work is counted, so a table of any shape finishes in bounded time on any machine; past the
 * bound the result says the checks are incomplete.
 */

import type { FlowTableNode } from '@arbiter/contracts';
import { compileTable } from './compile.js';
import { compareRanks } from './evaluate.js';
import { intersect, tableSpace, type PieceSet, type TableSpace } from './cell-sets.js';
import { Work } from '@arbiter/rule-lang';

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

/**
 * A rule inside the region being searched: the dimensions where it holds only part of the region's
 * pieces, and its share of the region's points (the product over those dimensions of the share of
 * the region's pieces it holds).
 */
interface Cube {
  rule: number;
  partial: readonly number[];
  share: number;
}

/** How many pieces a set holds. */
function sizeOf(set: PieceSet): number {
  let n = 0;
  for (let i = 0; i < set.length; i += 2) n += set[i + 1] - set[i] + 1;
  return n;
}

/** How many pieces both sets hold (allocates nothing). */
function sizeOfBoth(a: PieceSet, b: PieceSet): number {
  let n = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i], b[j]);
    const hi = Math.min(a[i + 1], b[j + 1]);
    if (lo <= hi) n += hi - lo + 1;
    if (a[i + 1] < b[j + 1]) i += 2;
    else j += 2;
  }
  return n;
}

/**
 * Below this total share of a region, rules cannot cover it (the points they hold, added up, are
 * fewer than the region's). Just under 1, so that rounding in the shares can never make a covered
 * region look uncovered.
 */
const COVERING_SHARE = 1 - 1e-9;

/** What {@link uncovered} returns for an uncovered region when no point was asked for. */
const SOME_POINT: number[] = [];

/** The first piece of `region` that none of `sets` holds, or -1 (ranges swept in order of their start). */
function firstHole(region: PieceSet, sets: readonly PieceSet[]): number {
  const ranges: Array<[number, number]> = [];
  for (const set of sets) for (let i = 0; i < set.length; i += 2) ranges.push([set[i], set[i + 1]]);
  ranges.sort((a, b) => a[0] - b[0]);
  let k = 0;
  let reach = -1; // every piece up to `reach` is held by some set
  for (let i = 0; i < region.length; i += 2) {
    for (let piece = region[i]; piece <= region[i + 1];) {
      while (k < ranges.length && ranges[k][0] <= piece) reach = Math.max(reach, ranges[k++][1]);
      if (reach < piece) return piece;
      piece = reach + 1;
    }
  }
  return -1;
}

/**
 * The rules of `rows` that meet `region` in every dimension, in the order given, as cubes of it.
 * `space` gives each dimension's pieces: those where the region is narrowest are looked at first,
 * where a rule is likeliest to miss it.
 */
function cubesOf(space: TableSpace, region: PieceSet[], rows: readonly number[], cover: PieceSet[][], work: Work): Cube[] {
  const sizes = region.map(sizeOf);
  const order = region
    .map((_, d) => d)
    .sort((a, b) => sizes[a] / space.dimensions[a].examples.length - sizes[b] / space.dimensions[b].examples.length);
  const cubes: Cube[] = [];
  for (const rule of rows) {
    work.spend(1);
    const partial: number[] = [];
    let share = 1;
    let k = 0;
    for (; k < order.length; k++) {
      const d = order[k];
      const both = sizeOfBoth(region[d], cover[rule][d]);
      if (both === 0) break;
      if (both < sizes[d]) {
        partial.push(d);
        share *= both / sizes[d];
      }
    }
    if (k === order.length) cubes.push({ rule, partial, share });
  }
  return cubes;
}

/**
 * A point of `region` (one piece per dimension) that none of the `cubes` (cubesOf) covers, `null`
 * when they cover it all, `undefined` when the work ran out first. `cover[r][d]` is the pieces rule
 * r covers in d (`cover[r][d]`). Without `wantPoint`, an uncovered region may come back as an empty array rather
 * than a point.
 *
 * Interval reasoning, as a tautology check of cubes: a rule holding the region in every dimension
 * settles it (covered). A dimension where every rule is partial and their ranges leave a hole gives
 * an uncovered point at once (the hole, any piece elsewhere); so do, when no point is asked for,
 * shares adding up to less than the whole region. Otherwise the region is halved in the dimension
 * where most rules are partial, at the median of their range ends, and each half searched with the
 * rules that meet it, the half with the smaller total share first: a rule becomes whole in the half
 * its range spans and drops out of the half it misses, so the rules left thin out fast. Every rule
 * looked at is a unit of `work`.
 */
function uncovered(region: PieceSet[], cubes: Cube[], cover: PieceSet[][], work: Work, wantPoint = true): number[] | null | undefined {
  const dims = region.length;
  const search = (region: PieceSet[], cubes: Cube[], share: number): number[] | null | undefined => {
    if (!work.spend(cubes.length + 1)) return undefined;
    if (cubes.length === 0) return region.map((set) => set[0]);
    // A rule holding the whole region has a share of 1, so this never hides one.
    if (!wantPoint && share < COVERING_SHARE) return SOME_POINT;
    const partialIn = new Array<number>(dims).fill(0);
    for (const c of cubes) {
      if (c.partial.length === 0) return null;
      for (const d of c.partial) partialIn[d]++;
    }
    let split = -1;
    for (let d = 0; d < dims; d++) {
      if (partialIn[d] === cubes.length) {
        if (!work.spend(cubes.length)) return undefined;
        const hole = firstHole(
          region[d],
          cubes.map((c) => cover[c.rule][d]),
        );
        if (hole >= 0) {
          const point = region.map((set) => set[0]);
          point[d] = hole;
          return point;
        }
      }
      if (partialIn[d] > 0 && (split < 0 || partialIn[d] > partialIn[split])) split = d;
    }
    // Halve the region in `split` at the median range end of the partial rules inside it.
    const here = region[split];
    const low = here[0];
    const high = here[here.length - 1];
    const size = sizeOf(here);
    const ends: number[] = [];
    const parts: Cube[] = [];
    for (const c of cubes) {
      if (!c.partial.includes(split)) continue;
      parts.push(c);
      const set = cover[c.rule][split];
      for (let i = 0; i < set.length; i += 2) {
        if (set[i] > low && set[i] <= high) ends.push(set[i]);
        if (set[i + 1] + 1 > low && set[i + 1] + 1 <= high) ends.push(set[i + 1] + 1);
      }
    }
    // INVARIANT: a rule partial in `split` has a range end inside the region there (it holds some of its pieces, not all).
    // (A typed array sorts numbers natively, several times faster than a comparator.)
    const at = Int32Array.from(ends).sort()[ends.length >> 1];
    const halves = [intersect(here, [low, at - 1]), intersect(here, [at, high])];
    const halfSizes = halves.map(sizeOf);
    // Each partial rule's share without its share in `split`, and the pieces it holds in each half.
    const rest: number[] = [];
    const held: number[][] = [[], []];
    const shares = [0, 0];
    let k = 0;
    for (const c of cubes) {
      if (c !== parts[k]) {
        shares[0] += c.share;
        shares[1] += c.share;
        continue;
      }
      const set = cover[c.rule][split];
      const without = (c.share * size) / sizeOfBoth(here, set);
      rest.push(without);
      for (let h = 0; h < 2; h++) {
        const both = sizeOfBoth(halves[h], set);
        held[h].push(both);
        shares[h] += (without * both) / halfSizes[h];
      }
      k++;
    }
    // The half with the smaller share first: the likelier to hold an uncovered point; its rules are
    // listed only when it is searched.
    for (const h of shares[1] < shares[0] ? [1, 0] : [0, 1]) {
      if (!wantPoint && shares[h] < COVERING_SHARE) return SOME_POINT;
      const inside: Cube[] = [];
      k = 0;
      for (const c of cubes) {
        if (c !== parts[k]) {
          inside.push(c);
          continue;
        }
        const both = held[h][k];
        const without = rest[k++];
        if (both === 0) continue;
        inside.push(
          both === halfSizes[h]
            ? { rule: c.rule, partial: c.partial.filter((d) => d !== split), share: without }
            : { rule: c.rule, partial: c.partial, share: (without * both) / halfSizes[h] },
        );
      }
      const next = region.slice();
      next[split] = halves[h];
      const found = search(next, inside, shares[h]);
      if (found !== null) return found;
    }
    return null;
  };
  if (work.stopped) return undefined;
  return search(
    region,
    cubes,
    cubes.reduce((sum, c) => sum + c.share, 0),
  );
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
  // Per rule, per dimension: the pieces it may match.
  const cover = space.rows.map((row) => row.map((set) => set.pieces));

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
    const point = uncovered(full, cubesOf(space, full, live, cover, work), cover, work);
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
    let before = 0;
    for (const r of live) {
      if (work.stopped) break;
      const region = space.rows[r].map((set) => set.pieces);
      const beats = (i: number) =>
        node.hitPolicy === 'first' ? i < r : compareRanks(ranks[i], ranks[r]) < 0 || (compareRanks(ranks[i], ranks[r]) === 0 && i < r);
      // Under `first`, the clear rules before r: a prefix of `clear`.
      while (before < clear.length && clear[before] < r) before++;
      const candidates = node.hitPolicy === 'first' ? clear.slice(0, before) : clear.filter((i) => i !== r && beats(i));
      // The rules that meet r's region, each with the dimensions where it holds only part of it.
      const cubes = cubesOf(space, region, candidates, cover, work);
      if (cubes.length === 0) continue;
      const single = cubes.find((c) => c.partial.length === 0)?.rule;
      const covered = single !== undefined || uncovered(region, cubes, cover, work, false) === null;
      if (!covered) continue;
      const by = single !== undefined ? [single] : cubes.map((c) => c.rule);
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
