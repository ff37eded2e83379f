import { compile, isRuleParseError, type CompiledPolicy } from '@arbiter/rule-lang';

/** A rule compiled once, or the parse error its text gives (kept too, so a bad rule is parsed once). */
export type CompiledRule = { policy: CompiledPolicy } | { parseError: string };

/** Compiles `text`; a parse error is an answer, anything else thrown is a bug and propagates. */
export function compileRule(text: string, compiler: (text: string) => CompiledPolicy = compile): CompiledRule {
  try {
    return { policy: compiler(text) };
  } catch (err) {
    if (isRuleParseError(err)) return { parseError: err.message };
    throw err;
  }
}
