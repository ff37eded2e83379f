import type { ParserRuleContext, TerminalNode, Token } from 'antlr4ng';
import type { Span } from '../ast/types.js';

/** Span of one token (ANTLR columns are 0-based; ours start at 1). */
export function spanOfToken(token: Token): Span {
  return {
    line: token.line,
    column: token.column + 1,
    offset: token.start,
    length: Math.max(0, token.stop - token.start + 1),
  };
}

export function spanOfNode(node: TerminalNode): Span {
  return spanOfToken(node.symbol);
}

/** Span from the first to the last token of a rule context. */
export function spanOfContext(ctx: ParserRuleContext): Span {
  const start = ctx.start!;
  const stop = ctx.stop ?? start;
  return {
    line: start.line,
    column: start.column + 1,
    offset: start.start,
    length: Math.max(0, stop.stop - start.start + 1),
  };
}
