/**
 * Local evaluation answers byte for byte what the service answers, with reasons too (`?reasons=true`
 * / `{reasons: true}`): the language corpus
 * (every case of libs/rule-lang/test/cases with data) and the policy and flow fixtures below, run
 * in an SDK runtime and through `POST /run/policy/{baseId}` / `POST /run/flow/{baseId}`, give the
 * same JSON text. Requests that the service refuses (data that is not an object, nested too deep)
 * are refused locally with the same status and code.
 */

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Arbiter, isArbiterError, type LocalRuntime } from '@arbiter/sdk';
import type { FlowDefinition } from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const casesDir = path.join(root, 'libs/rule-lang/test/cases');

let stack: Stack;
let arbiter: Arbiter;

beforeAll(async () => {
  stack = await startStack({ services: ['registry', 'execution', 'audit', 'gateway'] });
  arbiter = new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey });
});
afterAll(async () => {
  await stack?.stop();
});

/**
 * The service's answer as text (status and body), exactly as it was sent. A 503 or 429 (the
 * execution queue full under this file's parallel load) is no answer to compare: asked again.
 */
async function remote(
  kind: 'policy' | 'flow',
  baseId: string,
  data: unknown,
  trace = true,
  reasons = false,
): Promise<{ status: number; text: string }> {
  const query = [...(trace ? [] : ['trace=false']), ...(reasons ? ['reasons=true'] : [])].join('&');
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${stack.baseUrl}/run/${kind}/${baseId}${query === '' ? '' : `?${query}`}`, {
      method: 'POST',
      headers: { 'x-api-key': stack.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify(data),
    });
    const answer = { status: res.status, text: await res.text() };
    if ((answer.status !== 503 && answer.status !== 429) || attempt >= 5) return answer;
    await new Promise((r) => setTimeout(r, 200 * (attempt + 1))); // back-off before asking again
  }
}

/** The local answer as the service would send it: its JSON text, or the status and code it would refuse with. */
async function local(runtime: LocalRuntime, kind: 'policy' | 'flow', baseId: string, data: unknown, trace = true, reasons = false) {
  try {
    const opts = reasons ? { trace, reasons } : { trace };
    const answer =
      kind === 'policy'
        ? runtime.run(baseId, data as Record<string, unknown>, opts)
        : await runtime.runFlow(baseId, data as Record<string, unknown>, opts);
    return { status: 200, text: JSON.stringify(answer) };
  } catch (err) {
    if (!isArbiterError(err)) throw err;
    return { status: err.status, code: err.code };
  }
}

/**
 * Refusals that guard the service's transport, not the evaluation (a `__proto__` key, U+0000 in
 * text, data nested deeper than MAX_DATA_DEPTH): a local run takes such data as the object it is
 * (docs/sdk.md says so).
 */
const EDGE_ONLY = new Set(['forbidden_key', 'nul_character']);
const transportOnly = (problem: { detail: string; errors?: Array<{ code: string }> }) =>
  problem.errors?.some((e) => EDGE_ONLY.has(e.code)) === true || /^data is nested deeper than \d+ levels$/.test(problem.detail);

/** Compares one run: the same 200 body, or the same refusal (status and code). Returns whether the gateway's edge alone refused it. */
async function expectParity(
  runtime: LocalRuntime,
  kind: 'policy' | 'flow',
  baseId: string,
  data: unknown,
  what: string,
  reasons = false,
): Promise<boolean> {
  const there = await remote(kind, baseId, data, true, reasons);
  const here = await local(runtime, kind, baseId, data, true, reasons);
  // Every policy answer carries them (flows: each policy node's).
  if (reasons && kind === 'policy' && there.status === 200) expect(there.text, what).toContain('"reasons":');
  if (there.status === 200) {
    expect(here, what).toEqual({ status: 200, text: there.text });
    return false;
  }
  const problem = JSON.parse(there.text) as { code: string; detail: string; errors?: Array<{ code: string }> };
  if (transportOnly(problem)) {
    expect(here.status, what).toBe(200);
    return true;
  }
  expect(here, what).toEqual({ status: there.status, code: problem.code });
  return false;
}

/** Runs `work` over `items`, `limit` at a time. */
async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

interface Case {
  note: string;
  rule: string;
  data?: unknown;
}

/** A flow whose only decision is the policy base `baseId`: true when it holds, false otherwise. */
function oneNodeFlow(baseId: string) {
  return {
    start: 'n1',
    nodes: {
      n1: { type: 'policy' as const, baseId, onTrue: 'yes', onFalse: 'no' },
      yes: { type: 'return' as const, value: true },
      no: { type: 'return' as const, value: false },
    },
  };
}

describe('the language corpus', () => {
  it('every case with data answers the same locally and through POST /run/policy/{baseId}', async () => {
    const cases = readdirSync(casesDir)
      .filter((f) => f.endsWith('.json'))
      .flatMap((f) => (JSON.parse(readFileSync(path.join(casesDir, f), 'utf8')) as Case[]).map((c) => ({ ...c, file: f })))
      .filter((c) => c.data !== undefined);
    expect(cases.length).toBeGreaterThan(700);
    const bases = new Map<string, string>();
    await inParallel([...new Set(cases.map((c) => c.rule))], 8, async (rule) => {
      bases.set(rule, (await arbiter.policies.create({ name: `corpus ${bases.size}`, rule })).baseId);
    });
    const runtime = await arbiter.local({ all: true });
    try {
      expect(runtime.stats().policies).toBeGreaterThanOrEqual(bases.size);
      const edgeOnly: string[] = [];
      await inParallel(cases, 8, async (c) => {
        if (await expectParity(runtime, 'policy', bases.get(c.rule)!, c.data, `${c.file}: ${c.note}`)) edgeOnly.push(c.note);
      });
      // The corpus's own `__proto__` cases, which only HTTP refuses.
      expect(edgeOnly.length).toBeLessThan(5);
      // With reasons (`?reasons=true` / `{reasons: true}`): the same reasons, byte for byte.
      const edgeOnlyWithReasons: string[] = [];
      await inParallel(cases, 8, async (c) => {
        if (await expectParity(runtime, 'policy', bases.get(c.rule)!, c.data, `${c.file}: ${c.note} (reasons)`, true))
          edgeOnlyWithReasons.push(c.note);
      });
      expect(edgeOnlyWithReasons.sort()).toEqual([...edgeOnly].sort());
    } finally {
      await runtime.close();
    }
  }, 300_000);
});

const ADULT = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';
const MANY = 'An **order** is fine if all of the __items__ of the **order** satisfies (its __price__ is at least 0).';
const SCHEMA_2020 = {
  type: 'object',
  required: ['applicant'],
  properties: {
    applicant: { type: 'object', required: ['age'], properties: { age: { type: 'integer', minimum: 0 }, email: { format: 'email' } } },
  },
};
const SCHEMA_07 = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  additionalProperties: false,
  properties: { applicant: { type: 'object' } },
};
const LICENCE = `A **applicant** gets a licence
  if the **applicant** meets the age requirement
  and the **applicant** passes the eyesight test
  and the __country__ of the **address** of the **applicant** is in ["NL", "BE", "DE", "FR"].

A **applicant** meets the age requirement
  if the __date of birth__ of the **applicant** is older than 17 years.

A **applicant** passes the eyesight test
  if the __vision score__ of the **applicant** is at least 0.5
  or the __corrected vision__ of the **applicant** is at least 0.6.
`;
const deep = (levels: number): Record<string, unknown> => {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) v = { a: v };
  return v;
};
const items = (n: number, price = 1) => ({
  order: { items: Array.from({ length: n }, (_, i) => ({ price: i % 7 === 0 ? -price : price })) },
});

describe('policy and flow fixtures', () => {
  let runtime: LocalRuntime;
  const policies: Record<string, string> = {};
  const flows: Record<string, string> = {};
  const data: Record<string, unknown[]> = {
    adult: [
      { applicant: { age: 20 } },
      { applicant: { age: 3 } },
      { applicant: {} },
      {},
      { applicant: { age: '19' } },
      deep(64),
      deep(65),
      [],
      'x',
    ],
    schema2020: [
      { applicant: { age: 20, email: 'a@b.example' } },
      { applicant: { age: -1 } },
      { applicant: { age: 20, email: 'nope' } },
      {},
    ],
    schema07: [{ applicant: { age: 20 } }, { applicant: { age: 20 }, extra: 1 }],
    parseError: [{ applicant: { age: 20 } }],
    licence: [
      { applicant: { dateOfBirth: '1990-04-12', visionScore: 0.7, address: { country: 'NL' } } },
      { applicant: { dateOfBirth: '2015-01-01', visionScore: 0.2, correctedVision: 0.9, address: { country: 'US' } } },
      { applicant: { dateOfBirth: '1990-04-12' } },
    ],
    /** 3,000 traced comparisons: the trace is cut at MAX_TRACE_BYTES. */
    bigTrace: [items(3000)],
    /** Past the traced step budget (10,000): `budget_exceeded`. */
    budget: [items(12_000)],
    versioned: [{ applicant: { age: 20 } }, { applicant: { age: 19 } }],
  };

  beforeAll(async () => {
    const create = async (name: string, rule: string, schema: Record<string, unknown> | null = null) =>
      (policies[name] = (await arbiter.policies.create({ name, rule, schema })).baseId);
    await create('adult', ADULT);
    await create('schema2020', ADULT, SCHEMA_2020);
    await create('schema07', ADULT, SCHEMA_07);
    await create('parseError', 'An **applicant** is adult if the __age__ of the **applicant** is at lest 18.');
    await create('licence', LICENCE);
    await create('bigTrace', MANY);
    await create('budget', MANY);
    // version 1 at 18, version 2 at 21, and a draft at 30 that does not run (the latest version does)
    const v1 = await arbiter.policies.update((await arbiter.policies.get(await create('versioned', ADULT))).policyId, {
      status: 'published',
    });
    if (v1.outcome !== 'published') throw new Error('expected a version');
    const d2 = await arbiter.policies.draft(v1.record.policyId);
    const v2 = await arbiter.policies.update(d2.record.policyId, { status: 'published', rule: ADULT.replace('18', '21') });
    if (v2.outcome !== 'published') throw new Error('expected a version');
    const d3 = await arbiter.policies.draft(v1.record.policyId);
    await arbiter.policies.update(d3.record.policyId, { status: 'draft', rule: ADULT.replace('18', '30') });

    const gone = await arbiter.policies.create({ name: 'deleted later', rule: ADULT });
    const flow = async (name: string, definition: FlowDefinition) =>
      (flows[name] = (await arbiter.flows.create({ name, definition })).baseId);
    const node = (ref: Record<string, unknown>, onTrue: string, onFalse: string) => ({ type: 'policy' as const, ...ref, onTrue, onFalse });
    await flow('chain', {
      start: 'age',
      nodes: {
        age: node({ baseId: policies.adult }, 'pinned', 'young'),
        pinned: node({ baseId: policies.versioned, version: 1 }, 'exact', 'no'),
        exact: node({ policyId: v2.record.policyId }, 'yes', 'review'),
        yes: { type: 'return', value: true },
        no: { type: 'return', value: false },
        young: { type: 'custom', outcome: 'too young' },
        review: { type: 'custom', outcome: 'manual review' },
      },
    });
    await flow('schemaNode', {
      start: 's',
      nodes: {
        s: node({ baseId: policies.schema2020 }, 'yes', 'no'),
        yes: { type: 'return', value: true },
        no: { type: 'return', value: false },
      },
    });
    // a decision table after a policy node: the table routes on its output, or ends the flow with it
    await flow('table', {
      start: 'age',
      nodes: {
        age: node({ baseId: policies.adult }, 'tier', 'young'),
        tier: {
          type: 'table',
          hitPolicy: 'first',
          inputs: [
            { name: 'age', path: 'applicant.age' },
            { name: 'email', path: 'applicant.email' },
          ],
          outputs: [{ name: 'tier' }, { name: 'discount', default: 0 }],
          rules: [
            { when: ['>= 65', '-'], then: { tier: 'senior', discount: 20 } },
            { when: ['>= 18', 'is a valid email'], then: { tier: 'member', discount: 5 } },
            { when: ['-', '-'], then: { tier: 'guest' } },
          ],
          routeOn: 'tier',
          routes: { guest: 'young' },
          default: 'end',
        },
        end: {
          type: 'table',
          hitPolicy: 'collect',
          inputs: [{ name: 'age', path: 'applicant.age' }],
          outputs: [{ name: 'band' }],
          rules: [
            { when: ['>= 18'], then: { band: 'adult' } },
            { when: ['>= 65'], then: { band: 'retired' } },
          ],
        },
        young: { type: 'custom', outcome: 'too young' },
      },
    } as FlowDefinition);
    await flow('deletedNode', {
      start: 'd',
      nodes: { d: node({ baseId: gone.baseId }, 'yes', 'no'), yes: { type: 'return', value: true }, no: { type: 'return', value: false } },
    });
    await arbiter.policies.delete(gone.policyId);
    runtime = await arbiter.local({ bases: [...Object.values(policies), ...Object.values(flows)] });
  });
  afterAll(async () => {
    await runtime?.close();
  });

  it('every policy fixture answers the same locally and through the service, refusals included', async () => {
    const transportRefusals: string[] = [];
    for (const [name, inputs] of Object.entries(data)) {
      for (const [i, input] of inputs.entries()) {
        if (await expectParity(runtime, 'policy', policies[name], input, `${name} #${i}`)) transportRefusals.push(`${name} #${i}`);
        await expectParity(runtime, 'policy', policies[name], input, `${name} #${i} (reasons)`, true);
      }
    }
    // data nested 65 deep: the service refuses it (MAX_DATA_DEPTH), a local run evaluates it
    expect(transportRefusals).toEqual(['adult #6']);
    // the fixtures reach what they are for
    const answer = (name: string, i: number) => runtime.run(policies[name], data[name][i] as Record<string, unknown>);
    expect(answer('schema2020', 1).errorCode).toBe('schema_mismatch');
    expect(answer('parseError', 0).errorCode).toBe('parse_error');
    expect(answer('budget', 0).errorCode).toBe('budget_exceeded');
    expect(answer('bigTrace', 0).trace.some((l) => l.startsWith('… trace cut:'))).toBe(true);
    expect(answer('versioned', 1)).toMatchObject({ result: false, version: 2 });
  });

  it('every flow fixture answers the same locally and through the service', async () => {
    const inputs = [
      { applicant: { age: 20 } },
      { applicant: { age: 19 } },
      { applicant: { age: 3 } },
      { applicant: {} },
      {},
      { applicant: { age: -4 } },
    ];
    for (const [name, baseId] of Object.entries(flows)) {
      for (const [i, input] of inputs.entries()) {
        await expectParity(runtime, 'flow', baseId, input, `${name} #${i}`);
        await expectParity(runtime, 'flow', baseId, input, `${name} #${i} (reasons)`, true);
      }
    }
    expect((await runtime.runFlow(flows.deletedNode, { applicant: { age: 20 } })).errorCode).toBe('policy_not_found');
    expect((await runtime.runFlow(flows.chain, { applicant: { age: 19 } })).result).toBe('manual review');
    expect((await runtime.runFlow(flows.table, { applicant: { age: 70 } })).result).toEqual([{ band: 'adult' }, { band: 'retired' }]);
    expect((await runtime.runFlow(flows.table, { applicant: { age: 30, email: 'nope' } })).result).toBe('too young');
  });

  it('with the trace off, answers keep their shape with empty traces and the rest unchanged', async () => {
    // Without the trace, table nodes leave out their evaluated `cells` as well (libs/flow).
    const traceless = (text: string) => {
      const body = JSON.parse(text) as { trace?: string[]; nodes?: Array<{ trace: string[]; cells?: unknown[] }> };
      if (body.trace !== undefined) body.trace = [];
      for (const n of body.nodes ?? []) {
        n.trace = [];
        if (n.cells !== undefined) n.cells = [];
      }
      return JSON.stringify(body);
    };
    // Budget fixtures are left out: without a trace the larger step budget (EXEC_STEP_BUDGET) applies.
    for (const name of ['adult', 'schema2020', 'parseError', 'licence', 'versioned']) {
      for (const input of data[name].filter((d) => typeof d === 'object' && d !== null && !Array.isArray(d)).slice(0, 4)) {
        const there = await remote('policy', policies[name], input, false);
        if (there.status !== 200) continue;
        // Until the run routes take `?trace=false` they answer with a trace: compare without it.
        expect(JSON.stringify(runtime.run(policies[name], input as Record<string, unknown>, { trace: false })), name).toBe(
          traceless(there.text),
        );
      }
    }
    for (const baseId of Object.values(flows)) {
      const there = await remote('flow', baseId, { applicant: { age: 20 } }, false);
      expect(JSON.stringify(await runtime.runFlow(baseId, { applicant: { age: 20 } }, { trace: false }))).toBe(traceless(there.text));
    }
  });

  it('a base in a staged rollout answers the same version and bytes locally and through the service, per customer and per flow', async () => {
    const created = await arbiter.policies.create({ name: 'parity rollout', rule: ADULT });
    await arbiter.policies.update(created.policyId, { status: 'published' });
    const draft = await arbiter.policies.draft(created.baseId);
    const started = await fetch(`${stack.baseUrl}/policy/${draft.record.policyId}`, {
      method: 'PUT',
      headers: { 'x-api-key': stack.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'published', rule: ADULT.replace('18', '21'), rollout: { percent: 35, by: 'applicant.id' } }),
    });
    expect(started.status).toBe(201);
    const flow = await arbiter.flows.create({
      name: 'parity rollout flow',
      definition: oneNodeFlow(created.baseId),
    });
    const held = await arbiter.local({ bases: [created.baseId, flow.baseId] });
    try {
      const versions = new Set<number>();
      for (let i = 0; i < 120; i++) {
        const data = { applicant: { id: `customer-${i}`, age: 19 + (i % 4) } };
        await expectParity(held, 'policy', created.baseId, data, `customer-${i}`);
        versions.add(held.run(created.baseId, data).version!);
        await expectParity(held, 'flow', flow.baseId, data, `flow customer-${i}`);
      }
      // both versions answered, each customer the same one on both sides
      expect(versions).toEqual(new Set([1, 2]));
    } finally {
      await held.close();
    }
  });

  it('bases that are not held answer 404 as the service does', async () => {
    const unknown = '0190a0b0-0000-7000-8000-00000000dead';
    await expectParity(runtime, 'policy', unknown, {}, 'unknown policy');
    await expectParity(runtime, 'flow', unknown, {}, 'unknown flow');
  });
});

describe('as-of runs', () => {
  const HOUR = 3600_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const RECENT = 'An **applicant** is recent if the __seen__ of the **applicant** is within 1 hour.';
  const adultAt = (age: number) => ADULT.replace('18', String(age));

  async function api(method: string, route: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${stack.baseUrl}${route}`, {
      method,
      headers: { 'x-api-key': stack.adminKey, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  /** Opens the base's draft and publishes it with `patch` (a rule, a schedule): the answer. */
  async function publishNext(baseId: string, patch: Record<string, unknown>) {
    const draft = await arbiter.policies.draft(baseId);
    return api('PUT', `/policy/${draft.record.policyId}`, { status: 'published', ...patch });
  }

  /** One run with instants through the service (its status and text) and locally (its text, or the status and code it throws). */
  async function both(
    runtime: LocalRuntime,
    kind: 'policy' | 'flow',
    baseId: string,
    data: Record<string, unknown>,
    opts: { asOf?: string; now?: string; trace?: boolean },
  ) {
    const query = new URLSearchParams({
      ...(opts.asOf !== undefined ? { asOf: opts.asOf } : {}),
      ...(opts.now !== undefined ? { now: opts.now } : {}),
      ...(opts.trace === false ? { trace: 'false' } : {}),
    });
    const res = await fetch(`${stack.baseUrl}/run/${kind}/${baseId}?${query.toString()}`, {
      method: 'POST',
      headers: { 'x-api-key': stack.adminKey, 'content-type': 'application/json' },
      body: JSON.stringify(data),
    });
    const text = await res.text();
    const there = res.status === 200 ? { status: 200, text } : { status: res.status, code: (JSON.parse(text) as { code: string }).code };
    let here: { status: number; text?: string; code?: string; message?: string };
    try {
      const answer = kind === 'policy' ? runtime.run(baseId, data, opts) : await runtime.runFlow(baseId, data, opts);
      here = { status: 200, text: JSON.stringify(answer) };
    } catch (err) {
      if (!isArbiterError(err)) throw err;
      here = { status: err.status, code: err.code, message: err.message };
    }
    return { there, here };
  }

  it('a base with a scheduled version and a rollback: the local runtime answers what POST /run/policy/{id}?asOf= answers', async () => {
    const created = await arbiter.policies.create({ name: 'parity as-of', rule: RECENT });
    const v1 = await api('PUT', `/policy/${created.policyId}`, { status: 'published' });
    expect(v1.status).toBe(201);
    const t1 = Date.parse(v1.body.publishedAt as string);
    const v2 = await publishNext(created.baseId, { rule: adultAt(21) });
    expect(v2.status).toBe(201);
    const t2 = Date.parse(v2.body.publishedAt as string);
    const v3 = await arbiter.policies.rollback(created.baseId, 1);
    expect(v3).toMatchObject({ version: 3, rule: RECENT });
    const t3 = Date.parse(v3.publishedAt as string);
    const t4 = Date.now() + HOUR;
    expect((await publishNext(created.baseId, { rule: adultAt(30), effectiveFrom: iso(t4) })).status).toBe(201);

    const held = await arbiter.local({ bases: [created.baseId] });
    try {
      const seen = (at: number) => ({ applicant: { age: 25, seen: iso(at + 10 * 60_000) } });
      const cases: Array<[string, { asOf?: string; now?: string; trace?: boolean }, number, Record<string, unknown>]> = [
        ['at the rollback, evaluated at it', { asOf: iso(t3) }, 3, seen(t3)],
        ['the same asOf, a day later by now', { asOf: iso(t3), now: iso(t3 + 24 * HOUR) }, 3, seen(t3)],
        ['just before the scheduled version', { asOf: iso(t4 - 1) }, 3, seen(t4)],
        ['at the scheduled version', { asOf: iso(t4) }, 4, seen(t4)],
        ['a day after it, without the trace', { asOf: iso(t4 + 24 * HOUR), trace: false }, 4, seen(t4)],
        ['now alone', { now: iso(t4) }, 4, seen(t4)],
      ];
      // first a plain run of the base: a later as-of run must not take its fast path
      expect(held.run(created.baseId, seen(Date.now()), { trace: false })).toMatchObject({ version: 3, result: true });
      for (const [what, opts, version, data] of cases) {
        const { there, here } = await both(held, 'policy', created.baseId, data, opts);
        expect(there, what).toMatchObject({ status: 200 });
        expect(here, what).toEqual(there);
        expect(JSON.parse(there.text!), what).toMatchObject({ version });
      }
      expect(JSON.parse((await both(held, 'policy', created.baseId, seen(t3), { asOf: iso(t3) })).here.text!).result).toBe(true);
      expect(
        JSON.parse((await both(held, 'policy', created.baseId, seen(t3), { asOf: iso(t3), now: iso(t3 + 24 * HOUR) })).here.text!).result,
      ).toBe(false);

      // before what the runtime holds (the rollback is the first version it holds): the service answers version 2, locally 404 names version 3
      const back = await both(held, 'policy', created.baseId, seen(t2), { asOf: iso(t2) });
      expect(JSON.parse(back.there.text!)).toMatchObject({ version: 2 });
      expect(back.here).toMatchObject({
        status: 404,
        code: 'not_found',
        message: expect.stringMatching(/its first held, version 3, takes effect at/),
      });
      // before the first version: 404 on both sides
      const tooEarly = await both(held, 'policy', created.baseId, seen(t1), { asOf: iso(t1 - 60_000) });
      expect(tooEarly.there).toEqual({ status: 404, code: 'not_found' });
      expect(tooEarly.here).toMatchObject({ status: 404, code: 'not_found' });
      // malformed instants: 400 on both sides, nothing run
      for (const asOf of ['yesterday', '2026-11-01', '2026-11-01T00:00:00']) {
        const bad = await both(held, 'policy', created.baseId, seen(t3), { asOf });
        expect(bad.there, asOf).toEqual({ status: 400, code: 'validation_failed' });
        expect(bad.here, asOf).toMatchObject({ status: 400, code: 'validation_failed', message: expect.stringContaining('asOf') });
      }
    } finally {
      await held.close();
    }
  });

  it('a flow and the base its node follows pick at the asOf instant; a base in a staged rollout runs its new version as of after it', async () => {
    const policy = await arbiter.policies.create({ name: 'parity as-of node', rule: ADULT });
    expect((await api('PUT', `/policy/${policy.policyId}`, { status: 'published' })).status).toBe(201);
    const t4 = Date.now() + HOUR;
    expect((await publishNext(policy.baseId, { rule: adultAt(30), effectiveFrom: iso(t4) })).status).toBe(201);
    const flow = await arbiter.flows.create({
      name: 'parity as-of flow',
      definition: oneNodeFlow(policy.baseId),
    });
    expect((await api('PUT', `/flow/${flow.flowId}`, { status: 'published' })).status).toBe(201);
    const canary = await arbiter.policies.create({ name: 'parity as-of rollout', rule: ADULT });
    expect((await api('PUT', `/policy/${canary.policyId}`, { status: 'published' })).status).toBe(201);
    expect((await publishNext(canary.baseId, { rule: adultAt(21), rollout: { percent: 35, by: 'applicant.id' } })).status).toBe(201);

    const held = await arbiter.local({ bases: [flow.baseId, canary.baseId] });
    try {
      const data = { applicant: { age: 25 } };
      // the flow has no timeline: it is held from now on, and its node follows the scheduled base
      for (const asOf of [iso(Date.now()), iso(t4)]) {
        const { there, here } = await both(held, 'flow', flow.baseId, data, { asOf });
        expect(there, asOf).toMatchObject({ status: 200 });
        expect(here, asOf).toEqual(there);
      }
      const later = await both(held, 'flow', flow.baseId, data, { asOf: iso(t4) });
      expect(JSON.parse(later.here.text!)).toMatchObject({ result: false, path: [{ nodeId: 'n1', version: 2 }, { nodeId: 'no' }] });
      // a run as of before it was held is the service's to answer
      const before = await both(held, 'flow', flow.baseId, data, { asOf: iso(Date.now() - HOUR) });
      expect(before.here).toMatchObject({
        status: 404,
        code: 'not_found',
        message: expect.stringContaining('no version held for that instant'),
      });

      // the rollout: as of an instant after its start every customer runs the new version, on both sides
      const asOf = iso(Date.now());
      for (let i = 0; i < 20; i++) {
        const customer = { applicant: { id: `customer-${i}`, age: 19 + (i % 4) } };
        const { there, here } = await both(held, 'policy', canary.baseId, customer, { asOf });
        expect(here, `customer-${i}`).toEqual(there);
        expect(JSON.parse(there.text!), `customer-${i}`).toMatchObject({ version: 2 });
      }
    } finally {
      await held.close();
    }
  });
});
