import { createHash } from 'node:crypto';

/** Whether a run compiled its rule (or table) or found it in its cache. */
export type CacheUse = 'compile' | 'hit';

/** sha256 (hex) of a rule text (or a table node's source). */
export function ruleHash(rule: string): string {
  return createHash('sha256').update(rule, 'utf8').digest('hex');
}
