/**
 * One answer in every door: the same rule and data through the engine in this process,
 * `POST /run`, `POST /run/batch`, MCP `evaluate_rules` (the direct path and the MCP SDK's), a
 * stored run (`POST /run/policy/{baseId}`), the SDK's local runtime synced from it, and the `rules`
 * CLI. Covers what a fuzzer found the doors disagreeing on or all getting wrong: a rule referenced
 * only inside an any/all that never ran it (every rule is evaluated), how deeply conditions may
 * nest (one static limit of 256 levels, not the stack of the thread that runs them), and unpaired
 * UTF-16 surrogates (refused as data everywhere; half of a character never matches).
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Arbiter, isArbiterError, type LocalRuntime } from '@arbiter/sdk';
import { evaluate } from '@arbiter/rule-lang';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(root, 'libs/cli/dist/main.js');

let stack: Stack;
let arbiter: Arbiter;
let dir: string;

beforeAll(async () => {
  stack = await startStack({ services: ['registry', 'execution', 'mcp', 'gateway'] });
  arbiter = new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey });
  dir = mkdtempSync(path.join(tmpdir(), 'language-doors-'));
}, 180_000);
afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await stack?.stop();
});

/** What a door answered: the evaluation (without the trace), or how it refused the request. */
type Answer = { result: boolean; outcomes: Record<string, boolean>; error: string | null } | { refused: string };

const evaluation = (r: { result: boolean; outcomes?: Record<string, boolean>; error?: string | null }): Answer => ({
  result: r.result,
  outcomes: r.outcomes ?? {},
  error: r.error ?? null,
});

/** A refusal as a problem document names it: status and the first error's code (else the problem's). */
const problem = (status: number, body: { code?: string; errors?: Array<{ code: string }> }): Answer => ({
  refused: `${status} ${body.errors?.[0]?.code ?? body.code}`,
});

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'x-api-key': '' };

async function mcp(rule: string, data: unknown, sdkPath: boolean): Promise<Answer> {
  // A content type with parameters is served by the MCP SDK, the plain one by the direct path (services/mcp fast-path.ts).
  const contentType = sdkPath ? 'application/json; charset=utf-8' : 'application/json';
  const res = await fetch(`${stack.baseUrl}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'x-api-key': stack.adminKey, 'content-type': contentType },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'evaluate_rules', arguments: { rule, data } } }),
  });
  const body = (await res.json()) as {
    result?: { structuredContent?: { result: boolean; outcomes: Record<string, boolean>; error: string | null } };
    code?: string;
    errors?: Array<{ code: string }>;
  };
  if (res.status !== 200) return problem(res.status, body);
  const content = body.result?.structuredContent;
  if (content === undefined) throw new Error(`no tool result: ${JSON.stringify(body)}`);
  return evaluation(content);
}

function cli(rule: string, data: unknown, name: string): Answer {
  const ruleFile = path.join(dir, `${name}.rules`);
  const dataFile = path.join(dir, `${name}.json`);
  writeFileSync(ruleFile, rule);
  // JSON.stringify writes a lone surrogate as its `\udxxx` escape: the file is the JSON a client would send.
  writeFileSync(dataFile, JSON.stringify(data));
  const out = spawnSync(process.execPath, [CLI, 'eval', '--rule', ruleFile, '--data', dataFile, '--no-trace'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (out.status === 2) return { refused: `exit 2: ${out.stderr.trim()}` };
  return evaluation(JSON.parse(out.stdout) as { result: boolean; outcomes: Record<string, boolean>; error?: string });
}

function local(runtime: LocalRuntime, baseId: string, data: unknown): Answer {
  try {
    return evaluation(runtime.run(baseId, data as Record<string, unknown>, { trace: false }));
  } catch (err) {
    if (!isArbiterError(err)) throw err;
    return problem(err.status, { code: err.code, errors: err.errors });
  }
}

/** Every door's answer for `rule` and each data (a stored policy of `rule` serves the stored run and the local runtime). */
async function doors(rule: string, datas: unknown[], name: string): Promise<Array<Record<string, Answer>>> {
  const { baseId } = await arbiter.policies.create({ name: `doors ${name}`, rule });
  const runtime = await arbiter.local({ bases: [baseId] });
  try {
    const answers: Array<Record<string, Answer>> = [];
    for (const [i, data] of datas.entries()) {
      const run = await call(stack, 'POST', '/run', { key: stack.adminKey, body: { rule, data, trace: false } });
      const batch = await call(stack, 'POST', '/run/batch', { key: stack.adminKey, body: { rule, items: [data] } });
      const stored = await call(stack, 'POST', `/run/policy/${baseId}?trace=false`, { key: stack.adminKey, body: data });
      answers.push({
        engine: evaluation(evaluate(rule, data)),
        run: run.status === 200 ? evaluation(run.body) : problem(run.status, run.body),
        batch: batch.status === 200 ? evaluation(batch.body.results[0]) : problem(batch.status, batch.body),
        mcpDirect: await mcp(rule, data, false),
        mcpSdk: await mcp(rule, data, true),
        stored: stored.status === 200 ? evaluation(stored.body) : problem(stored.status, stored.body),
        local: local(runtime, baseId, data),
        cli: cli(rule, data, `${name}-${i}`),
      });
    }
    return answers;
  } finally {
    await runtime.close();
  }
}

/** The same answer in every door. */
const everywhere = (answer: Answer) => ({
  engine: answer,
  run: answer,
  batch: answer,
  mcpDirect: answer,
  mcpSdk: answer,
  stored: answer,
  local: answer,
  cli: answer,
});

describe('a rule referenced only inside an any/all', () => {
  const RULE =
    'A **order** is ok if any of the __items__ of the **order** where (its __price__ > 1 and $chk).\nchk: if order.id >= 1 -> checked.';

  it('is evaluated in every door when the array is empty: its real outcome, its missing data an error', async () => {
    const [withId, withoutId, notArray] = await doors(
      RULE,
      [{ order: { items: [], id: 5 } }, { order: { items: [] } }, { order: { items: 'none', id: 0 } }],
      'quantifier',
    );
    expect(withId).toEqual(everywhere({ result: false, outcomes: { ok: false, checked: true }, error: null }));
    expect(withoutId).toEqual(everywhere({ result: false, outcomes: {}, error: 'Missing property: order.id' }));
    expect(notArray).toEqual(everywhere({ result: false, outcomes: { ok: false, checked: false }, error: null }));
  }, 120_000);
});

describe('the nesting limit', () => {
  const groups = (n: number): string => `if ${'('.repeat(n)}x.a > 1${')'.repeat(n)} -> ok.`;
  const tooDeep = { result: false, outcomes: {}, error: 'Parse error: line 1, column 260: conditions nested more than 256 levels deep' };

  it('accepts 256 levels in every door', async () => {
    const [answers] = await doors(groups(256), [{ x: { a: 2 } }], 'nest-256');
    expect(answers).toEqual(everywhere({ result: true, outcomes: { ok: true }, error: null }));
  }, 120_000);

  it('refuses 257 and 3,000 levels with the same parse error in every door, whatever thread runs it', async () => {
    const [at257] = await doors(groups(257), [{ x: { a: 2 } }], 'nest-257');
    expect(at257).toEqual(everywhere(tooDeep));
    const [at3000] = await doors(groups(3000), [{ x: { a: 2 } }], 'nest-3000');
    expect(at3000).toEqual(everywhere(tooDeep));
  }, 120_000);
});

describe('unpaired UTF-16 surrogates', () => {
  const CONTAINS = 'A **x** is ok if the __s__ of the **x** contains the __t__ of the **x**.';

  it('are refused as data in every door that takes a request, and half of a character never matches', async () => {
    const [half, whole] = await doors(CONTAINS, [{ x: { s: '😀', t: '\ude00' } }, { x: { s: 'a 😀 b', t: '😀' } }], 'surrogate');
    const refusedByService = { refused: '400 unpaired_surrogate' };
    expect(half).toEqual({
      // The library itself compares by code points: a lone half is a code point of its own, no half of a pair.
      engine: { result: false, outcomes: { ok: false }, error: null },
      run: refusedByService,
      batch: refusedByService,
      mcpDirect: refusedByService,
      mcpSdk: refusedByService,
      stored: refusedByService,
      local: refusedByService,
      cli: {
        refused:
          'exit 2: rules eval: ' +
          path.join(dir, 'surrogate-0.json') +
          ': `data` must not contain an unpaired UTF-16 surrogate (`\\ud800`–`\\udfff` alone), found at `data.x.t`',
      },
    });
    expect(whole).toEqual(everywhere({ result: true, outcomes: { ok: true }, error: null }));
  }, 120_000);

  it('in rule text are refused by the service and a parse error in the engine and the CLI', async () => {
    const rule = 'A **x** is ok if x.s contains "\ude00".';
    const data = { x: { s: '😀' } };
    const parseError = {
      result: false,
      outcomes: {},
      error: 'Parse error: line 1, column 32: unpaired UTF-16 surrogate `\\ude00`: the text must be well-formed Unicode',
    };
    expect(evaluation(evaluate(rule, data))).toEqual(parseError);
    const run = await call(stack, 'POST', '/run', { key: stack.adminKey, body: { rule, data } });
    expect(problem(run.status, run.body)).toEqual({ refused: '400 unpaired_surrogate' });
    const created = await call(stack, 'POST', '/policies', { key: stack.adminKey, body: { name: 'half', rule } });
    expect(problem(created.status, created.body)).toEqual({ refused: '400 unpaired_surrogate' });
    expect(await mcp(rule, data, false)).toEqual({ refused: '400 unpaired_surrogate' });
    // A rule file is UTF-8 text, where a lone surrogate cannot be written: the CLI reads it through --jsonl.
    const out = spawnSync(process.execPath, [CLI, 'eval', '--jsonl', '--no-trace'], {
      input: JSON.stringify({ rule, data }) + '\n',
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(out.status).toBe(0);
    expect(evaluation(JSON.parse(out.stdout) as { result: boolean; outcomes: Record<string, boolean>; error: string })).toEqual(parseError);
  }, 120_000);
});

describe('evaluate_rules and /run', () => {
  it('give the same trace, an array of strings, on both MCP paths', async () => {
    const rule =
      'A **order** is ok if any of the __items__ of the **order** where (its __price__ > 1 and $chk).\nchk: if order.id >= 1 -> checked.';
    const data = { order: { items: [{ price: 2 }], id: 5 } };
    const run = await call(stack, 'POST', '/run', { key: stack.adminKey, body: { rule, data } });
    expect(run.status).toBe(200);
    expect(run.body.trace.length).toBeGreaterThan(3);
    for (const contentType of ['application/json', 'application/json; charset=utf-8']) {
      const res = await fetch(`${stack.baseUrl}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, 'x-api-key': stack.adminKey, 'content-type': contentType },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'evaluate_rules', arguments: { rule, data } },
        }),
      });
      const body = (await res.json()) as { result: { structuredContent: { trace: unknown } } };
      expect(body.result.structuredContent.trace, contentType).toEqual(run.body.trace);
    }
  }, 60_000);
});
