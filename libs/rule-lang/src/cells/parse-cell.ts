/**
 * Decision-table cells (docs/design/tables.md): a cell is the right-hand side of a comparison whose left
 * side is the column's value, and a column is a path. Both are parsed by the rule language's own
 * grammar and AST builder, by placing the text in a one-condition shorthand rule
 * (`if cell.value <cell> -> cell.`) and checking that the rule holds exactly that condition, so
 * every operator form, operand check and message of the language applies unchanged. Positions are
 * mapped back to the cell's own text.
 */

import { CharStream, Token } from 'antlr4ng';
import type { ComparisonCondition, Path } from '../ast/types.js';
import { buildAst } from '../ast/build.js';
import { type Problem } from '../errors/rule-parse-error.js';
import { RuleLangLexer } from '../generated/RuleLangLexer.js';
import { parsePolicy } from '../parse/parse.js';

/** Where and why a cell or column path does not parse; positions count in the cell's own text (from 1; code points). */
export interface CellProblem {
  /** One line, in the language's wording (without the `Parse error: line L, column C:` prefix). */
  detail: string;
  line: number;
  column: number;
  /** Code points from the start of the cell. */
  offset: number;
  length: number;
  help?: string;
}

/** A parsed cell: `any` (`-` or empty: matches every value) or one comparison with the column's value on the left. */
export type ParsedCell = { kind: 'any' } | { kind: 'comparison'; condition: ComparisonCondition };

const CELL_PREFIX = 'if cell.value ';
const COLUMN_PREFIX = 'if ';
const SUFFIX = '\n-> cell.';

/** The text is `-`, empty or blank: the cell matches anything. */
export function isAnyCell(text: string): boolean {
  const t = text.trim();
  return t === '' || t === '-';
}

/** Code points of `s` (ANTLR positions count them). */
function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** The first token of `text` the parser would see, or null. */
function firstTokenType(text: string): number | null {
  const lexer = new RuleLangLexer(CharStream.fromString(text));
  lexer.removeErrorListeners();
  for (let t = lexer.nextToken(); t.type !== Token.EOF; t = lexer.nextToken()) {
    if (t.channel === Token.DEFAULT_CHANNEL) return t.type;
  }
  return null;
}

/**
 * What a bare value means in a cell (the DMN habit): a literal is `is <literal>` (loose
 * equality), a list is `is in <list>`. Anything else starts with an operator.
 */
function impliedOperator(text: string): string {
  const type = firstTokenType(text);
  switch (type) {
    case RuleLangLexer.STRING:
    case RuleLangLexer.NUMBER:
    case RuleLangLexer.TRUE:
    case RuleLangLexer.FALSE:
    case RuleLangLexer.DATE:
    case RuleLangLexer.DATE_KW:
      return 'is ';
    case RuleLangLexer.LBRACK:
      return 'is in ';
    default:
      return '';
  }
}

/** A problem of the wrapped text, placed in the user's text (`start` code points in, `size` long). */
function placed(problem: Problem, start: number, size: number, end: string): CellProblem {
  const span = problem.span ?? { line: 1, column: start + 1, offset: start, length: 0 };
  let offset = span.offset - start;
  let { line, column } = span;
  let detail = problem.detail;
  if (offset >= size) {
    // The error sits in the text after the cell: the cell ended too early.
    offset = size;
    line = 1;
    column = size + 1;
    detail = detail.replace(/^unexpected `->`|^unexpected `-`/, `unexpected end of the ${end}`);
  } else if (offset < 0) {
    offset = 0;
    line = 1;
    column = 1;
  } else if (line === 1) {
    column -= start;
  }
  const out: CellProblem = { detail, line, column, offset, length: Math.max(0, Math.min(span.length, size - offset)) };
  if (problem.help !== undefined) out.help = problem.help;
  return out;
}

/** The first problem in the language's order (family, then position). */
function first(problems: readonly Problem[]): Problem {
  return [...problems].sort((a, b) => a.family - b.family || (a.span?.offset ?? -1) - (b.span?.offset ?? -1))[0];
}

/** Parses `<prefix><text>\n-> cell.`: the condition when the rule holds exactly one plain comparison. */
function parseWrapped(
  prefix: string,
  text: string,
  end: 'cell' | 'path',
): { ok: true; condition: ComparisonCondition; start: number } | { ok: false; problem: CellProblem } {
  const source = `${prefix}${text}${SUFFIX}`;
  const start = codePoints(prefix);
  const size = codePoints(text);
  const parsed = parsePolicy(source);
  if (!parsed.ok) return { ok: false, problem: placed(parsed.problem, start, size, end) };
  const problems: Problem[] = [];
  let ast;
  try {
    ast = buildAst(parsed.parsed.tree, source, problems);
  } catch (err) {
    if (err instanceof RangeError) return { ok: false, problem: whole(text, `the ${end} is nested too deeply`) };
    throw err;
  }
  if (problems.length > 0) return { ok: false, problem: placed(first(problems), start, size, end) };
  const rule = ast.rules.length === 1 ? ast.rules[0] : undefined;
  const condition = rule?.conditions.items.length === 1 ? rule.conditions.items[0] : undefined;
  if (condition?.kind !== 'comparison' || condition.measure !== null) return { ok: false, problem: whole(text, ONE[end]) };
  return { ok: true, condition, start };
}

const ONE = {
  cell: 'a cell holds one comparison with the column on its left, such as `>= 18` or `is in ["NL", "BE"]`: use another column for a second condition',
  path: 'a column is one path, such as `applicant.age` or `the __age__ of the **applicant**`',
} as const;

/**
 * Parses one cell: `-` (or blank) matches anything; otherwise an operator and its operand as the
 * language writes them after a path (`>= 18`, `is not in ["NL", "BE"]`, `is within 30 days`,
 * `matches pattern "^[A-Z]{2}$"`, `< applicant.limit`, `>= 18 if present`), or a bare literal
 * (`"gold"`, `10`, meaning `is …`) or list (`["NL", "BE"]`, meaning `is in …`).
 */
export function parseCell(text: string): { ok: true; cell: ParsedCell } | { ok: false; problem: CellProblem } {
  if (isAnyCell(text)) return { ok: true, cell: { kind: 'any' } };
  const implied = impliedOperator(text);
  const wrapped = parseWrapped(`${CELL_PREFIX}${implied}`, text, 'cell');
  if (!wrapped.ok) return wrapped;
  const { condition, start } = wrapped;
  // The left side stays `cell.value`, the operator starts the cell (or is the implied one), nothing follows the comparison.
  const operatorAt = condition.op.span.offset - start;
  if (
    condition.left.span.offset !== codePoints(COLUMN_PREFIX) ||
    operatorAt !== (implied === '' ? leadingBlank(text) : -codePoints(implied)) ||
    trailing(text, condition.span.offset + condition.span.length - start)
  ) {
    return { ok: false, problem: whole(text, ONE.cell) };
  }
  return { ok: true, cell: { kind: 'comparison', condition } };
}

/** Code points of blank space before the first token of `text`. */
function leadingBlank(text: string): number {
  return codePoints(text) - codePoints(text.trimStart());
}

/** True when anything but blanks and comments follows code point `end` of `text`. */
function trailing(text: string, end: number): boolean {
  return (
    Array.from(text)
      .slice(end)
      .join('')
      .replace(/#[^\n]*/g, '')
      .trim() !== ''
  );
}

function whole(text: string, detail: string): CellProblem {
  return { detail, line: 1, column: 1, offset: 0, length: codePoints(text) };
}

/**
 * Parses a column's path: any path form of the language (`applicant.age`,
 * `the __age__ of the **applicant**`), read from the data's root.
 */
export function parseColumnPath(text: string): { ok: true; path: Path } | { ok: false; problem: CellProblem } {
  if (text.trim() === '') return { ok: false, problem: whole(text, 'the path is empty: write one like `applicant.age`') };
  const wrapped = parseWrapped(COLUMN_PREFIX, `${text} is empty`, 'path');
  const size = codePoints(text);
  if (!wrapped.ok) return { ok: false, problem: wrapped.problem.offset >= size ? whole(text, ONE.path) : wrapped.problem };
  const { condition, start } = wrapped;
  const left = condition.left;
  if (
    !/^\s*(?:the\s+)?$/i.test(
      Array.from(text)
        .slice(0, left.span.offset - start)
        .join(''),
    ) ||
    trailing(text, left.span.offset + left.span.length - start) ||
    condition.op.name !== 'is empty' ||
    condition.optional
  ) {
    return { ok: false, problem: whole(text, ONE.path) };
  }
  return { ok: true, path: left };
}

/** The problem of a cell, or null when it parses (live validation of one cell). */
export function checkCell(text: string): CellProblem | null {
  const parsed = parseCell(text);
  return parsed.ok ? null : parsed.problem;
}

/** The problem of a column's path, or null when it parses. */
export function checkColumnPath(text: string): CellProblem | null {
  const parsed = parseColumnPath(text);
  return parsed.ok ? null : parsed.problem;
}
