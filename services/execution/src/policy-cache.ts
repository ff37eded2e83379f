import { createHash } from 'node:crypto';
import { compile, isRuleParseError, type CompiledPolicy } from '@arbiter/rule-lang';
import { LRUCache } from 'lru-cache';
/** Whether a worker compiled the rule for a run or found it in its cache. */
export type CacheUse = 'compile' | 'hit';

/** A compiled policy, or the parse error its text produced (cached too, so a bad rule is parsed once). */
export type PolicyEntry = { policy: CompiledPolicy } | { parseError: string };

/** sha256 (hex) of a rule text. */
export function ruleHash(rule: string): string {
  return createHash('sha256').update(rule, 'utf8').digest('hex');
}

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
    const entry = compileEntry(rule);
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
    const entry = this.lru.get(actual) ?? compileEntry(rule);
    this.lru.set(actual, entry);
    return { hash: actual, entry, cache: 'compile' };
  }
}

function compileEntry(rule: string): PolicyEntry {
  try {
    return { policy: compile(rule) };
  } catch (err) {
    if (isRuleParseError(err)) return { parseError: err.message };
    throw err;
  }
}
