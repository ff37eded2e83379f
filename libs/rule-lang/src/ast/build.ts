/**
 * Parse tree → typed AST. Also runs the local static checks that need only one condition
 * (operand kinds, dates, periods, formats, patterns, `its` placement, `if present` placement,
 * measure operators); each problem is tagged with its §9.2 family.
 */

import type { ParserRuleContext, TerminalNode } from 'antlr4ng';
import {
  type ComparisonConditionContext,
  GroupConditionContext,
  LabelConditionContext,
  MeasuredConditionContext,
  QuantifiedConditionContext,
  RuleRefConditionContext,
  type ConditionContext,
  type ConditionsContext,
  type LabelNameContext,
  type LiteralContext,
  type OperandContext,
  type OperatorContext,
  type OutcomeContext,
  type PathContext,
  type PolicyContext,
  type PresenceContext,
  type ShorthandRuleContext,
  type VerboseRuleContext,
} from '../generated/RuleLangParser.js';
import { Family, type Problem } from '../errors/rule-parse-error.js';
import { FORMS, OPERATORS, type OperandKind } from '../operators/index.js';
import { codePointReader, endsRule, TERMINATOR_DETAIL } from '../parse/parse.js';
import { spanOfContext, spanOfNode } from '../parse/spans.js';
import { dayFromDateText } from '../values/dates.js';
import { formatChecker } from '../values/formats.js';
import { compilePattern } from '../values/patterns.js';
import { outcomeKeyOf, splitOutcome } from './outcomes.js';
import type {
  Condition,
  ConditionList,
  Literal,
  LogicalOp,
  Operand,
  OperatorUse,
  Path,
  PathStep,
  PeriodUnit,
  PolicyAst,
  Rule,
  Span,
} from './types.js';

const LABEL_PATTERN = /^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$/;
const CALENDAR_UNITS: ReadonlySet<PeriodUnit> = new Set(['month', 'year', 'decade', 'century']);

function words(ctx: ParserRuleContext): string[] {
  const out: string[] = [];
  for (let i = 0; i < ctx.getChildCount(); i++) {
    const child = ctx.getChild(i)!;
    out.push(child.getText());
  }
  return out;
}

function unitOf(word: string): PeriodUnit {
  const w = word.toLowerCase();
  if (w === 'centuries') return 'century';
  return (w.endsWith('s') ? w.slice(0, -1) : w) as PeriodUnit;
}

/** Unescapes a STRING token: only `\"` and `\\` are escapes (LANGUAGE.md §2.4). */
function stringValue(tokenText: string): string {
  return tokenText.slice(1, -1).replace(/\\(["\\])/g, '$1');
}

function describeOperand(op: Operand): string {
  switch (op.kind) {
    case 'list':
      return 'a list';
    case 'period':
      return 'a period';
    case 'path':
      return 'a path';
    case 'literal':
      return op.literal.kind === 'date' ? 'a date' : `a ${op.literal.kind}`;
  }
}

const OPERAND_WANTED: Record<OperandKind, string> = {
  valueOrPath: 'a value or a path',
  valueListOrPath: 'a value, a list or a path',
  listOrPath: 'a list or a path',
  none: 'nothing',
  string: 'a quoted string',
  period: 'a period such as `30 days`',
};

function operandFits(kind: OperandKind, op: Operand): boolean {
  switch (kind) {
    case 'valueOrPath':
      return op.kind === 'literal' || op.kind === 'path';
    case 'valueListOrPath':
      return op.kind === 'literal' || op.kind === 'path' || op.kind === 'list';
    case 'listOrPath':
      return op.kind === 'list' || op.kind === 'path';
    case 'none':
      return false;
    case 'string':
      return op.kind === 'literal' && op.literal.kind === 'string';
    case 'period':
      return op.kind === 'period';
  }
}

/** Builds the AST of a parsed policy; problems go to `problems`. */
export function buildAst(tree: PolicyContext, text: string, problems: Problem[]): PolicyAst {
  return new Builder(text, problems).policy(tree);
}

class Builder {
  /** Depth of enclosing any/all; `its` is valid only when positive. */
  private quantifierDepth = 0;

  /** Character at a token index (code points). */
  private readonly charAt: (index: number) => string | undefined;

  constructor(
    private readonly text: string,
    private readonly problems: Problem[],
  ) {
    this.charAt = codePointReader(text);
  }

  private problem(family: number, span: Span, detail: string, help?: string): void {
    this.problems.push(help === undefined ? { family, span, detail } : { family, span, detail, help });
  }

  policy(tree: PolicyContext): PolicyAst {
    const rules: Rule[] = [];
    for (const st of tree.statement()) {
      const verbose = st.verboseRule();
      const rule = verbose ? this.verbose(verbose) : this.shorthand(st.shorthandRule()!);
      rules.push(rule);
    }
    if (rules.length === 0) this.problems.push({ family: Family.empty, detail: 'the policy contains no rule' });
    return { rules, source: this.text };
  }

  private verbose(ctx: VerboseRuleContext): Rule {
    const dots = ctx.DOT();
    const terminator = dots[dots.length - 1];
    this.checkTerminator(terminator);
    const subjectText = ctx.SELECTOR().getText();
    const outcome = this.outcome(ctx.outcome());
    return {
      form: 'verbose',
      label: this.label(ctx.labelName()),
      subject: subjectText.slice(2, -2).trim(),
      verb: outcome.verb,
      outcome: outcome.name,
      outcomeKey: outcome.key,
      conditions: this.conditions(ctx.conditions()),
      span: spanOfContext(ctx),
      outcomeSpan: outcome.span,
    };
  }

  private shorthand(ctx: ShorthandRuleContext): Rule {
    this.checkTerminator(ctx.DOT());
    const outcome = this.outcome(ctx.outcome());
    return {
      form: 'shorthand',
      label: this.label(ctx.labelName()),
      subject: null,
      verb: outcome.verb,
      outcome: outcome.name,
      outcomeKey: outcome.key,
      conditions: this.conditions(ctx.conditions()),
      span: spanOfContext(ctx),
      outcomeSpan: outcome.span,
    };
  }

  /** LANGUAGE.md §2.4: the final `.` must be followed by whitespace, `#` or the end. */
  private checkTerminator(dot: TerminalNode): void {
    if (endsRule(this.charAt(dot.symbol.stop + 1))) return;
    this.problem(Family.syntax, spanOfNode(dot), TERMINATOR_DETAIL);
  }

  private label(ctx: LabelNameContext | null): string | null {
    if (!ctx) return null;
    const text = ctx.getText();
    if (!LABEL_PATTERN.test(text)) {
      this.problem(
        Family.syntax,
        spanOfContext(ctx),
        `invalid label \`${text}\`: labels use letters, digits and \`_\`, with single dots between parts`,
      );
    }
    return text;
  }

  private outcome(ctx: OutcomeContext): { verb: string | null; name: string; key: string; span: Span } {
    const { verb, name } = splitOutcome(words(ctx));
    return { verb, name, key: outcomeKeyOf(name), span: spanOfContext(ctx) };
  }

  private conditions(ctx: ConditionsContext): ConditionList {
    const items = ctx.condition().map((c) => this.condition(c));
    const ops = ctx.logicalOp().map((o) => o.getText().toLowerCase() as LogicalOp);
    return { items, ops };
  }

  private presenceNotAllowed(presence: PresenceContext | null, what: string): void {
    if (presence) {
      this.problem(
        Family.presence,
        spanOfContext(presence),
        `\`if present\` cannot follow ${what}; it applies to comparisons and any/all only`,
      );
    }
  }

  private condition(ctx: ConditionContext): Condition {
    const span = spanOfContext(ctx);
    if (ctx instanceof GroupConditionContext) {
      this.presenceNotAllowed(ctx.presence(), 'a parenthesised group');
      return { kind: 'group', body: this.conditions(ctx.conditions()), span };
    }
    if (ctx instanceof LabelConditionContext) {
      this.presenceNotAllowed(ctx.presence(), 'a label reference');
      return { kind: 'labelRef', label: ctx.LABEL_REF().getText().slice(1), span };
    }
    if (ctx instanceof RuleRefConditionContext) {
      this.presenceNotAllowed(ctx.presence(), 'a rule reference');
      return {
        kind: 'ruleRef',
        selector: ctx.SELECTOR().getText().slice(2, -2).trim(),
        phrase: ctx
          .refWord()
          .map((w) => w.getText())
          .join(' '),
        span,
      };
    }
    if (ctx instanceof QuantifiedConditionContext) {
      const path = this.path(ctx.path());
      this.quantifierDepth++;
      const body = this.conditions(ctx.conditions());
      this.quantifierDepth--;
      return {
        kind: 'quantifier',
        quantifier: ctx.ANY() ? 'any' : 'all',
        path,
        body,
        optional: ctx.presence() !== null,
        span,
      };
    }
    if (ctx instanceof MeasuredConditionContext) {
      const left = this.path(ctx.path());
      const op = this.operator(ctx.operator());
      if (!OPERATORS[op.name].measurable) {
        this.problem(
          Family.measures,
          op.span,
          `\`${op.written}\` cannot follow \`${ctx.LENGTH() ? 'length' : 'number'} of\`: use an ordering or equality operator such as \`is at least\``,
        );
      }
      const right = this.operandFor(op, ctx.operand());
      return {
        kind: 'comparison',
        measure: ctx.LENGTH() ? 'length' : 'number',
        left,
        op,
        right,
        optional: ctx.presence() !== null,
        span,
      };
    }
    const cmp = ctx as ComparisonConditionContext;
    const left = this.path(cmp.path());
    const op = this.operator(cmp.operator());
    const right = this.operandFor(op, cmp.operand());
    return { kind: 'comparison', measure: null, left, op, right, optional: cmp.presence() !== null, span };
  }

  private operator(ctx: OperatorContext): OperatorUse {
    const written = words(ctx)
      .map((w) => w.toLowerCase())
      .join(' ');
    const form = FORMS.get(written);
    if (!form) throw new Error(`INVARIANT: grammar operator form \`${written}\` missing from the catalogue`);
    return { name: form.name, negated: form.negated, written, span: spanOfContext(ctx) };
  }

  /** Builds the operand and checks it against the operator's operand kind. */
  private operandFor(op: OperatorUse, ctx: OperandContext | null): Operand | null {
    const kind = OPERATORS[op.name].operand;
    if (!ctx) {
      if (kind !== 'none') {
        const at = { ...op.span, offset: op.span.offset + op.span.length, column: op.span.column + op.span.length, length: 0 };
        this.problem(Family.syntax, at, `\`${op.written}\` needs ${OPERAND_WANTED[kind]} after it`);
      }
      return null;
    }
    const operand = this.operand(ctx);
    if (kind === 'none') {
      this.problem(Family.syntax, operand.span, `\`${op.written}\` takes no value, but ${describeOperand(operand)} follows it`);
      return operand;
    }
    if (!operandFits(kind, operand)) {
      this.problem(Family.operands, operand.span, `\`${op.written}\` needs ${OPERAND_WANTED[kind]}, not ${describeOperand(operand)}`);
      return operand;
    }
    if (kind === 'string' && operand.kind === 'literal' && operand.literal.kind === 'string') {
      this.checkFormatOrPattern(op, operand.literal.value, operand.span);
    }
    return operand;
  }

  private checkFormatOrPattern(op: OperatorUse, value: string, span: Span): void {
    if (op.name === 'format check') {
      if (!formatChecker(value)) {
        this.problem(
          Family.formats,
          span,
          `unknown format \`${value}\`: use one of date, time, date-time, email, hostname, ipv4, ipv6, uri, uuid`,
        );
      }
    } else if (op.name === 'pattern') {
      const compiled = compilePattern(value);
      if (!compiled.ok) this.problem(Family.formats, span, `invalid pattern \`${value}\`: ${compiled.message}`);
    }
  }

  private operand(ctx: OperandContext): Operand {
    const span = spanOfContext(ctx);
    const period = ctx.period();
    if (period) {
      const numberText = period.NUMBER().getText();
      const count = Number(numberText);
      const unitWord = period.unit().getText();
      const unit = unitOf(unitWord);
      if (count < 0) this.problem(Family.operands, span, `a period cannot be negative: \`${numberText} ${unitWord}\``);
      else if (CALENDAR_UNITS.has(unit) && !Number.isInteger(count)) {
        this.problem(Family.operands, span, `\`${numberText} ${unitWord}\`: months, years, decades and centuries need a whole number`);
      }
      return { kind: 'period', count, text: `${numberText} ${unitWord}`, unit, span };
    }
    const literal = ctx.literal();
    if (literal) return { kind: 'literal', literal: this.literal(literal), span };
    const list = ctx.list();
    if (list) return { kind: 'list', items: list.literal().map((l) => this.literal(l)), span };
    return { kind: 'path', path: this.path(ctx.path()!), span };
  }

  private literal(ctx: LiteralContext): Literal {
    const str = ctx.STRING();
    if (str) return { kind: 'string', value: stringValue(str.getText()) };
    const num = ctx.NUMBER();
    if (num) return { kind: 'number', value: Number(num.getText()), text: num.getText() };
    if (ctx.TRUE()) return { kind: 'boolean', value: true };
    if (ctx.FALSE()) return { kind: 'boolean', value: false };
    const date = ctx.DATE()!;
    const text = date.getText();
    if (Number.isNaN(dayFromDateText(text))) {
      this.problem(Family.operands, spanOfNode(date), `\`${text}\` is not a real calendar date`);
    }
    return { kind: 'date', text };
  }

  /** Normalises every path form to root-first steps (LANGUAGE.md §4.2). */
  private path(ctx: PathContext): Path {
    const span = spanOfContext(ctx);
    const dotted = ctx.DOTTED();
    if (dotted) {
      const segments = dotted.getText().split('.');
      if (segments[0].toLowerCase() === 'its') {
        this.checkIts(span);
        return { root: 'its', steps: segments.slice(1).map((name) => ({ name, kind: 'property' })), span };
      }
      return {
        root: 'data',
        steps: segments.map((name, i) => ({ name, kind: i === 0 ? 'selector' : 'property' })),
        span,
      };
    }
    const its = ctx.itsPath();
    if (its) {
      this.checkIts(span);
      const prop = its.PROPERTY();
      return { root: 'its', steps: prop ? this.segments(prop, 'property') : [], span };
    }
    const natural = ctx.naturalPath()!;
    // Elements E0 … En in text order; the chain is read right to left (En is the root).
    type Element = { node: TerminalNode | null; kind: 'selector' | 'property' | 'its' };
    const elements: Element[] = [{ node: natural.PROPERTY(), kind: 'property' }];
    for (const step of natural.pathStep()) {
      const itsStep = step.itsPath();
      if (itsStep) elements.push({ node: itsStep.PROPERTY(), kind: 'its' });
      else if (step.SELECTOR()) elements.push({ node: step.SELECTOR(), kind: 'selector' });
      else elements.push({ node: step.PROPERTY(), kind: 'property' });
    }
    const last = elements[elements.length - 1];
    elements.forEach((el, i) => {
      if (el.kind === 'its' && i !== elements.length - 1) {
        this.problem(Family.syntax, span, '`its` must be the last element of a path (the element the path starts from)');
      }
    });
    if (last.kind === 'property') {
      this.problem(
        Family.syntax,
        spanOfNode(last.node!),
        `the path must end with a selector such as \`of the **applicant**\`, not the property \`${last.node!.getText()}\``,
      );
    }
    const steps: PathStep[] = [];
    let root: Path['root'] = 'data';
    for (let i = elements.length - 1; i >= 0; i--) {
      const el = elements[i];
      if (el.kind === 'its') {
        root = 'its';
        this.checkIts(span);
        if (el.node) steps.push(...this.segments(el.node, 'property'));
      } else {
        steps.push(...this.segments(el.node!, el.kind));
      }
    }
    return { root, steps, span };
  }

  /** Segments of a `**a.b**` or `__x.y__` token, trimmed; empty segments are an error. */
  private segments(node: TerminalNode, kind: 'selector' | 'property'): PathStep[] {
    const text = node.getText().slice(2, -2);
    const parts = text.split('.').map((p) => p.trim());
    if (parts.some((p) => p === '')) {
      this.problem(Family.syntax, spanOfNode(node), `\`${node.getText()}\` has an empty name between dots`);
    }
    return parts.map((name) => ({ name, kind }));
  }

  private checkIts(span: Span): void {
    if (this.quantifierDepth === 0) {
      this.problem(Family.its, span, '`its` can only be used inside the parentheses of `any` or `all`');
    }
  }
}
