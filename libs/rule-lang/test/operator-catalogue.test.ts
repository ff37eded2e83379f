/**
 * The shape of the operator catalogue (src/operators/catalogue.ts) and what derives from it for
 * editors: listed negations placed once each, the structural words as LANGUAGE.md §2.5 lists
 * them, every highlighted word a word of the grammar, and the plain-data module the build writes
 * for browsers (`@arbiter/rule-lang/operator-words`).
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { section } from '@arbiter/test-kit/language-doc';
import { describe, expect, it } from 'vitest';
import {
  CATALOGUE,
  isOperatorEntry,
  keywordWords,
  listOperators,
  longestPhraseWords,
  operatorPhrases,
  operatorStartWords,
  operatorSymbols,
  operatorWords,
  STRUCTURAL_WORDS,
  usesClock,
  type CatalogueRow,
} from '../src/operators/index.js';
import { operatorWordsModule } from '../src/operators/words-module.js';
import { unitWords } from '../src/values/periods.js';

const ROWS: readonly CatalogueRow[] = CATALOGUE;
const GRAMMAR = readFileSync(fileURLToPath(new URL('../../../grammar/RuleLang.g4', import.meta.url)), 'utf8');

describe('the operator catalogue', () => {
  it('places each listed negation exactly once, and only listed ones', () => {
    const listed = ROWS.filter(isOperatorEntry).filter((e) => e.negation.listedAs !== undefined);
    const placed = ROWS.flatMap((r) => ('negationOf' in r ? [r.negationOf] : []));
    expect(placed.sort()).toEqual(listed.map((e) => e.name).sort());
    expect(listOperators().map((o) => o.operator)).toEqual(expect.arrayContaining(listed.map((e) => e.negation.listedAs)));
  });

  it('has unique names and forms', () => {
    const names = listOperators().map((o) => o.operator);
    expect(new Set(names).size).toBe(names.length);
    const forms = listOperators().flatMap((o) => o.forms);
    expect(new Set(forms).size).toBe(forms.length);
  });

  it('marks the operators compared with a period around today, and only those, as reading the clock', () => {
    const entries = ROWS.filter(isOperatorEntry);
    expect(entries.filter((e) => usesClock(e.name)).length).toBeGreaterThan(0);
    expect(entries.filter((e) => usesClock(e.name) !== (e.operand === 'period')).map((e) => e.name)).toEqual([]);
  });
});

describe('the words editors highlight', () => {
  it('start with the structural words of LANGUAGE.md §2.5', () => {
    const listed = /These words have structural meaning: `([^`]+)`/.exec(section('2.5 Fixed words').replace(/\n/g, ' '));
    expect(listed?.[1].split(/\s+/)).toEqual(STRUCTURAL_WORDS);
  });

  it('are all words of the grammar: structural and operator words as tokens, units as unit words', () => {
    const literals = new Set([...GRAMMAR.matchAll(/^[A-Z_]+\s*:\s*'([a-z]+)'/gm)].map((m) => m[1]));
    const units = new Set(unitWords());
    expect(keywordWords().filter((w) => !literals.has(w) && !units.has(w))).toEqual([]);
    expect(operatorWords().every((w) => keywordWords().includes(w))).toBe(true);
  });

  it('reach browsers as plain data: the build writes them into a module without imports (@arbiter/rule-lang/operator-words)', async () => {
    const { js, dts } = operatorWordsModule();
    expect(js).not.toMatch(/^\s*import\b/m);
    const words = (await import(`data:text/javascript,${encodeURIComponent(js)}`)) as Record<string, unknown>;
    expect({ ...words }).toEqual({
      KEYWORD_WORDS: keywordWords(),
      OPERATOR_PHRASES: operatorPhrases(),
      OPERATOR_START_WORDS: operatorStartWords(),
      OPERATOR_SYMBOLS: operatorSymbols(),
      LONGEST_PHRASE_WORDS: longestPhraseWords(),
      OPERATORS: listOperators(),
    });
    for (const name of Object.keys(words)) expect(dts).toContain(`export declare const ${name}:`);
  });
});
