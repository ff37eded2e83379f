/** The one way an evaluation stops early (LANGUAGE.md §8.1, §8.6, §9.1). */

import type { EngineErrorCode } from '../api-types.js';

/**
 * Missing data (LANGUAGE.md §8.6) or an exhausted step budget stops evaluation. Thrown inside the
 * compiled closures and generated evaluators and caught once by the evaluation (evaluate.ts),
 * which turns it into a result; never escapes the library. Not an Error: no stack.
 */
export class EvalFailure {
  constructor(
    readonly code: Exclude<EngineErrorCode, 'parse_error'>,
    readonly message: string,
  ) {}
}
