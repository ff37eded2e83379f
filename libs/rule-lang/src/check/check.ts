/**
 * Whole-policy static checks (LANGUAGE.md §9.2 families 7–11): unique labels and outcomes,
 * label and rule references that resolve, exactly one golden rule, no circular references.
 */

import type { Condition, ConditionList, LabelReference, PolicyAst, RuleReference } from '../ast/types.js';
import { referenceKeyOf } from '../ast/outcomes.js';
import { Family, type Problem } from '../errors/rule-parse-error.js';
import { closest } from './closest.js';

/** A checked policy: which rule each reference points at, and the golden rule. */
export interface CheckedPolicy {
  ast: PolicyAst;
  /** Index of the golden rule in `ast.rules`. */
  golden: number;
  /** Target rule index of every label and rule reference. */
  targets: Map<LabelReference | RuleReference, number>;
}

function forEachReference(list: ConditionList, visit: (c: LabelReference | RuleReference) => void): void {
  const walk = (c: Condition): void => {
    if (c.kind === 'labelRef' || c.kind === 'ruleRef') visit(c);
    else if (c.kind === 'group' || c.kind === 'quantifier') c.body.items.forEach(walk);
  };
  list.items.forEach(walk);
}

/**
 * The rules referenced anywhere inside `list` (nested lists included), each once, in the order
 * their first reference is written. A quantifier evaluates those of its body after its elements,
 * if none of them did (an empty array, not an array, skipped): every rule is evaluated whatever
 * the data (LANGUAGE.md §8 step 4), at a point that depends on the rule text alone.
 */
export function referencedRules(list: ConditionList, targets: ReadonlyMap<LabelReference | RuleReference, number>): number[] {
  const out: number[] = [];
  forEachReference(list, (ref) => {
    const target = targets.get(ref);
    if (target !== undefined && !out.includes(target)) out.push(target);
  });
  return out;
}

const quote = (s: string): string => `"${s}"`;

/** Runs the checks; problems go to `problems`; returns null when any was found. */
export function checkPolicy(ast: PolicyAst, problems: Problem[]): CheckedPolicy | null {
  const before = problems.length;
  const byLabel = new Map<string, number>();
  const byOutcome = new Map<string, number>();
  ast.rules.forEach((rule, i) => {
    if (rule.label !== null) {
      if (byLabel.has(rule.label)) problems.push({ family: Family.unique, span: rule.span, detail: `duplicate label \`${rule.label}\`` });
      else byLabel.set(rule.label, i);
    }
    if (byOutcome.has(rule.outcomeKey)) {
      problems.push({
        family: Family.unique,
        span: rule.outcomeSpan,
        detail: `duplicate outcome \`${rule.outcome}\`: another rule already has it; give one of them a different outcome or a label`,
      });
    } else byOutcome.set(rule.outcomeKey, i);
  });

  const targets = new Map<LabelReference | RuleReference, number>();
  const edges: number[][] = ast.rules.map(() => []);
  ast.rules.forEach((rule, i) => {
    forEachReference(rule.conditions, (ref) => {
      let target: number | undefined;
      if (ref.kind === 'labelRef') {
        target = byLabel.get(ref.label);
        if (target === undefined) {
          const guess = closest(ref.label, [...byLabel.keys()]);
          problems.push({
            family: Family.labels,
            span: ref.span,
            detail: `unknown label \`$${ref.label}\`${guess ? `: did you mean \`$${guess}\`?` : ''}`,
            ...(guess ? { help: `$${guess}` } : {}),
          });
        }
      } else {
        target = byOutcome.get(referenceKeyOf(ref.phrase));
        if (target === undefined) {
          // Compare keys with keys (verb and article dropped on both sides), suggest the outcome name.
          const key = closest(referenceKeyOf(ref.phrase), [...byOutcome.keys()]);
          const guess = key === null ? null : ast.rules[byOutcome.get(key)!].outcome;
          problems.push({
            family: Family.references,
            span: ref.span,
            detail: `no rule has the outcome \`${ref.phrase}\`${guess ? `: did you mean \`${guess}\`?` : ''}`,
            ...(guess ? { help: guess } : {}),
          });
        }
      }
      if (target !== undefined) {
        targets.set(ref, target);
        edges[i].push(target);
      }
    });
  });
  if (problems.length > before) return null;

  const referenced = new Set<number>();
  edges.forEach((to, from) => to.forEach((t) => t !== from && referenced.add(t)));
  const unreferenced = ast.rules.map((_, i) => i).filter((i) => !referenced.has(i));
  if (unreferenced.length === 0) {
    problems.push({
      family: Family.golden,
      detail: 'no golden rule: every rule is referenced by another rule, so references go round in a circle',
    });
    return null;
  }
  if (unreferenced.length > 1) {
    problems.push({
      family: Family.golden,
      detail: `multiple golden rules: ${unreferenced.map((i) => quote(ast.rules[i].outcome)).join(', ')}: exactly one rule may be left unreferenced by the others`,
    });
    return null;
  }

  const cycle = findCycle(edges);
  if (cycle) {
    problems.push({
      family: Family.cycles,
      detail: `circular reference: ${cycle.map((i) => quote(ast.rules[i].outcome)).join(' -> ')}`,
    });
    return null;
  }
  return { ast, golden: unreferenced[0], targets };
}

/** First cycle in the reference graph (self-loops included), as a closed walk of rule indexes. */
function findCycle(edges: number[][]): number[] | null {
  const state = new Uint8Array(edges.length); // 0 new, 1 on stack, 2 done
  const stack: number[] = [];
  const visit = (n: number): number[] | null => {
    state[n] = 1;
    stack.push(n);
    for (const m of edges[n]) {
      if (state[m] === 1) return [...stack.slice(stack.indexOf(m)), m];
      if (state[m] === 0) {
        const found = visit(m);
        if (found) return found;
      }
    }
    stack.pop();
    state[n] = 2;
    return null;
  };
  for (let i = 0; i < edges.length; i++) {
    if (state[i] === 0) {
      const found = visit(i);
      if (found) return found;
    }
  }
  return null;
}
