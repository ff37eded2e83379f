/** text → parse → AST → checks → closures. */

import { buildAst } from '../ast/build.js';
import type { Condition, ConditionList, LabelReference, PolicyAst, Rule, RuleReference } from '../ast/types.js';
import { checkPolicy, type CheckedPolicy } from '../check/check.js';
import { Family, throwProblems, type Problem } from '../errors/rule-parse-error.js';
import { firstSelector } from '../explain/explain.js';
import { parsePolicy } from '../parse/parse.js';
import { CompiledPolicy } from './policy.js';

/**
 * Runs `f`, turning a stack overflow (a policy nested thousands of levels deep: the parser and the
 * builders recurse per level) into a parse error, so compile never throws anything else.
 */
function withinDepth<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof RangeError && /call stack/i.test(err.message)) {
      throwProblems([{ family: Family.syntax, detail: 'the policy is nested too deeply: use fewer levels of parentheses and any/all' }]);
    }
    throw err;
  }
}

/** Parses and checks `text`; throws RuleParseError with the first problem. */
export function check(text: string): CheckedPolicy {
  return withinDepth(() => checkText(text));
}

function checkText(text: string): CheckedPolicy {
  if (typeof text !== 'string') throwProblems([{ family: 0, detail: 'the rule must be a string' }]);
  const parsed = parsePolicy(text);
  if (!parsed.ok) throwProblems([parsed.problem]);
  const problems: Problem[] = [];
  const ast = buildAst(parsed.parsed.tree, text, problems);
  if (problems.length > 0) throwProblems(problems);
  const checked = checkPolicy(ast, problems);
  if (!checked) throwProblems(problems);
  return checked;
}

function firstReference(list: ConditionList): LabelReference | RuleReference | null {
  for (const c of list.items) {
    if (c.kind === 'labelRef' || c.kind === 'ruleRef') return c;
    if (c.kind === 'group' || c.kind === 'quantifier') {
      const inner = firstReference(c.body);
      if (inner) return inner;
    }
  }
  return null;
}

/** The `selector` reported for a rule (LANGUAGE.md §12.2, D-shorthand-selector). */
export function selectorResolver(ast: PolicyAst, targetOf: (c: Condition) => number | undefined): (rule: Rule) => string {
  const resolve = (rule: Rule, seen: Set<Rule>): string => {
    if (rule.subject !== null) return rule.subject;
    const direct = firstSelector(rule.conditions);
    if (direct !== null) return direct;
    const ref = firstReference(rule.conditions);
    const target = ref ? targetOf(ref) : undefined;
    if (target === undefined || seen.has(ast.rules[target])) return '';
    seen.add(rule);
    return resolve(ast.rules[target], seen);
  };
  return (rule) => resolve(rule, new Set());
}

/** Compiles a policy text into reusable closures. Throws {@link RuleParseError} on any syntax or check failure. */
export function compile(text: string): CompiledPolicy {
  const checked = check(text);
  const targetOf = (c: Condition) => (c.kind === 'labelRef' || c.kind === 'ruleRef' ? checked.targets.get(c) : undefined);
  return withinDepth(() => new CompiledPolicy(checked, selectorResolver(checked.ast, targetOf)));
}
