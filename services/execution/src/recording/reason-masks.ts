import { MASKED, type Reason, type Reasons } from '@arbiter/contracts';
import { keyFamily, valueText } from '@arbiter/rule-lang';
import { maskValue, type CompiledMask } from './masks.js';

/**
 * The segments of a reasons path (docs/LANGUAGE.md §10.4: the data path read, with the JSON keys
 * found): `a.b`, `a["credit score"]`, `order.items[2].price`. Undefined when it is not such a path
 * (a `missing` entry's path as written): its value is then masked whole.
 */
export function pathSegments(path: string): string[] | undefined {
  const segments: string[] = [];
  let i = 0;
  const name = (): boolean => {
    const m = /^[A-Za-z0-9_$]+/.exec(path.slice(i));
    if (m === null) return false;
    segments.push(m[0]);
    i += m[0].length;
    return true;
  };
  if (path[0] !== '[' && !name()) return undefined;
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      i++;
      if (!name()) return undefined;
    } else if (c === '[') {
      const close = path[i + 1] === '"' ? closingQuote(path, i + 2) : path.indexOf(']', i);
      if (close < 0) return undefined;
      const end = path[i + 1] === '"' ? close + 1 : close;
      if (path[end] !== ']') return undefined;
      const inner = path.slice(i + 1, end);
      if (inner.startsWith('"')) {
        try {
          segments.push(JSON.parse(inner) as string);
        } catch {
          return undefined;
        }
      } else if (/^\d+$/.test(inner)) segments.push(inner);
      else return undefined;
      i = end + 1;
    } else return undefined;
  }
  return segments;
}

/** Index of the `"` closing a JSON string whose text starts at `from`, or -1. */
function closingQuote(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/** The mask subtrees that apply at `segments` from `roots`, or `'masked'` when a mask ends on the way. */
function treesAt(roots: readonly CompiledMask[], segments: readonly string[]): CompiledMask[] | 'masked' {
  let at = roots.slice();
  for (const segment of segments) {
    const next: CompiledMask[] = [];
    for (const tree of at) {
      if (tree.any !== undefined) next.push(tree.any);
      const named = tree.named.size > 0 ? tree.named.get(keyFamily(segment)) : undefined;
      if (named !== undefined) next.push(named);
    }
    if (next.some((t) => t.end)) return 'masked';
    if (next.length === 0) return [];
    at = next;
  }
  return at;
}

/** A value's text in the sentence before masking and after. */
type Rewrite = Map<string, string>;

function maskEntry(entry: Reason, roots: readonly CompiledMask[], rewrites: Rewrite): Reason {
  let out = entry;
  if ('value' in entry && entry.value !== MASKED) {
    const segments = entry.path === undefined ? undefined : pathSegments(entry.path);
    const trees = segments === undefined ? 'masked' : treesAt(roots, segments);
    let value: unknown;
    if (trees === 'masked') value = MASKED;
    else {
      // A value under a masked path's prefix (an object, a list): masked inside like the input.
      value = entry.value;
      if (trees.length > 0 && value !== null && typeof value === 'object') {
        value = structuredClone(value);
        for (const tree of trees) maskValue(value, tree);
      }
    }
    const before = valueText(entry.value);
    const after = valueText(value);
    if (before !== after) {
      rewrites.set(before, after);
      out = { ...entry, value };
    }
  }
  if (entry.because !== undefined) {
    let changed = false;
    const because = entry.because.map((e) => {
      const m = maskEntry(e, roots, rewrites);
      if (m !== e) changed = true;
      return m;
    });
    if (changed) out = { ...out, because };
  }
  return out;
}

/**
 * The sentence with each masked value's text replaced: every value is printed in it as
 * `(<value>)` (docs/LANGUAGE.md §10.4), so `(<value>)` becomes `("***")`; a sentence cut with `…`
 * in the middle of a masked value loses what is left of it.
 */
function redact(sentence: string, rewrites: Rewrite): string {
  let out = sentence;
  for (const [before, after] of rewrites) out = out.replaceAll(`(${before})`, `(${after})`);
  if (!out.endsWith('…')) return out;
  const body = out.slice(0, -1);
  for (const [before, after] of rewrites) {
    for (let k = Math.min(before.length, body.length - 1); k >= 1; k--) {
      if (body.endsWith(`(${before.slice(0, k)}`)) return `${body.slice(0, body.length - k - 1)}(${after})…`;
    }
  }
  return out;
}

/**
 * Reasons masked as the record's input is (docs/decisions.md#masking): the `value` of each entry
 * whose `path` is masked (or lies under a masked path) becomes `"***"`, a value holding masked
 * paths is masked inside, an entry with a value but a path that is not a data path is masked whole,
 * and the sentence shows `("***")` where it showed a masked value. Unchanged (the same object)
 * when nothing was masked. `roots`: the compiled masks that apply (the org's, the base's).
 */
export function maskReasons(reasons: Reasons, roots: readonly CompiledMask[]): Reasons {
  const active = roots.filter((r) => r.any !== undefined || r.named.size > 0);
  if (active.length === 0) return reasons;
  const rewrites: Rewrite = new Map();
  const root = maskEntry({ kind: 'rule', rule: '', text: '', holds: true, line: 0, column: 0, because: reasons.because }, active, rewrites);
  if (rewrites.size === 0) return reasons;
  return { ...reasons, sentence: redact(reasons.sentence, rewrites), because: root.because ?? [] };
}
