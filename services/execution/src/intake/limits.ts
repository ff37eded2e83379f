import { ArbiterError, jsonDepth, RULE_TOO_LARGE } from '@arbiter/contracts';

/** Size limits checked on the main thread before a task reaches a worker (docs/api.md#conventions). */
export interface Limits {
  maxRuleBytes: number;
  maxDataDepth: number;
  /** UTF-8 bytes of one evaluation's trace (`@arbiter/run` `capTrace`). */
  maxTraceBytes: number;
}

/** Returns the UTF-8 size of `rule`; throws `payload_too_large` (reason {@link RULE_TOO_LARGE}) above `maxBytes`. */
export function checkRuleSize(rule: string, maxBytes: number): number {
  const bytes = Buffer.byteLength(rule, 'utf8');
  if (bytes > maxBytes) {
    const message = `rule text is ${bytes} bytes: the limit is ${maxBytes} bytes`;
    throw new ArbiterError('payload_too_large', message, [{ code: RULE_TOO_LARGE, message, path: 'rule' }]);
  }
  return bytes;
}

/** Throws `validation_failed` when `data` is nested deeper than `maxDepth`. */
export function checkDataDepth(data: unknown, maxDepth: number): void {
  if (jsonDepth(data, maxDepth) > maxDepth) {
    throw new ArbiterError('validation_failed', `data is nested deeper than ${maxDepth} levels`);
  }
}
