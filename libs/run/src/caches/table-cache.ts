import type { FlowTableNode } from '@arbiter/contracts';
import { LRUCache } from 'lru-cache';
import { ruleHash, type CacheUse } from './hash.js';

/** A table node as a worker runs it; `compileTable` keeps its compiled cells for as long as this object lives. */
export interface TableEntry {
  nodeId: string;
  node: FlowTableNode;
}

/** An LRU of the table nodes a worker ran, keyed by the sha256 of their source text (`table-source.ts`); one per worker thread. */
export class TableCache {
  private readonly lru: LRUCache<string, TableEntry>;

  constructor(max: number) {
    this.lru = new LRUCache({ max });
  }

  /**
   * The entry of a table whose sha256 the main thread sent: a hit never reads `text`. On a miss
   * the text is hashed and parsed; it is cached under `hash` only when the two agree.
   */
  lookupHashed(hash: string, text: string): { hash: string; entry: TableEntry; cache: CacheUse } {
    const cached = this.lru.get(hash);
    if (cached) return { hash, entry: cached, cache: 'hit' };
    const actual = ruleHash(text);
    const entry = this.lru.get(actual) ?? (JSON.parse(text) as TableEntry);
    this.lru.set(actual, entry);
    return { hash: actual, entry, cache: 'compile' };
  }
}
