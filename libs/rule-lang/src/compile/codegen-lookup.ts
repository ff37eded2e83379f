/**
 * Path lookups as generated code, for both generated evaluators: the checks of stepGetter in
 * paths.ts, step for step, and (trace mode) the JSON path that getTraced reports.
 */

import { literal, TextExpr, type Source } from './codegen-source.js';
import { jsonKey, type PathPlan, type PlannedStep } from './paths.js';

/** What a traced lookup needs besides the plan. */
export interface LookupTrace {
  /** JSON path of the lookup's root: `$`, or the path of the current any/all element. */
  rootPath: TextExpr;
  /**
   * The statement for a strict step that fails, given the identifier of the step's captured
   * EvalFailure; it must end by throwing that failure (it may write a trace line first).
   */
  strictFailure(step: PlannedStep, failure: string): string;
}

/**
 * Emits the lookup of `plan` from `root` into a new `let v`: the value, MISSING (lenient steps)
 * or a throw of the step's EvalFailure.
 *
 * With `trace`, returns the JSON path followed, valid after the lookup whether it found the value
 * or stopped at a lenient step, exactly as getTraced reports it: at each step the first candidate
 * key the object owns (the first candidate when it owns none), written with jsonKey; at a missing
 * step, the path so far plus `.` and the name as written. Its constant parts stay text (merged
 * into the literals of the line that uses it); the key of a step with several candidates is a
 * variable, and with a lenient step the whole path is.
 */
export function emitLookup(src: Source, plan: PathPlan, root: string, v: string, trace?: LookupTrace): TextExpr | null {
  src.line(`let ${v} = ${root};`);
  const steps = plan.steps;
  let path = trace?.rootPath ?? null;
  if (steps.length === 0) return path;
  // The key written for a step with several candidates depends on the data (a variable per such
  // step); a variable holds the whole path when it depends on where the lookup stopped.
  const pathVar = trace !== undefined && steps.some((s) => s.lenient) ? `${v}_p` : null;
  const keyVars = steps.map((s, i) => (trace !== undefined && s.keys.length > 1 ? `${v}_k${i}` : null));
  const declared = [pathVar, ...keyVars].filter((k) => k !== null);
  if (declared.length > 0) src.line(`let ${declared.join(', ')};`);
  const block = `P_${v}`;
  src.line(`${block}: {`);
  steps.forEach((step, index) => {
    const failure = step.lenient ? null : src.capture('f', step.failure);
    const fail =
      failure === null
        ? `{ ${v} = MISSING;${path !== null && pathVar !== null ? ` ${pathVar} = ${path.plus(`.${step.name}`).code};` : ''} break ${block}; }`
        : trace !== undefined
          ? trace.strictFailure(step, failure)
          : `throw ${failure};`;
    const keys = step.keys.map(literal);
    const keyVar = keyVars[index] ?? null;
    if (step.checked) {
      // Prototype-like or index-like key: own keys of non-array objects only.
      src.line(`if (typeof ${v} !== 'object' || ${v} === null || Array.isArray(${v})) ${fail}`);
      const found = (k: string, j: number): string =>
        keyVar === null ? `${v} = ${v}[${k}];` : `{ ${keyVar} = ${literal(jsonKey(step.keys[j]))}; ${v} = ${v}[${k}]; }`;
      src.line(`${keys.map((k, j) => `if (Object.hasOwn(${v}, ${k})) ${found(k, j)}`).join(' else ')} else ${fail}`);
      src.line(`if (${v} === undefined) ${fail}`);
    } else {
      src.line(`if (typeof ${v} !== 'object' || ${v} === null) ${fail}`);
      src.line(`if (${keys.map((k) => `(w = ${v}[${k}]) === undefined`).join(' && ')}) ${fail}`);
      if (keyVar !== null) {
        // The key shown is the first candidate the object owns, whichever one supplied the value.
        const chain = step.keys.map((k, j) => `Object.hasOwn(${v}, ${keys[j]}) ? ${literal(jsonKey(k))} : `).join('');
        src.line(`${keyVar} = ${chain}${literal(jsonKey(step.keys[0]))};`);
      }
      src.line(`${v} = w;`);
    }
    if (path !== null) path = path.plus(keyVar !== null ? TextExpr.code(keyVar, true) : jsonKey(step.keys[0]));
  });
  if (path !== null && pathVar !== null) src.line(`${pathVar} = ${path.code};`);
  src.line('}');
  return pathVar !== null ? TextExpr.code(pathVar, true) : path;
}
