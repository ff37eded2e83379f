/**
 * The shape of the operator catalogue (src/operators/catalogue.ts) and what derives from it for
 * editors: listed negations placed once each, the structural words as LANGUAGE.md §2.5 lists
 * them, every highlighted word a word of the grammar, and the `@arbiter/rule-lang/operators`
 * entry free of Node modules (the console bundles it).
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { section } from '@arbiter/test-kit/language-doc';
import { describe, expect, it } from 'vitest';
import {
  CATALOGUE,
  isOperatorEntry,
  keywordWords,
  listOperators,
  operatorWords,
  STRUCTURAL_WORDS,
  usesClock,
  type CatalogueRow,
} from '../src/operators/index.js';
import { unitWords } from '../src/values/periods.js';

const ROWS: readonly CatalogueRow[] = CATALOGUE;
const src = fileURLToPath(new URL('../src/', import.meta.url));
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

  it('come from a module without Node imports (the console bundles @arbiter/rule-lang/operators)', () => {
    const seen = new Set<string>();
    const external = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)';/gms)) {
        if (m[2]) continue;
        const spec = m[3];
        if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
        else external.add(spec);
      }
    };
    visit(path.join(src, 'operators/index.ts'));
    expect(seen.size).toBeGreaterThan(5);
    expect([...external].filter((s) => s.startsWith('node:') || !['re2js', 'ajv-formats/dist/formats.js'].includes(s))).toEqual([]);
  });
});
