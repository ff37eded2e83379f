import { StringStream } from '@codemirror/language';
import { CATALOGUE, keywordWords, listOperators, operatorPhrases, operatorStartWords, operatorSymbols } from '@arbiter/rule-lang/operators';
import { KEYWORD_WORDS, OPERATOR_PHRASES, OPERATOR_START_WORDS, OPERATOR_SYMBOLS, OPERATORS } from '@arbiter/rule-lang/operator-words';
import { describe, expect, it } from 'vitest';
import { operatorPrefix } from '../src/editor/rule-extensions.js';
import { ruleParser } from '../src/lib/rule-syntax.js';

/** The tokens of one line as the highlighter styles them: [text, style]. */
function tokens(line: string): [string, string | null][] {
  const state = ruleParser.startState!(2);
  const stream = new StringStream(line, 2, 2);
  const out: [string, string | null][] = [];
  while (!stream.eol()) {
    stream.start = stream.pos;
    const style = ruleParser.token(stream, state);
    out.push([stream.current(), style]);
  }
  return out.filter(([text]) => text.trim() !== '');
}

describe('the editor and the language catalogue (@arbiter/rule-lang/operators)', () => {
  it('reads the words the build derives from the catalogue (@arbiter/rule-lang/operator-words)', () => {
    expect(KEYWORD_WORDS).toEqual(keywordWords());
    expect(OPERATOR_PHRASES).toEqual(operatorPhrases());
    expect(OPERATOR_START_WORDS).toEqual(operatorStartWords());
    expect(OPERATOR_SYMBOLS).toEqual(operatorSymbols());
    expect(OPERATORS).toEqual(listOperators());
  });

  it('highlights every word and symbol of every operator phrase', () => {
    expect(operatorPhrases().length).toBeGreaterThanOrEqual(CATALOGUE.length);
    for (const phrase of operatorPhrases()) {
      expect(tokens(phrase), phrase).toEqual(phrase.split(' ').map((w) => [w, /^[a-z]+$/.test(w) ? 'keyword' : 'operator']));
    }
  });

  it('highlights the structural and unit words, whatever their case, and no other word', () => {
    for (const word of keywordWords()) expect(tokens(word.toUpperCase()), word).toEqual([[word.toUpperCase(), 'keyword']]);
    expect(tokens('most licence')).toEqual([
      ['most', null],
      ['licence', null],
    ]);
    expect(tokens('->')).toEqual([['->', 'operator']]);
  });

  it('takes every operator phrase, typed up to any of its words, as the operator being typed', () => {
    for (const { forms } of listOperators()) {
      for (const form of forms) {
        const phrase = form.replace(/\s+"?<[a-z_]+>.*$/, '');
        if (/^(the )?(length|number) of$/.test(phrase)) continue;
        const words = phrase.split(' ');
        for (let n = 1; n <= words.length; n++) {
          const typed = words.slice(0, n).join(' ');
          expect(operatorPrefix(`the __age__ of the **driver** ${typed}`), typed).toBe(typed);
        }
      }
    }
    expect(operatorSymbols()).toContain('>=');
  });
});
