/** `explain_rule` (LANGUAGE.md §12.2): the structure of a checked policy. */

import type { ExplainedCondition, ExplainedRule } from '../api-types.js';
import type { Condition, ConditionList, Literal, Operand, Path, PolicyAst, Rule } from '../ast/types.js';

function literalText(lit: Literal): string {
  switch (lit.kind) {
    case 'string':
      return lit.value;
    case 'number':
      return String(lit.value);
    case 'boolean':
      return String(lit.value);
    case 'date':
      return lit.text;
  }
}

function literalJson(lit: Literal): unknown {
  return lit.kind === 'date' ? lit.text : lit.value;
}

function writtenPath(p: Path): string {
  return `$.${[...(p.root === 'its' ? ['its'] : []), ...p.steps.map((s) => s.name)].join('.')}`;
}

function operandText(op: Operand | null): string {
  if (!op) return '';
  switch (op.kind) {
    case 'literal':
      return literalText(op.literal);
    case 'list':
      return JSON.stringify(op.items.map(literalJson));
    case 'period':
      return op.text;
    case 'path':
      return writtenPath(op.path);
  }
}

/** Selector and property of a path as written: root selector (or `its`) and the remaining steps. */
function splitPath(p: Path): { selector: string; property: string } {
  if (p.root === 'its') return { selector: 'its', property: p.steps.map((s) => s.name).join('.') };
  return {
    selector: p.steps[0]?.name ?? '',
    property: p.steps
      .slice(1)
      .map((s) => s.name)
      .join('.'),
  };
}

function explainList(list: ConditionList, ast: PolicyAst, selectorOf: (r: Rule) => string, targets: TargetOf): ExplainedCondition[] {
  return list.items.map((c, i) => explainCondition(c, i === 0 ? null : list.ops[i - 1], ast, selectorOf, targets));
}

type TargetOf = (c: Condition) => number | undefined;

function explainCondition(
  c: Condition,
  logical_op: 'and' | 'or' | null,
  ast: PolicyAst,
  selectorOf: (r: Rule) => string,
  targetOf: TargetOf,
): ExplainedCondition {
  const base = { logical_op, optional: false, negated: false };
  switch (c.kind) {
    case 'comparison': {
      const { selector, property } = splitPath(c.left);
      const measured = c.measure ? `${c.measure === 'length' ? 'length of' : 'number of'} ${property}` : property;
      return {
        type: 'comparison',
        selector,
        property: measured,
        operator: c.op.name,
        value: operandText(c.right),
        ...base,
        optional: c.optional,
        negated: c.op.negated,
      };
    }
    case 'quantifier': {
      const { selector, property } = splitPath(c.path);
      return {
        type: 'quantifier',
        selector,
        property,
        operator: c.quantifier,
        value: '',
        ...base,
        optional: c.optional,
        conditions: explainList(c.body, ast, selectorOf, targetOf),
      };
    }
    case 'group':
      return {
        type: 'group',
        selector: '',
        property: '',
        operator: '',
        value: '',
        ...base,
        conditions: explainList(c.body, ast, selectorOf, targetOf),
      };
    case 'labelRef':
      return { type: 'label_reference', selector: '', property: '', operator: 'references', value: c.label, ...base };
    case 'ruleRef': {
      const target = targetOf(c);
      return {
        type: 'rule_reference',
        selector: c.selector,
        property: '',
        operator: 'references',
        value: target === undefined ? c.phrase : ast.rules[target].outcome,
        ...base,
      };
    }
  }
}

/** Explains every rule in text order. */
export function explainRules(ast: PolicyAst, selectorOf: (r: Rule) => string, targetOf: TargetOf): ExplainedRule[] {
  return ast.rules.map((r) => ({
    label: r.label,
    selector: selectorOf(r),
    verb: r.verb,
    outcome: r.outcome,
    conditions: explainList(r.conditions, ast, selectorOf, targetOf),
  }));
}

/** First root selector in text order, searching into groups and quantifiers. */
export function firstSelector(list: ConditionList): string | null {
  for (const c of list.items) {
    if (c.kind === 'comparison' || c.kind === 'quantifier') {
      const p = c.kind === 'comparison' ? c.left : c.path;
      if (p.root === 'data' && p.steps[0]) return p.steps[0].name;
      if (c.kind === 'quantifier') {
        const inner = firstSelector(c.body);
        if (inner !== null) return inner;
      }
      if (c.kind === 'comparison' && c.right?.kind === 'path' && c.right.path.root === 'data') return c.right.path.steps[0].name;
    } else if (c.kind === 'group') {
      const inner = firstSelector(c.body);
      if (inner !== null) return inner;
    }
  }
  return null;
}
