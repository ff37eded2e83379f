/** End-to-end: JSON-RPC batches on `/mcp` count each message in the rate limit, as batch runs count their items. */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;

const RULE = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';
const HEADERS = { accept: 'application/json, text/event-stream' };
const LIMIT = 60;

async function newViewKey(name: string): Promise<string> {
  const res = await call(stack, 'POST', '/apikeys', { key: stack.adminKey, body: { name, scopes: ['view'] } });
  expect(res.status).toBe(201);
  return res.body.key as string;
}

const evaluate = (id: number, age: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'evaluate_rules', arguments: { rule: RULE, data: { driver: { age } } } },
});

function mcp(key: string, body: unknown) {
  return call(stack, 'POST', '/mcp', { body, headers: { ...HEADERS, 'x-mcp-api-key': key } });
}

const remaining = (res: { headers: Headers }) => Number(res.headers.get('x-ratelimit-remaining'));

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'mcp', 'gateway'],
    env: { RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_PERSON_MAX: '100000' },
  });
});

afterAll(async () => {
  await stack?.stop();
});

describe('a JSON-RPC batch on /mcp', () => {
  it('counts each of its messages: five evaluate_rules calls in one batch take five from x-ratelimit-remaining', async () => {
    const key = await newViewKey('batch-count');
    const single = await mcp(key, evaluate(1, 40));
    expect(single.status).toBe(200);
    expect(remaining(single)).toBe(LIMIT - 1);
    const batch = await mcp(
      key,
      [1, 2, 3, 4, 5].map((id) => evaluate(id, id * 5)),
    );
    expect(batch.status).toBe(200);
    const answers = batch.body as Array<{ id: number; result: { structuredContent: { result: boolean } } }>;
    expect(answers.map((a) => [a.id, a.result.structuredContent.result]).sort()).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
      [5, true],
    ]);
    expect(remaining(batch)).toBe(LIMIT - 1 - 5);
  });

  it('is refused whole with 429 when its messages pass the limit (none of them runs)', async () => {
    const key = await newViewKey('batch-limit');
    const first = await mcp(
      key,
      Array.from({ length: 50 }, (_, i) => evaluate(i + 1, 20)),
    );
    expect(first.status).toBe(200);
    expect(remaining(first)).toBe(LIMIT - 50);
    const refused = await mcp(
      key,
      Array.from({ length: 20 }, (_, i) => evaluate(i + 1, 20)),
    );
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body).toMatchObject({ code: 'rate_limited' });
    expect(refused.body.detail).toMatch(/a JSON-RPC batch counts each message/);
    expect(remaining(refused)).toBe(0);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('answers an empty batch with one JSON-RPC Invalid Request error (-32600, HTTP 400), not 202', async () => {
    const key = await newViewKey('batch-empty');
    const res = await mcp(key, []);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: an empty batch (a JSON-RPC batch needs at least one message)' },
      id: null,
    });
  });
});
