/**
 * docs/LANGUAGE.md's operator table (§7.1) and `list_operators` answer (§12.3) are what the
 * operator catalogue generates (scripts/operator-doc.ts): any difference fails.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LANGUAGE_DOC, operatorList, operatorTable, withGeneratedBlocks } from '../scripts/operator-doc.js';
import { CATALOGUE } from '../src/operators/index.js';

describe('docs/LANGUAGE.md operator blocks', () => {
  it('are exactly what `npm run operators:doc` writes from the catalogue', () => {
    const text = readFileSync(LANGUAGE_DOC, 'utf8');
    expect(withGeneratedBlocks(text) === text, 'docs/LANGUAGE.md is stale: run `npm run operators:doc -w @arbiter/rule-lang`').toBe(true);
  });

  it('has one table row and one listed operator per catalogue row', () => {
    expect(operatorTable().split('\n')).toHaveLength(CATALOGUE.length + 2);
    expect(operatorList().split('\n')).toHaveLength(CATALOGUE.length + 4);
  });

  it('fails on a hand edit of a generated block', () => {
    const text = readFileSync(LANGUAGE_DOC, 'utf8');
    const edited = text.replace('| 1 | is greater than |', '| 1 | is bigger than |');
    expect(edited).not.toBe(text);
    expect(withGeneratedBlocks(edited)).toBe(text);
  });
});
