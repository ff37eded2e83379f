/** Text → ANTLR parse tree, stopping at the first syntax error with an actionable message. */

import {
  BailErrorStrategy,
  BaseErrorListener,
  CharStream,
  CommonTokenStream,
  ParseCancellationException,
  Parser,
  PredictionMode,
  Token,
  type ATNSimulator,
  type RecognitionException,
  type Recognizer,
} from 'antlr4ng';
import { RuleLangLexer } from '../generated/RuleLangLexer.js';
import { RuleLangParser, type PolicyContext } from '../generated/RuleLangParser.js';
import { Family, type Problem } from '../errors/rule-parse-error.js';
import { spanOfToken } from './spans.js';

/** The parse tree plus the source text (the AST builder needs both). */
export interface ParsedPolicy {
  tree: PolicyContext;
  text: string;
}

/** Raised inside the listener to stop parsing at the first error. */
class FirstSyntaxError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
  }
}

const OPERAND_START = new Set([RuleLangParser.WORD]);
const OPERATOR_END = new Set([
  RuleLangParser.IS,
  RuleLangParser.EQUALS,
  RuleLangParser.EQUAL,
  RuleLangParser.TO,
  RuleLangParser.THAN,
  RuleLangParser.LEAST,
  RuleLangParser.EXACTLY,
  RuleLangParser.AS,
  RuleLangParser.NOT,
  RuleLangParser.CONTAINS,
  RuleLangParser.CONTAIN,
  RuleLangParser.IN,
  RuleLangParser.WITHIN,
  RuleLangParser.GT,
  RuleLangParser.GTE,
  RuleLangParser.LT,
  RuleLangParser.LTE,
  RuleLangParser.EQEQ,
  RuleLangParser.NEQ,
  RuleLangParser.FORMAT,
  RuleLangParser.PATTERN,
]);

/** Display name of a token type for "expected …" lists. */
function displayName(type: number): string {
  if (type === Token.EOF) return 'end of input';
  const literal = RuleLangParser.literalNames[type];
  if (literal) return literal.replace(/^'|'$/g, '`').toLowerCase();
  switch (type) {
    case RuleLangParser.SELECTOR:
      return 'a selector like `**applicant**`';
    case RuleLangParser.PROPERTY:
      return 'a property like `__age__`';
    case RuleLangParser.STRING:
      return 'a quoted string';
    case RuleLangParser.NUMBER:
      return 'a number';
    case RuleLangParser.DATE:
      return 'a date';
    case RuleLangParser.DOTTED:
      return 'a dotted path like `applicant.age`';
    case RuleLangParser.LABEL_REF:
      return 'a label reference like `$kyc`';
    case RuleLangParser.WORD:
      return 'a word';
    default: {
      const sym = RuleLangParser.symbolicNames[type];
      return sym ? `\`${sym.toLowerCase().replace(/_kw$/, '')}\`` : 'a token';
    }
  }
}

function describeToken(token: Token): string {
  if (token.type === Token.EOF) return 'end of input';
  return `\`${token.text ?? ''}\``;
}

/** Builds the one-line detail (and optional help) for a syntax error at `token`. */
function syntaxProblem(parser: Parser | null, token: Token, previous: Token | null): Problem {
  const span = spanOfToken(token);
  if (token.type === RuleLangLexer.UNEXPECTED_CHAR) {
    const ch = token.text ?? '';
    if (ch === '"') return { family: Family.syntax, span, detail: 'unterminated string: add the closing `"` on the same line' };
    if (ch === '*') return { family: Family.syntax, span, detail: 'unexpected `*`: a selector is written `**name**` on one line' };
    return { family: Family.syntax, span, detail: `unexpected character ${describeToken(token)}` };
  }
  if (token.type === RuleLangParser.WORD && previous && OPERATOR_END.has(previous.type) && OPERAND_START.has(token.type)) {
    return {
      family: Family.syntax,
      span,
      detail: `unexpected word ${describeToken(token)}: string values must be quoted, e.g. "${token.text}"`,
      help: `write "${token.text}"`,
    };
  }
  let expected = '';
  if (parser) {
    const types = parser.getExpectedTokens().toArray();
    if (types.length > 0 && types.length <= 6) expected = `: expected ${types.map(displayName).join(', ')}`;
    else if (types.includes(RuleLangParser.DOT) && token.type === Token.EOF) expected = ': a rule must end with `.`';
  }
  return { family: Family.syntax, span, detail: `unexpected ${describeToken(token)}${expected}` };
}

/** LANGUAGE.md §2.4 [D-terminator]: what a rule's final `.` must be followed by. */
export const TERMINATOR_DETAIL = 'a rule must end with `.` followed by a space, a line break, a comment or the end of the text';

/** Reads the character at a code-point index (ANTLR token indexes count code points, not UTF-16 units). */
export function codePointReader(text: string): (index: number) => string | undefined {
  if (!/[\uD800-\uDFFF]/.test(text)) return (i) => text[i];
  const points = Array.from(text);
  return (i) => points[i];
}

/** True when `ch` (undefined = end of input) may follow a terminating `.`. */
export function endsRule(ch: string | undefined): boolean {
  return ch === undefined || ch === '#' || /\s/.test(ch);
}

/** A character that starts a word, name, string or reference: a `.` directly before it was meant to end a rule. */
const GLUED = /^[\p{L}\p{N}_"*$\u00A7]$/u;

class ThrowingListener extends BaseErrorListener {
  constructor(
    private readonly tokens: CommonTokenStream,
    private readonly charAt: (index: number) => string | undefined,
  ) {
    super();
  }

  /**
   * A `.` glued to the next word (`…"x".Next`) is the real problem behind the syntax error that
   * follows it, so it is reported instead.
   */
  private gluedDot(before: number): Token | null {
    for (let i = 0; i < before; i++) {
      const t = this.tokens.get(i);
      if (t.type === RuleLangParser.DOT && t.channel === Token.DEFAULT_CHANNEL && GLUED.test(this.charAt(t.stop + 1) ?? ' ')) return t;
    }
    return null;
  }

  override syntaxError<S extends Token, T extends ATNSimulator>(
    recognizer: Recognizer<T>,
    offendingSymbol: S | null,
    line: number,
    column: number,
    msg: string,
    _e: RecognitionException | null,
  ): void {
    if (!offendingSymbol) {
      throw new FirstSyntaxError({ family: Family.syntax, span: { line, column: column + 1, offset: 0, length: 1 }, detail: msg });
    }
    const glued = this.gluedDot(offendingSymbol.tokenIndex);
    if (glued) throw new FirstSyntaxError({ family: Family.syntax, span: spanOfToken(glued), detail: TERMINATOR_DETAIL });
    const previous = offendingSymbol.tokenIndex > 0 ? this.previousVisible(offendingSymbol.tokenIndex) : null;
    throw new FirstSyntaxError(syntaxProblem(recognizer instanceof Parser ? recognizer : null, offendingSymbol, previous));
  }

  private previousVisible(index: number): Token | null {
    for (let i = index - 1; i >= 0; i--) {
      const t = this.tokens.get(i);
      if (t.channel === Token.DEFAULT_CHANNEL) return t;
    }
    return null;
  }
}

/** Stops the first parsing stage at any lexer or parser error. */
class BailListener extends BaseErrorListener {
  override syntaxError(): void {
    throw new ParseCancellationException(new Error('syntax error'));
  }
}
const BAIL = new BailListener();

/**
 * Stage one of the standard ANTLR two-stage parse: SLL prediction, bailing out at the first
 * error without recovery or messages. SLL prediction is cheaper than full LL, and where it
 * succeeds ANTLR guarantees the very tree LL prediction builds (PredictionMode.SLL). Returns
 * no tree on any failure (a syntax error, an input that needs full LL): stage two then parses from
 * scratch exactly as before, so every error message and position is unchanged. Nesting past
 * {@link MAX_NESTING} is refused here, from the tokens, before the parser recurses.
 */
function parseSll(text: string): { tree?: PolicyContext; problem?: Problem; nestingChecked: boolean } {
  const lexer = new RuleLangLexer(CharStream.fromString(text));
  const tokens = new CommonTokenStream(lexer);
  lexer.removeErrorListeners();
  lexer.addErrorListener(BAIL);
  try {
    tokens.fill();
  } catch {
    return { nestingChecked: false };
  }
  // Too deep is an error before anything recursive runs, whatever else is wrong further on.
  const deep = nestingProblem(tokens.getTokens());
  if (deep !== null) return { problem: deep, nestingChecked: true };
  const parser = new RuleLangParser(tokens);
  parser.removeErrorListeners();
  parser.addErrorListener(BAIL);
  parser.errorHandler = new BailErrorStrategy();
  parser.interpreter.predictionMode = PredictionMode.SLL;
  try {
    return { tree: parser.policy(), nestingChecked: true };
  } catch {
    return { nestingChecked: true };
  }
}

/**
 * How deeply conditions may nest: parentheses and any/all bodies (a body is written in
 * parentheses), counted together (LANGUAGE.md §9.2). The same limit in every door and on every
 * thread: the parser and everything after it recurse per level, so the count is made on the
 * tokens, before anything recursive runs, and keeps the deepest recursion far from any stack limit.
 */
export const MAX_NESTING = 256;

/** The problem of the first `(` that opens level {@link MAX_NESTING} + 1, or null. `date(…)` opens no level. */
export function nestingProblem(tokens: readonly Token[]): Problem | null {
  // Per open parenthesis: whether it counts (false for the one of `date(`).
  const open: boolean[] = [];
  let depth = 0;
  let previous: Token | null = null;
  for (const t of tokens) {
    if (t.channel !== Token.DEFAULT_CHANNEL) continue;
    if (t.type === RuleLangParser.LPAREN) {
      const counts = previous?.type !== RuleLangParser.DATE_KW;
      open.push(counts);
      if (counts && ++depth > MAX_NESTING) {
        return { family: Family.syntax, span: spanOfToken(t), detail: `conditions nested more than ${MAX_NESTING} levels deep` };
      }
    } else if (t.type === RuleLangParser.RPAREN && open.length > 0) {
      if (open.pop()) depth--;
    }
    previous = t;
  }
  return null;
}

/** The tokens of `text`, lexed without stopping at errors (a lexer error becomes a token the parser reports). */
function silentTokens(text: string): Token[] {
  const lexer = new RuleLangLexer(CharStream.fromString(text));
  lexer.removeErrorListeners();
  return lexer.getAllTokens();
}

/** An unpaired UTF-16 surrogate: in `u` mode a well-formed pair is one code point, so only a lone half matches. */
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/**
 * The problem of the first unpaired UTF-16 surrogate in `text` (`\ud800`–`\udfff` alone), or null.
 * Such text is no Unicode text: the service refuses it in any request, and half of a character must
 * never match (`"😀" contains "\ude00"`), so every door refuses it in a rule as a parse error.
 */
export function surrogateProblem(text: string): Problem | null {
  const found = UNPAIRED_SURROGATE.exec(text);
  if (found === null) return null;
  const before = text.slice(0, found.index);
  const lineStart = before.lastIndexOf('\n') + 1;
  let line = 1;
  for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) line++;
  const column = Array.from(before.slice(lineStart)).length + 1;
  const unit = found[0].charCodeAt(0).toString(16);
  return {
    family: Family.syntax,
    span: { line, column, offset: Array.from(before).length, length: 1 },
    detail: `unpaired UTF-16 surrogate \`\\u${unit}\`: the text must be well-formed Unicode`,
  };
}

/** Parses `text`; returns the tree or the first syntax problem. */
export function parsePolicy(text: string): { ok: true; parsed: ParsedPolicy } | { ok: false; problem: Problem } {
  const surrogate = surrogateProblem(text);
  if (surrogate !== null) return { ok: false, problem: surrogate };
  const fast = parseSll(text);
  if (fast.tree) return { ok: true, parsed: { tree: fast.tree, text } };
  if (fast.problem) return { ok: false, problem: fast.problem };
  if (!fast.nestingChecked) {
    const deep = nestingProblem(silentTokens(text));
    if (deep !== null) return { ok: false, problem: deep };
  }
  return parseLl(text);
}

/** Stage two: full LL prediction, stopping at the first error with an actionable message. */
function parseLl(text: string): { ok: true; parsed: ParsedPolicy } | { ok: false; problem: Problem } {
  const lexer = new RuleLangLexer(CharStream.fromString(text));
  const tokens = new CommonTokenStream(lexer);
  const parser = new RuleLangParser(tokens);
  const listener = new ThrowingListener(tokens, codePointReader(text));
  lexer.removeErrorListeners();
  lexer.addErrorListener(listener);
  parser.removeErrorListeners();
  parser.addErrorListener(listener);
  try {
    const tree = parser.policy();
    return { ok: true, parsed: { tree, text } };
  } catch (err) {
    if (err instanceof FirstSyntaxError) return { ok: false, problem: err.problem };
    throw err;
  }
}
