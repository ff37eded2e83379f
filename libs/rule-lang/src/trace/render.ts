/** Structured trace (LANGUAGE.md §10.3) → the `/run` string lines (§10.2). Built only when asked. */

import type { StructuredTrace, TraceCondition } from '../api-types.js';
import { boundedJson } from './bounded-json.js';

/** How a positive operator is worded in a trace line (canonical names that read differently). */
function positiveWording(operator: string): string {
  switch (operator) {
    case 'format check': return 'has the format';
    case 'pattern': return 'matches pattern';
    case 'period': return 'is within';
    default: return operator;
  }
}

/**
 * True when `JSON.stringify(s)` is just `s` in quotes: no control character, `"`, `\\` or
 * surrogate (well-formed JSON.stringify escapes lone surrogates; pairs take the slow path too).
 */
function plainString(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/**
 * `JSON.stringify(v)` ('null' for undefined). Primitives, which are nearly all the values a trace
 * shows, skip JSON.stringify (a third of the rendering time before); the results are identical.
 */
function json(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  switch (typeof v) {
    case 'string':
      if (plainString(v)) return `"${v}"`;
      break;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      // JSON.stringify prints finite numbers as String does (and -0 as 0, as String does).
      return Number.isFinite(v) ? String(v) : 'null';
  }
  // Long strings, arrays and objects: at most a line's worth of JSON, cut with `…`. Bounds the
  // work too (deep, shared or cyclic in-memory values must never stall an evaluation).
  return boundedJson(v);
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const DATE_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9];

/** `/^\d{4}-\d{2}-\d{2}$/.test(s)` without the regex (it ran once per rendered comparison). */
function isDateText(s: string): boolean {
  if (s.length !== 10 || s.charCodeAt(4) !== 0x2d || s.charCodeAt(7) !== 0x2d) return false;
  for (const i of DATE_DIGITS) if (!isDigit(s.charCodeAt(i))) return false;
  return true;
}

function operandText(c: Extract<TraceCondition, { type: 'comparison' }>): string {
  const v = c.value;
  if (v === null) return '';
  if (typeof v === 'object' && !Array.isArray(v) && 'path' in v) {
    const p = v as { path: string; actual: unknown };
    return ` ${p.path} (= ${json(p.actual)})`;
  }
  if (c.operator === 'period' || c.operator === 'is older than' || c.operator === 'is younger than') return ` ${String(v)}`;
  if (typeof v === 'string' && isDateText(v) && c.operator !== 'format check' && c.operator !== 'pattern') {
    return ` ${v}`;
  }
  return ` ${Array.isArray(v) ? listJson(v) : json(v)}`;
}

/** JSON text of a literal list, by array identity; `items` is a copy that proves the array unchanged since. */
const LIST_JSON = new WeakMap<readonly unknown[], { items: readonly unknown[]; text: string }>();

const isPrimitive = (x: unknown): boolean => x === null || (typeof x !== 'object' && typeof x !== 'function');

/**
 * `json(list)`, cached: a comparison's list operand (`is in [...]`) is the same array in every
 * trace of a policy, and stringifying it was a third of the rendering. The cache is only used
 * while the array still holds the same primitives (a caller may have mutated a returned
 * traceTree) and has no `toJSON`, so the text is always what JSON.stringify would print.
 */
function listJson(v: readonly unknown[]): string {
  const plain = (v as { toJSON?: unknown }).toJSON === undefined;
  const hit = plain ? LIST_JSON.get(v) : undefined;
  if (hit !== undefined && sameItems(hit.items, v)) return hit.text;
  const text = json(v);
  if (plain && allPrimitive(v)) LIST_JSON.set(v, { items: v.slice(), text });
  return text;
}

function sameItems(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

function allPrimitive(a: readonly unknown[]): boolean {
  for (let i = 0; i < a.length; i++) if (!isPrimitive(a[i])) return false;
  return true;
}

/** ` -> true` / ` -> false` (any other value as a template would print it). */
function arrow(result: unknown): string {
  return result === true ? ' -> true' : result === false ? ' -> false' : ` -> ${String(result)}`;
}

const PADS: string[] = [''];

/** Two spaces per level, cached. */
function padOf(depth: number): string {
  while (PADS.length <= depth) PADS.push(`${PADS[PADS.length - 1]!}  `);
  return PADS[depth]!;
}

function renderConditions(conditions: TraceCondition[], depth: number, out: string[]): void {
  const pad = padOf(depth);
  for (const c of conditions) {
    const kw = c.logical_op ?? 'if';
    switch (c.type) {
      case 'comparison': {
        const subject = `${c.measure ? `${c.measure} ` : ''}${c.path}`;
        if (c.error) out.push(`${pad}${kw} ${subject}: ${c.error}`);
        else if (c.skipped) out.push(`${pad}${kw} ${subject}: ${c.actual === null ? 'missing' : json(c.actual)} (if present) -> skipped, true`);
        else {
          const op = c.negated ? c.written : positiveWording(c.operator);
          out.push(`${pad}${kw} ${subject} = ${json(c.actual)}: ${op}${operandText(c)}${arrow(c.result)}`);
        }
        break;
      }
      case 'rule_reference':
        out.push(`${pad}${kw} rule "${c.outcome}"${arrow(c.result)}`);
        break;
      case 'label_reference':
        out.push(`${pad}${kw} label $${c.label}${arrow(c.result)}`);
        break;
      case 'group':
        out.push(`${pad}${kw} group${arrow(c.result)}`);
        renderConditions(c.conditions, depth + 1, out);
        break;
      case 'quantifier': {
        if (c.error) {
          out.push(`${pad}${kw} ${c.quantifier} of ${c.path}: ${c.error}`);
        } else if (c.skipped) {
          out.push(`${pad}${kw} ${c.quantifier} of ${c.path}: missing (if present) -> skipped, true`);
        } else {
          const size = `${c.count} element${c.count === 1 ? '' : 's'}`;
          out.push(`${pad}${kw} ${c.quantifier} of ${c.path} [${size}]: ${c.matched} matched${arrow(c.result)}`);
        }
        for (const el of c.elements) {
          out.push(`${pad}  [${el.index}]${arrow(el.result)}`);
          renderConditions(el.conditions, depth + 2, out);
        }
        break;
      }
    }
  }
}

/** Renders the structured trace as lines; the last line is `result: …` or `error: …`. */
export function renderTrace(
  tree: StructuredTrace,
  result: boolean,
  golden: number,
  meta: readonly { outcome: string; label: string | null }[],
): string[] {
  const out: string[] = [];
  const goldenOutcome = meta[golden]!.outcome;
  for (const rule of tree.rules) {
    // Tags: `label L`, then `golden` or (unlabelled only) `subject S`, comma-separated in brackets.
    let tags = rule.label !== null ? `label ${rule.label}` : '';
    if (rule.outcome === goldenOutcome) tags = tags !== '' ? `${tags}, golden` : 'golden';
    else if (rule.label === null && rule.selector !== '') tags = `subject ${rule.selector}`;
    out.push(tags !== '' ? `rule "${rule.outcome}" [${tags}]` : `rule "${rule.outcome}"`);
    renderConditions(rule.conditions, 1, out);
    if (!rule.error) out.push(`  => ${rule.outcome} = ${rule.result}`);
  }
  out.push(tree.error !== null ? `error: ${tree.error}` : `result: ${result}`);
  return out;
}
