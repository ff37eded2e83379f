/**
 * The plain-data module editors import (`@arbiter/rule-lang/operator-words`): the words and
 * phrases derived from the catalogue, written into dist/ at build (scripts/emit-operator-words.mjs)
 * so a browser bundle gets them without the operators' semantics (patterns, formats).
 */

import { keywordWords, listOperators, longestPhraseWords, operatorPhrases, operatorStartWords, operatorSymbols } from './index.js';

/** The generated module: its JavaScript and its type declarations. */
export function operatorWordsModule(): { js: string; dts: string } {
  const data = {
    KEYWORD_WORDS: keywordWords(),
    OPERATOR_PHRASES: operatorPhrases(),
    OPERATOR_START_WORDS: operatorStartWords(),
    OPERATOR_SYMBOLS: operatorSymbols(),
    LONGEST_PHRASE_WORDS: longestPhraseWords(),
    OPERATORS: listOperators(),
  };
  const header = '// Generated at build from src/operators/catalogue.ts (scripts/emit-operator-words.mjs); do not edit.\n';
  const js = Object.entries(data)
    .map(([name, value]) => `export const ${name} = Object.freeze(${JSON.stringify(value)});\n`)
    .join('');
  const dts = [
    '/** Structural, operator and unit words: what an editor highlights as keywords. */',
    'export declare const KEYWORD_WORDS: readonly string[];',
    '/** Every written operator phrase, positive and negative, measures included (no placeholders). */',
    'export declare const OPERATOR_PHRASES: readonly string[];',
    '/** The words an operator phrase can start with. */',
    'export declare const OPERATOR_START_WORDS: readonly string[];',
    '/** The symbolic operators. */',
    'export declare const OPERATOR_SYMBOLS: readonly string[];',
    '/** The most words an operator phrase has. */',
    'export declare const LONGEST_PHRASE_WORDS: number;',
    '/** `list_operators`, in catalogue order. */',
    'export declare const OPERATORS: readonly { readonly operator: string; readonly forms: readonly string[] }[];',
    '',
  ].join('\n');
  return { js: header + js, dts: header + dts };
}
