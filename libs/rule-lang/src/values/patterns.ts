/**
 * §7.3.12 `matches pattern` [D-pattern-semantics]: RE2 syntax, linear-time matching (re2js, a
 * pure-JS RE2 port; never the backtracking built-in RegExp), unanchored search, case-sensitive
 * unless the pattern sets `(?i)`. Lookbehinds stay disabled (re2js only enables them with a flag).
 */
import { RE2JS } from 're2js';

export type CompiledPattern = { ok: true; test: (s: string) => boolean } | { ok: false; message: string };

const LOOKAROUND = 'lookahead and lookbehind are not supported (RE2 syntax)';

/** One author-facing line for a re2js syntax error. */
function describe(source: string, error: string, input: string): string {
  if (error === 'invalid escape sequence' && /^\\[1-9]/.test(input)) {
    return `backreferences such as \`${input}\` are not supported (RE2 syntax)`;
  }
  if (error === 'invalid escape sequence' && /^\\[kg]/.test(input)) {
    return `backreferences such as \`${input}\` are not supported (RE2 syntax)`;
  }
  if (input.startsWith('(?=') || input.startsWith('(?!') || input.startsWith('(?<=') || input.startsWith('(?<!')) {
    return LOOKAROUND;
  }
  if (error === 'invalid or unsupported Perl syntax' && input === '(?P' && source.includes('(?P=')) {
    return 'backreferences such as `(?P=name)` are not supported (RE2 syntax)';
  }
  return input === '' ? error : `${error}: \`${input}\``;
}

function oneLine(s: string): string {
  return s.replace(/[\r\n\u2028\u2029]+/g, ' ');
}

/**
 * Compile an RE2 pattern for an UNANCHORED search, case-sensitive unless (?i).
 * Returns {ok:true, test} or {ok:false, message}; the message is one line an author can act on.
 * Never throws.
 */
export function compilePattern(source: string): CompiledPattern {
  try {
    const re = RE2JS.compile(source);
    return { ok: true, test: (s: string) => re.test(s) };
  } catch (e) {
    if (typeof e === 'object' && e !== null && 'error' in e && typeof e.error === 'string') {
      const input = 'input' in e && typeof e.input === 'string' ? e.input : '';
      return { ok: false, message: oneLine(describe(source, e.error, input)) };
    }
    const msg = e instanceof Error ? e.message : String(e);
    return { ok: false, message: oneLine(`invalid pattern: ${msg}`) };
  }
}

/** What ajv needs of a compiled pattern. */
export interface SchemaRegExp {
  test(s: string): boolean;
  /** ajv keys its compiled patterns by this: it must differ between patterns. */
  toString(): string;
}

/**
 * ajv's `code.regExp` option: JSON Schema `pattern` and `patternProperties` compiled as RE2
 * (linear-time, like `matches pattern`), never as a backtracking JavaScript RegExp, so a schema
 * pattern such as `^(a+)+$` cannot take a worker for seconds. An invalid RE2 pattern throws an
 * Error with one line an author can act on; ajv reports it as the schema not compiling.
 */
export const schemaRegExp: ((pattern: string, flags: string) => SchemaRegExp) & { code: string } = Object.assign(
  (pattern: string, flags: string): SchemaRegExp => {
    const compiled = compilePattern(flags.includes('i') ? `(?i)${pattern}` : pattern);
    if (!compiled.ok) throw new Error(`pattern \`${pattern}\`: ${compiled.message}`);
    return { test: compiled.test, toString: () => `re2:/${pattern}/${flags}` };
  },
  { code: 'schemaRegExp' },
);
