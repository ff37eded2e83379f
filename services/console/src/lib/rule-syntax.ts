import { StreamLanguage, type StreamParser } from '@codemirror/language';
import { KEYWORD_WORDS, OPERATOR_SYMBOLS } from '@arbiter/rule-lang/operator-words';

/** Words the rule language gives a meaning to (structural, operator and unit words, from the language's catalogue); highlighted as keywords. */
const KEYWORDS: ReadonlySet<string> = new Set(KEYWORD_WORDS);

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The rule arrow and the symbolic operators, longest first so `>=` is not read as `>`. */
const SYMBOLS = new RegExp(
  `^(?:${['->', ...OPERATOR_SYMBOLS]
    .sort((x, y) => y.length - x.length)
    .map(escape)
    .join('|')})`,
);

interface State {
  inSelector: boolean;
  inProperty: boolean;
}

/**
 * A small tokenizer for highlighting: `**selector**`, `__property__`, strings, numbers, dates,
 * `# comments`, `$label` references, operators and keywords. The parser that matters is the
 * server's (`/validate`); this one only colours.
 */
export const ruleParser: StreamParser<State> = {
  name: 'arbiter-rules',
  startState: () => ({ inSelector: false, inProperty: false }),
  token(stream, state) {
    if (state.inSelector) {
      if (!stream.skipTo('**') || !stream.match('**')) stream.skipToEnd();
      state.inSelector = false;
      return 'typeName';
    }
    if (state.inProperty) {
      if (!stream.skipTo('__') || !stream.match('__')) stream.skipToEnd();
      state.inProperty = false;
      return 'propertyName';
    }
    if (stream.eatSpace()) return null;
    if (stream.match('#')) {
      stream.skipToEnd();
      return 'comment';
    }
    if (stream.match('**')) {
      state.inSelector = true;
      return 'typeName';
    }
    if (stream.match('__')) {
      state.inProperty = true;
      return 'propertyName';
    }
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return 'string';
    if (stream.match(/^\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?/)) return 'number';
    if (stream.match(/^-?\d+(?:\.\d+)?/)) return 'number';
    if (stream.match(/^[$§][\p{L}\w-]+/u)) return 'labelName';
    if (stream.match(SYMBOLS)) return 'operator';
    if (stream.match(/^[\p{L}_][\p{L}\w]*/u)) {
      return KEYWORDS.has(stream.current().toLowerCase()) ? 'keyword' : null;
    }
    stream.next();
    return 'punctuation';
  },
};

export const ruleLanguage = StreamLanguage.define(ruleParser);

/** Where a `Parse error: line L, column C: …` message points (1-based), if it says. */
export function errorLocation(message: string): { line: number; column: number } | null {
  const m = /line (\d+), column (\d+)/.exec(message);
  if (!m) return null;
  return { line: Number(m[1]), column: Number(m[2]) };
}

/**
 * The character range a diagnostic underlines: from the reported column to the end of the word
 * there (at least one character), clamped to the document.
 */
export function errorRange(text: string, location: { line: number; column: number }): { from: number; to: number } {
  const lines = text.split('\n');
  const lineIndex = Math.min(Math.max(location.line, 1), Math.max(lines.length, 1)) - 1;
  let offset = 0;
  for (let i = 0; i < lineIndex; i++) offset += lines[i].length + 1;
  const lineText = lines[lineIndex] ?? '';
  // The parser's columns are 1-based; some messages say column 0 for "start of line".
  const col = Math.min(Math.max(location.column - 1, 0), lineText.length);
  const word = /^[^\s.,()]+/.exec(lineText.slice(col));
  const length = word ? word[0].length : 1;
  const from = offset + col;
  const to = Math.min(from + length, offset + lineText.length);
  if (to > from) return { from, to };
  // an error at the end of a line: underline its last character
  return from > offset ? { from: from - 1, to: from } : { from, to: Math.min(from + 1, text.length) };
}

/**
 * The rule-text line (1-based) each trace line comes from, where the trace says: a rule header
 * `rule "<outcome or label>" …` names its rule, and the indented lines after it belong to it.
 */
export function traceLineSources(rule: string, trace: readonly string[]): (number | null)[] {
  const ruleLines = rule.split('\n');
  const findRule = (name: string): number | null => {
    const needle = name.toLowerCase();
    let mention: number | null = null;
    for (let i = 0; i < ruleLines.length; i++) {
      const line = ruleLines[i].toLowerCase();
      if (line.trimStart().startsWith('#')) continue;
      const at = line.indexOf(needle);
      if (at < 0) continue;
      // the defining line names it before its `if` (verbose, or a label) or after `->` (shorthand)
      const ifAt = line.search(/(^|\s)if\s/);
      const arrowAt = line.indexOf('->');
      if (ifAt < 0 || at < ifAt || (arrowAt >= 0 && at > arrowAt)) return i + 1;
      mention ??= i + 1;
    }
    return mention;
  };
  let current: number | null = null;
  return trace.map((line) => {
    const header = /^rule "([^"]+)"/.exec(line);
    if (header) {
      current = findRule(header[1]);
      return current;
    }
    if (/^\s/.test(line)) return current;
    current = null;
    return null;
  });
}
