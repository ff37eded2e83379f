import { ArbiterError } from './error-codes.js';
import { bracketCount, jsonDepth, MAX_JSON_DEPTH } from './json-depth.js';
import { hasUnpairedSurrogate, UNPAIRED_SURROGATE_MESSAGE } from './text.js';

/**
 * Text worth a walk of the parsed value: keys that JSON.parse makes own properties but that reach
 * prototypes when copied (`Object.assign`, spread into old code), and the escapes of U+0000 and of
 * UTF-16 surrogates (a raw body is UTF-8, so an unpaired surrogate can only come as an escape).
 */
const SUSPECT_KEYS = /"(?:__proto__|constructor)"\s*:|\\u00|\\ud[89a-f]/i;

/**
 * Parses a JSON request body at the edge, before anything walks it: the nesting depth is checked
 * (iteratively, up to {@link MAX_JSON_DEPTH}; V8's JSON.parse itself does not recurse), U+0000 and unpaired UTF-16 surrogates
 * are refused (PostgreSQL can store neither: a `text` column refuses U+0000, a `jsonb` event the
 * `\ud800` escape; no rule needs them), and `__proto__` keys and `constructor.prototype` are
 * refused with the path where they are. Every refusal is an {@link ArbiterError} (400). Every
 * route's body goes through it (the gateway's body parsers, the mcp service's own port).
 */
export function parseJsonBody(text: string, maxDepth: number = MAX_JSON_DEPTH, knownDepth?: number): unknown {
  if (text === '' || /^\s*$/.test(text)) {
    throw new ArbiterError('bad_request', 'request body is empty but the content type is `application/json`');
  }
  // V8's JSON.parse does not recurse, so it may read any depth; nothing after it may, so the depth
  // is checked before anything walks the value: a text with no more opening brackets than the limit
  // cannot be too deep, any other's value is measured (unless the caller measured its text already).
  const mayBeDeep = knownDepth !== undefined ? knownDepth > maxDepth : bracketCount(text, maxDepth) > maxDepth;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ArbiterError('bad_request', 'request body is not valid JSON', undefined, { cause: err });
  }
  if (mayBeDeep && (knownDepth ?? jsonDepth(value, maxDepth)) > maxDepth) {
    throw new ArbiterError('validation_failed', `request body is nested deeper than ${maxDepth} levels`, [
      { code: 'too_deep', message: `nested deeper than ${maxDepth} levels`, path: 'body' },
    ]);
  }
  if (SUSPECT_KEYS.test(text)) checkKeysAndText(value);
  return value;
}

/** Throws for the first U+0000, unpaired surrogate, `__proto__` key or `constructor.prototype` in `root` (an iterative walk). */
function checkKeysAndText(root: unknown): void {
  const stack: [unknown, string][] = [[root, 'body']];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string];
    if (typeof node === 'string') {
      checkText(node, path);
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      node.forEach((child, i) => stack.push([child, `${path}.${i}`]));
      continue;
    }
    for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
      const at = `${path}.${key}`;
      checkText(key, path);
      if (key === '__proto__') throw forbiddenKey(at, '`__proto__` keys are not accepted');
      if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) {
        throw forbiddenKey(`${at}.prototype`, '`constructor.prototype` is not accepted');
      }
      stack.push([child, at]);
    }
  }
}

function forbiddenKey(path: string, message: string): ArbiterError {
  return new ArbiterError('validation_failed', `request body is invalid: \`${path}\`: ${message}`, [
    { code: 'forbidden_key', message, path },
  ]);
}

/** Refuses text PostgreSQL cannot store: U+0000 (`nul_character`) or an unpaired UTF-16 surrogate (`unpaired_surrogate`). */
function checkText(text: string, path: string): void {
  if (text.includes('\u0000')) throw textError(path, 'nul_character', 'text must not contain U+0000');
  if (hasUnpairedSurrogate(text)) {
    throw textError(path, 'unpaired_surrogate', UNPAIRED_SURROGATE_MESSAGE);
  }
}

function textError(path: string, code: string, message: string): ArbiterError {
  return new ArbiterError('validation_failed', `request body is invalid: \`${path}\`: ${message}`, [{ code, message, path }]);
}

/** Refuses a URL whose path or query carries U+0000 (`%00`): no stored text or search may hold it. */
export function checkUrl(url: string): void {
  if (url.includes('%00')) {
    const where = url.indexOf('?') >= 0 && url.indexOf('%00') > url.indexOf('?') ? 'query' : 'params';
    throw new ArbiterError('validation_failed', `request ${where} must not contain U+0000 (\`%00\`)`, [
      { code: 'nul_character', message: 'text must not contain U+0000', path: where },
    ]);
  }
}
