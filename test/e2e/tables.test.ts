/**
 * End-to-end: decision-table nodes in flows through the public HTTP API. Save and
 * publish checks (bad cell, unknown output, unresolved route → 400; a failing saved test expecting
 * an output object → 422), stored runs (single and batch) and ad hoc runs (`/flow/test`) with the
 * matched rules in `path` and `nodes`, a `unique` table with two matching rules → HTTP 200 with the
 * engine error `table_not_unique`, and the export → import and `rules pull` → `rules push` round
 * trips keeping definitions byte for byte.
 */

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(root, 'libs/cli/dist/main.js');

let stack: Stack;
const unique = (label: string) => `${label} ${randomBytes(4).toString('hex')}`;

async function ok(status: number, method: string, url: string, body?: unknown, key = stack.adminKey): Promise<any> {
  const res = await call(stack, method, url, { key, ...(body !== undefined ? { body } : {}) });
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

/** The example: tier and discount by age and country, routed on the tier. */
const TIERS = {
  start: 'tier',
  nodes: {
    tier: {
      type: 'table',
      hitPolicy: 'first',
      inputs: [
        { name: 'age', path: 'applicant.age' },
        { name: 'country', path: 'applicant.address.country' },
      ],
      outputs: [{ name: 'tier' }, { name: 'discount', default: 0 }],
      rules: [
        { when: ['>= 18', 'is in ["NL", "BE"]'], then: { tier: 'gold', discount: 10 } },
        { when: ['>= 18', '-'], then: { tier: 'silver', discount: 5 } },
        { when: ['-', '-'], then: { tier: 'basic' } },
      ],
    },
  },
};
const NL_ADULT = { applicant: { age: 30, address: { country: 'nl' } } };
const MINOR = { applicant: { age: 12, address: { country: 'NL' } } };

/** Two overlapping rules under `unique`: a run that matches both is an engine error. */
const OVERLAP = {
  start: 'u',
  nodes: {
    u: {
      type: 'table',
      hitPolicy: 'unique',
      inputs: [{ name: 'amount', path: 'order.amount' }],
      outputs: [{ name: 'band' }],
      rules: [
        { when: ['>= 100'], then: { band: 'high' } },
        { when: ['>= 50'], then: { band: 'medium' } },
        { when: ['< 50'], then: { band: 'low' } },
      ],
      routeOn: 'band',
      routes: { low: 'fast' },
      default: 'review',
    },
    fast: { type: 'return', value: true },
    review: { type: 'custom', outcome: 'manual review' },
  },
};

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'gateway'] });
});

afterAll(async () => {
  await stack?.stop();
});

describe('saving and publishing flows with table nodes', () => {
  it('refuses a cell that does not parse, naming rule, input, position and path (400, nothing saved)', async () => {
    const bad = structuredClone(TIERS);
    bad.nodes.tier.rules[0].when[1] = 'is in "NL"';
    const res = await call(stack, 'POST', '/flow', { key: stack.adminKey, body: { name: unique('bad'), definition: bad } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual([
      {
        code: 'invalid_cell',
        message: 'table `tier`: rule 1, input `country`: line 1, column 7: `is in` needs a list or a path, not a string',
        path: 'nodes.tier.rules.0.when.1',
      },
    ]);
  });

  it('refuses an unknown output and an unresolved route', async () => {
    const unknownOutput = structuredClone(TIERS) as any;
    unknownOutput.nodes.tier.rules[2].then = { tier: 'basic', rebate: 1 };
    const a = await call(stack, 'POST', '/flow', { key: stack.adminKey, body: { name: unique('bad'), definition: unknownOutput } });
    expect([a.status, a.body.errors.map((e: any) => [e.code, e.path])]).toEqual([
      400,
      [['unknown_output', 'nodes.tier.rules.2.then.rebate']],
    ]);

    const unresolved = structuredClone(OVERLAP) as any;
    unresolved.nodes.u.routes = { low: 'nowhere', medium: 'fast' };
    const b = await call(stack, 'POST', '/flow', { key: stack.adminKey, body: { name: unique('bad'), definition: unresolved } });
    expect([b.status, b.body.errors.map((e: any) => [e.code, e.path])]).toEqual([400, [['unknown_node', 'nodes.u.routes.low']]]);
  });

  it('publishes with saved tests that expect output objects, and refuses a wrong one (422)', async () => {
    const draft = await ok(201, 'POST', '/flow', {
      name: unique('tiers'),
      definition: TIERS,
      tests: [
        { name: 'adult in NL', data: NL_ADULT, expect: { discount: 10, tier: 'gold' } },
        { name: 'minor', data: MINOR, expect: { tier: 'basic', discount: 0 } },
      ],
    });
    const wrong = await call(stack, 'PUT', `/flow/${draft.flowId}`, {
      key: stack.adminKey,
      body: { status: 'published', tests: [{ name: 'adult in NL', data: NL_ADULT, expect: { tier: 'silver', discount: 5 } }] },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors).toEqual([
      {
        code: 'test_failed',
        message: 'test `adult in NL`: expected `{"tier":"silver","discount":5}`, got `{"tier":"gold","discount":10}`',
        path: 'tests.0',
      },
    ]);
    const version = await ok(201, 'PUT', `/flow/${draft.flowId}`, {
      status: 'published',
      tests: [{ name: 'adult in NL', data: NL_ADULT, expect: { discount: 10, tier: 'gold' } }],
    });
    expect(version.definition).toEqual(TIERS);
  });
});

describe('running flows with table nodes', () => {
  let tiers: string;
  let overlap: string;
  beforeAll(async () => {
    const a = await ok(201, 'POST', '/flow', { name: unique('tiers'), definition: TIERS });
    tiers = (await ok(201, 'PUT', `/flow/${a.flowId}`, { status: 'published' })).baseId;
    // Overlapping rules under `unique` cannot be published (the tables' static checks); the draft runs by its base id.
    const b = await ok(201, 'POST', '/flow', { name: unique('overlap'), definition: OVERLAP });
    const refused = await ok(422, 'PUT', `/flow/${b.flowId}`, { status: 'published' });
    expect(refused).toMatchObject({
      code: 'cannot_publish',
      errors: [
        {
          code: 'table_overlap',
          message: 'table `u`: rules 1 and 2 both match one input, which the `unique` hit policy forbids, e.g. {"order":{"amount":100}}',
          path: 'nodes.u.rules.1',
        },
      ],
    });
    overlap = b.baseId;
  });

  it('a stored flow ending at a table answers its output object, the matched rules and each evaluated cell', async () => {
    const out = await ok(200, 'POST', `/run/flow/${tiers}`, NL_ADULT);
    expect(out.result).toEqual({ tier: 'gold', discount: 10 });
    expect(out.path).toEqual([{ nodeId: 'tier', type: 'table', result: { tier: 'gold', discount: 10 }, matched: [0] }]);
    expect(out.nodes).toEqual([
      {
        nodeId: 'tier',
        type: 'table',
        result: { tier: 'gold', discount: 10 },
        matched: [0],
        cells: [
          { rule: 0, input: 0, result: true },
          { rule: 0, input: 1, result: true },
        ],
        trace: [
          'table "tier" [first]: 3 rules',
          '  rule 1',
          '    if $.applicant.age = 30: is greater than or equal to 18 -> true',
          '    and $.applicant.address.country = "nl": is in ["NL","BE"] -> true',
          '    => match: {"tier":"gold","discount":10}',
          'result: {"tier":"gold","discount":10}',
        ],
        error: null,
      },
    ]);
    expect((await ok(200, 'POST', `/run/flow/${tiers}`, MINOR)).result).toEqual({ tier: 'basic', discount: 0 });
  });

  it('routes on an output value', async () => {
    expect((await ok(200, 'POST', `/run/flow/${overlap}`, { order: { amount: 10 } })).result).toBe(true);
  });

  it('a unique table with two matching rules is the engine error table_not_unique: HTTP 200, never a 500', async () => {
    const out = await ok(200, 'POST', `/run/flow/${overlap}`, { order: { amount: 150 } });
    expect(out).toMatchObject({
      result: false,
      errorCode: 'table_not_unique',
      error: 'node `u`: table `u`: rules 1 and 2 match, but the hit policy `unique` allows one',
    });
    expect(out.nodes[0]).toMatchObject({ type: 'table', matched: [0, 1], errorCode: 'table_not_unique' });
    const adHoc = await ok(200, 'POST', '/flow/test', { definition: OVERLAP, data: { order: { amount: 150 } } });
    expect(adHoc.errorCode).toBe('table_not_unique');
  });

  it('missing input data is the language error missing_property (HTTP 200)', async () => {
    const out = await ok(200, 'POST', `/run/flow/${tiers}`, { applicant: { address: { country: 'NL' } } });
    expect(out).toMatchObject({ result: false, errorCode: 'missing_property', error: 'node `tier`: Missing property: applicant.age' });
  });

  it('batch runs answer each item as the single run does', async () => {
    const out = await ok(200, 'POST', `/run/flow/${tiers}/batch`, {
      items: [NL_ADULT, MINOR, { applicant: { age: 40, address: { country: 'DE' } } }],
    });
    expect(out.results.map((r: any) => r.result)).toEqual([
      { tier: 'gold', discount: 10 },
      { tier: 'basic', discount: 0 },
      { tier: 'silver', discount: 5 },
    ]);
  });

  it('/flow/test runs an ad hoc definition, and refuses a bad cell with 400', async () => {
    const out = await ok(200, 'POST', '/flow/test', { definition: TIERS, data: NL_ADULT });
    expect(out.result).toEqual({ tier: 'gold', discount: 10 });
    const bad = structuredClone(TIERS);
    bad.nodes.tier.rules[1].when[0] = '>=';
    const res = await call(stack, 'POST', '/flow/test', { key: stack.adminKey, body: { definition: bad, data: NL_ADULT } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ code: 'invalid_cell', path: 'nodes.tier.rules.1.when.0' });
    expect(res.body.errors[0].message).toContain('rule 2, input `age`: line 1, column 3: `>=` needs a value or a path after it');
  });
});

describe('export → import and rules pull → push', () => {
  it('keep table definitions exactly, and the imported flow runs the same', async () => {
    const draft = await ok(201, 'POST', '/flow', { name: unique('roundtrip'), definition: TIERS });
    const version = await ok(201, 'PUT', `/flow/${draft.flowId}`, { status: 'published' });
    const exportOf = async (key: string) =>
      JSON.parse(await (await fetch(`${stack.baseUrl}/export`, { headers: { 'x-api-key': key } })).text());

    const orgB = stack.admin(['create-org', `tables-${randomBytes(3).toString('hex')}`, '--admin', 'bea']);
    expect(orgB.status, orgB.stderr).toBe(0);
    const keyB = /\n\s+(\S+)\s*$/.exec(orgB.stdout)![1]!;
    const bundle = await exportOf(stack.adminKey);
    const done = await ok(200, 'POST', '/import', bundle, keyB);
    const item = done.items.find((i: any) => i.type === 'flow' && i.sourceId === version.baseId);
    const imported = (await exportOf(keyB)).flows.find((f: any) => f.baseId === item.targetId);
    expect(imported.records.map((r: any) => r.definition)).toEqual([TIERS]);
    expect((await ok(200, 'POST', `/run/flow/${item.targetId}`, NL_ADULT, keyB)).result).toEqual({ tier: 'gold', discount: 10 });

    const dir = mkdtempSync(path.join(tmpdir(), 'rules-tables-'));
    try {
      const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
      const pulled = cli(['pull', '--url', stack.baseUrl, '--key', keyB, '--dir', dir]);
      expect(pulled.status, pulled.stderr).toBe(0);
      const flowDir = readdirSync(path.join(dir, 'flows')).find((d) => d.startsWith('roundtrip'))!;
      const file = JSON.parse(readFileSync(path.join(dir, 'flows', flowDir, 'flow.json'), 'utf8'));
      expect(file.records.map((r: any) => r.definition)).toEqual([TIERS]);
      const orgC = stack.admin(['create-org', `tables-${randomBytes(3).toString('hex')}`, '--admin', 'cy']);
      const keyC = /\n\s+(\S+)\s*$/.exec(orgC.stdout)![1]!;
      const pushed = cli(['push', '--url', stack.baseUrl, '--key', keyC, '--dir', dir]);
      expect(pushed.status, pushed.stderr).toBe(0);
      const pushedFlow = (await exportOf(keyC)).flows.find((f: any) => f.records.some((r: any) => r.name.startsWith('roundtrip')));
      expect(pushedFlow.records.map((r: any) => r.definition)).toEqual([TIERS]);
      expect((await ok(200, 'POST', `/run/flow/${pushedFlow.baseId}`, MINOR, keyC)).result).toEqual({ tier: 'basic', discount: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("rules test on a pulled flow.json runs the draft's saved tests with the coverage the server reports", async () => {
    const name = unique('covered');
    const tests = [
      { name: 'dutch adult', data: NL_ADULT, expect: { tier: 'gold', discount: 10 } },
      { name: 'minor', data: MINOR, expect: { tier: 'basic', discount: 0 } },
    ];
    const draft = await ok(201, 'POST', '/flow', { name, definition: TIERS, tests });
    const server = await ok(200, 'POST', `/flow/${draft.flowId}/tests/run`);
    expect(server.coverage.summary).toMatchObject({ rows: { total: 3, covered: 2 } });

    const dir = mkdtempSync(path.join(tmpdir(), 'rules-flow-tests-'));
    try {
      const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
      const pulled = cli(['pull', '--url', stack.baseUrl, '--key', stack.adminKey, '--dir', dir]);
      expect(pulled.status, pulled.stderr).toBe(0);
      const flowDir = readdirSync(path.join(dir, 'flows')).find((d) => d.startsWith(name.toLowerCase().replace(/[^a-z0-9]+/g, '-')))!;
      const flowFile = path.join(dir, 'flows', flowDir, 'flow.json');
      const run = cli(['test', flowFile, '--coverage', '--json']);
      expect(run.status, run.stderr).toBe(0);
      const doc = JSON.parse(run.stdout);
      expect([doc.passed, doc.failed]).toEqual([server.passed, server.failed]);
      expect(doc.coverage).toEqual(server.coverage);
      const below = cli(['test', flowFile, '--coverage', '--min', '90']);
      expect(below.status).toBe(1);
      expect(below.stdout).toContain('  node tier, row 2: age >= 18 (never matched)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
