import { LRUCache } from 'lru-cache';
import { compileRule, type CompiledRule } from '../compiled.js';
import { ruleHash, type CacheUse } from './hash.js';

/** A compiled policy, or the parse error its text produced (cached too, so a bad rule is parsed once). */
export type PolicyEntry = CompiledRule;

/** An LRU of compiled policies keyed by the sha256 of their text; one per worker thread. */
export class PolicyCache {
  private readonly lru: LRUCache<string, PolicyEntry>;
  /** The hashes of the texts seen lately: the same text comes task after task, one sha256 is enough. */
  private readonly hashes: LRUCache<string, string>;

  constructor(max: number) {
    this.lru = new LRUCache({ max });
    this.hashes = new LRUCache({ max });
  }

  /** The entry for `rule`, compiling it only when it is not cached. */
  lookup(rule: string): { hash: string; entry: PolicyEntry; cache: CacheUse } {
    let hash = this.hashes.get(rule);
    if (hash === undefined) {
      hash = ruleHash(rule);
      this.hashes.set(rule, hash);
    }
    const cached = this.lru.get(hash);
    if (cached) return { hash, entry: cached, cache: 'hit' };
    const entry = compileRule(rule);
    this.lru.set(hash, entry);
    return { hash, entry, cache: 'compile' };
  }

  /**
   * The entry of a stored rule whose sha256 the caller already knows: a hit never touches `rule`.
   * On a miss the text is hashed and compiled; it is cached under `hash` only when the two agree,
   * so a wrong hash can never make another text's policy run.
   */
  lookupHashed(hash: string, rule: string): { hash: string; entry: PolicyEntry; cache: CacheUse } {
    const cached = this.lru.get(hash);
    if (cached) return { hash, entry: cached, cache: 'hit' };
    const actual = ruleHash(rule);
    const entry = this.lru.get(actual) ?? compileRule(rule);
    this.lru.set(actual, entry);
    return { hash: actual, entry, cache: 'compile' };
  }
}
