/** Outcome names, outcome keys and reference-phrase matching (LANGUAGE.md §3.4, §5.2). */

/** The reference engine's outcome verbs, longest (in words, then characters) first. */
const OUTCOME_VERBS: readonly string[][] = [
  'gets',
  'passes',
  'is',
  'has',
  'receives',
  'qualifies for',
  'meets',
  'satisfies',
  'achieves',
  'attains',
  'earns',
  'gains',
  'obtains',
  'secures',
  'acquires',
  'deserves',
  'merits',
  'warrants',
  'requires',
  'needs',
  'completes',
  'fulfills',
  'demonstrates',
  'shows',
  'proves',
  'establishes',
  'maintains',
  'holds',
  'possesses',
  'displays',
  'exhibits',
  'presents',
  'provides',
  'supplies',
  'delivers',
  'submits',
  'confirms',
  'validates',
  'verifies',
  'supports',
  'justifies',
  'ensures',
  'guarantees',
  'undergoes',
  'experiences',
  'encounters',
  'faces',
  'enjoys',
  'benefits from',
  'suffers',
  'lacks',
  'misses',
  'fails',
  'succeeds in',
  'excels at',
  'reaches',
  'arrives at',
  'comes to',
]
  .map((v) => v.split(' '))
  .sort((a, b) => b.length - a.length || b.join(' ').length - a.join(' ').length);

const ARTICLES = new Set(['a', 'an', 'the']);

/** How many leading words are an outcome verb, dropped when at least one word would remain (0: none). */
function verbLength(words: readonly string[]): number {
  for (const verb of OUTCOME_VERBS) {
    if (words.length > verb.length && verb.every((v, i) => words[i].toLowerCase() === v)) return verb.length;
  }
  return 0;
}

/** Drops one leading outcome verb when at least one word would remain. */
function dropVerb(words: string[]): string[] {
  return words.slice(verbLength(words));
}

/** Drops one leading article when at least one word would remain. */
function dropArticle(words: string[]): string[] {
  return words.length > 1 && ARTICLES.has(words[0].toLowerCase()) ? words.slice(1) : words;
}

/**
 * The written outcome words split as §3.4 steps 1–3 do: the outcome verb as written (null when
 * none was dropped) and the outcome name. `verb + " " + name` is the outcome as written.
 */
export function splitOutcome(written: readonly string[]): { verb: string | null; name: string } {
  const n = verbLength(written);
  return { verb: n === 0 ? null : written.slice(0, n).join(' '), name: written.slice(n).join(' ') };
}

/** Outcome name from the written outcome words (§3.4 steps 1–3). */
export function outcomeNameOf(written: readonly string[]): string {
  return splitOutcome(written).name;
}

/** Outcome key: the name in lower case, single spaces, without a leading article (§3.4). */
export function outcomeKeyOf(name: string): string {
  return dropArticle(name.toLowerCase().split(/\s+/)).join(' ');
}

/** The key a reference phrase must match (§5.2 matching). */
export function referenceKeyOf(phrase: string): string {
  return dropArticle(dropVerb(phrase.toLowerCase().split(/\s+/))).join(' ');
}
