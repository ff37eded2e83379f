import type { FastifyInstance } from 'fastify';
import { ArbiterError, MAX_JSON_DEPTH, textJsonDepth } from '@arbiter/contracts';

/** Keys that JSON.parse makes own properties but that reach prototypes when copied (`Object.assign`, spread into old code). */
const SUSPECT_KEYS = /"(?:__proto__|constructor)"\s*:|\\u00/i;

/**
 * Parses a JSON request body at the edge, before anything walks it: the nesting depth is checked
 * on the text (iteratively, up to {@link MAX_JSON_DEPTH}), U+0000 is refused (PostgreSQL cannot
 * store it, and no rule needs it), and `__proto__` keys and `constructor.prototype` are refused
 * with the path where they are. Every refusal is an {@link ArbiterError} (400).
 */
export function parseJsonBody(text: string, maxDepth: number = MAX_JSON_DEPTH): unknown {
  if (text === '' || /^\s*$/.test(text)) {
    throw new ArbiterError('bad_request', 'request body is empty but the content type is `application/json`');
  }
  if (textJsonDepth(text, maxDepth) > maxDepth) {
    throw new ArbiterError('validation_failed', `request body is nested deeper than ${maxDepth} levels`, [
      { code: 'too_deep', message: `nested deeper than ${maxDepth} levels`, path: 'body' },
    ]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ArbiterError('bad_request', 'request body is not valid JSON', undefined, { cause: err });
  }
  if (SUSPECT_KEYS.test(text)) checkKeysAndText(value);
  return value;
}

/** Throws for the first U+0000, `__proto__` key or `constructor.prototype` in `root` (an iterative walk). */
function checkKeysAndText(root: unknown): void {
  const stack: [unknown, string][] = [[root, 'body']];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string];
    if (typeof node === 'string') {
      if (node.includes('\u0000')) throw nulError(path);
      continue;
    }
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      node.forEach((child, i) => stack.push([child, `${path}.${i}`]));
      continue;
    }
    for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
      const at = `${path}.${key}`;
      if (key.includes('\u0000')) throw nulError(path);
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

function nulError(path: string): ArbiterError {
  return new ArbiterError('validation_failed', `request body is invalid: \`${path}\`: text must not contain U+0000`, [
    { code: 'nul_character', message: 'text must not contain U+0000', path },
  ]);
}

/** Refuses a URL whose path or query carries U+0000 (`%00`): no stored text or search may hold it. */
export function checkUrl(url: string): void {
  if (/%00/.test(url)) {
    const where = url.indexOf('?') >= 0 && url.indexOf('%00') > url.indexOf('?') ? 'query' : 'params';
    throw new ArbiterError('validation_failed', `request ${where} must not contain U+0000 (\`%00\`)`, [
      { code: 'nul_character', message: 'text must not contain U+0000', path: where },
    ]);
  }
}

/** Replaces fastify's JSON parser with {@link parseJsonBody} (same body limit and content-length checks, done by fastify before it). */
export function installJsonBodyParser(app: FastifyInstance, maxDepth: number = MAX_JSON_DEPTH): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string, maxDepth));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addHook('onRequest', async (request) => checkUrl(request.url));
}
