/**
 * The grammar's `operator` rule (grammar/RuleLang.g4) accepts exactly the phrases of the operator
 * catalogue: each alternative, its `NOT?` taken and not, spelled with the lexer's words, is a
 * form of one catalogue entry, and every catalogue form is one alternative. An operator added to
 * one and not the other fails here, not at run time.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { explain } from '../src/index.js';
import { FORMS, OPERATORS, type OperandKind } from '../src/operators/index.js';

/** An operand of each kind (a string that is both a format name and a pattern). */
const OPERAND: Record<OperandKind, string> = {
  valueOrPath: ' 1',
  valueListOrPath: ' 1',
  listOrPath: ' [1]',
  none: '',
  string: ' "date"',
  period: ' 3 days',
};

const GRAMMAR = readFileSync(fileURLToPath(new URL('../../../grammar/RuleLang.g4', import.meta.url)), 'utf8');

/** Token name → its one spelling, for the lexer rules that are a single literal (`IS : 'is' ;`). */
function literalTokens(): Map<string, string> {
  return new Map([...GRAMMAR.matchAll(/^([A-Z_]+)\s*:\s*'([^']+)'\s*;/gm)].map((m) => [m[1], m[2]]));
}

/** Every phrase the `operator` rule accepts, lower case, single spaces. */
function grammarPhrases(): string[] {
  const body = /^operator\s*\n\s*:([\s\S]*?)\n\s*;/m.exec(GRAMMAR);
  if (!body) throw new Error('grammar/RuleLang.g4 has no `operator` rule');
  const tokens = literalTokens();
  const spell = (name: string): string => {
    const word = tokens.get(name);
    if (word === undefined) throw new Error(`operator token ${name} is not a single literal`);
    return word;
  };
  return body[1]
    .split('|')
    .map((alt) => alt.trim().split(/\s+/))
    .flatMap((parts) => {
      let phrases: string[][] = [[]];
      for (const part of parts) {
        const optional = part.endsWith('?');
        const word = spell(optional ? part.slice(0, -1) : part);
        phrases = optional ? phrases.flatMap((p) => [p, [...p, word]]) : phrases.map((p) => [...p, word]);
      }
      return phrases.map((p) => p.join(' '));
    });
}

describe('the grammar and the operator catalogue', () => {
  it('accept the same operator phrases', () => {
    const grammar = grammarPhrases();
    expect(new Set(grammar).size).toBe(grammar.length);
    expect([...grammar].sort()).toEqual([...FORMS.keys()].sort());
  });

  it('parse every catalogue phrase into its operator, negated as the catalogue says', () => {
    for (const [phrase, { name, negated }] of FORMS) {
      const rule = `if x.y ${phrase}${OPERAND[OPERATORS[name].operand]} -> ok.`;
      const explained = explain(rule);
      expect(explained.error, rule).toBeNull();
      expect(explained.rules[0].conditions[0], rule).toMatchObject({ operator: name, negated });
    }
  });
});
