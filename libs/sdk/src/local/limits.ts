import { ArbiterError, UNPAIRED_SURROGATE_MESSAGE, unpairedSurrogateAt } from '@arbiter/contracts';

/**
 * What a local run checks of its data: a JSON object, as the body of `POST /run/policy/{baseId}`
 * must be, whose text (keys and strings) holds no unpaired UTF-16 surrogate, refused with the
 * service's 400 (`unpaired_surrogate`, with the path as the body's): such text is no Unicode, and
 * the answer must not depend on the door. The service's nesting limit (`MAX_DATA_DEPTH`) guards its
 * bus and worker threads, which a local run does not cross, so deep data is evaluated here
 * (docs/sdk.md says so).
 */
export function checkData(data: unknown): asserts data is Record<string, unknown> {
  if (!isObject(data)) throw new ArbiterError('validation_failed', 'data must be a JSON object');
  const at = unpairedSurrogateAt(data, 'body');
  if (at !== null) {
    throw new ArbiterError('validation_failed', `request body is invalid: \`${at}\`: ${UNPAIRED_SURROGATE_MESSAGE}`, [
      { code: 'unpaired_surrogate', message: UNPAIRED_SURROGATE_MESSAGE, path: at },
    ]);
  }
}

/** Whether {@link checkData} accepts `data` (without building the error). */
export function isAcceptedData(data: unknown): data is Record<string, unknown> {
  return isObject(data) && unpairedSurrogateAt(data, 'body') === null;
}

/** Whether `data` is an object that is not an array (what a run's data must be). */
export function isObject(data: unknown): data is Record<string, unknown> {
  return typeof data === 'object' && data !== null && !Array.isArray(data);
}
