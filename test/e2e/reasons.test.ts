/**
 * End-to-end: reasons (docs/LANGUAGE.md §10.4) on every run route. `"reasons": true` in the body
 * of `POST /run` and `POST /run/batch`, `?reasons=true` on the others: each policy answer (each
 * flow's policy node) gains `reasons`, and is otherwise byte for byte the answer without them. Off
 * by default, and a value that is not a boolean is refused.
 */

import { FlowRecord, PolicyRecord, PolicyUpdateReply, RegistrySubject, type FlowDefinition, type Principal } from '@arbiter/contracts';
import { connectBus, createLogger, type Bus } from '@arbiter/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type z } from 'zod';
import { startStack, type Stack } from './harness.js';

let stack: Stack;
let bus: Bus;
const admin: Principal = { orgId: 'acme', userId: 'admin', role: 'admin' };
const RULE = `A **applicant** is eligible if the __age__ of the **applicant** is at least 18 and the **applicant** lives in the EU.
A **applicant** lives in the EU if the __country__ of the **applicant** is in ["NL", "BE", "DE"].`;
const DATA = { applicant: { age: 30, country: 'NL' } };
const OTHER = { applicant: { age: 12, country: 'US' } };

const registry = <T>(subject: string, payload: Record<string, unknown>, reply: z.ZodType<T>) =>
  bus.request(subject, { principal: admin, ...payload }, reply, { timeoutMs: 20_000 });

async function post(path: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': stack.adminKey },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

interface Answer {
  reasons?: { result: boolean; sentence: string; because: unknown[] };
  nodes?: Answer[];
  results?: Answer[];
}

/** The answer with every `reasons` removed, as the answer without reasons must be. */
function withoutReasons(a: Answer): Answer {
  if (a.results) return { ...a, results: a.results.map(withoutReasons) };
  const { reasons: _, ...rest } = a;
  return a.nodes ? { ...rest, nodes: a.nodes.map(withoutReasons) } : rest;
}

/** Every `reasons` in the answer (single, flow policy nodes, batch results). */
function reasonsIn(a: Answer): Answer['reasons'][] {
  if (a.results) return a.results.flatMap(reasonsIn);
  if (a.nodes) return a.nodes.flatMap(reasonsIn);
  return [a.reasons];
}

let routes: Array<{
  name: string;
  on: () => Promise<{ status: number; text: string }>;
  off: () => Promise<{ status: number; text: string }>;
}>;
let paths: string[];

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'gateway'] });
  bus = await connectBus({
    url: stack.env.NATS_URL,
    prefix: stack.env.NATS_SUBJECT_PREFIX,
    name: 'e2e-reasons',
    logger: createLogger({ service: 'e2e', level: 'silent' }),
  });
  const draft = await registry(RegistrySubject.policyCreate, { name: 'eligible', rule: RULE, schema: null }, PolicyRecord);
  const v1 = (await registry(RegistrySubject.policyUpdate, { policyId: draft.policyId, status: 'published' }, PolicyUpdateReply)).record;
  const definition: FlowDefinition = {
    start: 'n1',
    nodes: {
      n1: { type: 'policy', baseId: v1.baseId, onTrue: 'n2', onFalse: 'no' },
      n2: { type: 'policy', policyId: v1.policyId, onTrue: 'yes', onFalse: 'no' },
      yes: { type: 'return', value: true },
      no: { type: 'custom', outcome: 'manual review' },
    },
  };
  const flow = await registry(RegistrySubject.flowCreate, { name: 'eligible-flow', definition }, FlowRecord);
  paths = [
    `/run/policy/${v1.baseId}`,
    `/run/policy_version/${v1.policyId}`,
    `/run/flow/${flow.baseId}`,
    `/run/flow_version/${flow.flowId}`,
  ];
  routes = [
    {
      name: 'POST /run',
      on: () => post('/run', { rule: RULE, data: OTHER, reasons: true }),
      off: () => post('/run', { rule: RULE, data: OTHER }),
    },
    {
      name: 'POST /run/batch',
      on: () => post('/run/batch', { rule: RULE, items: [DATA, OTHER], reasons: true }),
      off: () => post('/run/batch', { rule: RULE, items: [DATA, OTHER] }),
    },
    ...paths.flatMap((path) => [
      { name: `POST ${path}`, on: () => post(`${path}?reasons=true`, DATA), off: () => post(path, DATA) },
      {
        name: `POST ${path}/batch`,
        on: () => post(`${path}/batch?reasons=true&trace=false`, { items: [DATA, OTHER] }),
        off: () => post(`${path}/batch?trace=false`, { items: [DATA, OTHER] }),
      },
    ]),
    {
      name: 'POST /flow/test',
      on: () => post('/flow/test?reasons=true', { definition, data: DATA }),
      off: () => post('/flow/test', { definition, data: DATA }),
    },
  ];
}, 120_000);

afterAll(async () => {
  await bus?.close();
  await stack?.stop();
});

describe('reasons on every run route', () => {
  it('add reasons to every policy answer when asked, otherwise byte for byte the answer without them', async () => {
    expect(routes).toHaveLength(11);
    for (const route of routes) {
      const on = await route.on();
      const off = await route.off();
      expect(on.status, `${route.name} ${on.text}`).toBe(200);
      expect(off.status, `${route.name} ${off.text}`).toBe(200);
      expect(off.text, route.name).not.toContain('"reasons"');
      const answer = JSON.parse(on.text) as Answer;
      const all = reasonsIn(answer);
      expect(all.length, route.name).toBeGreaterThan(0);
      for (const r of all) expect(r?.sentence, route.name).toMatch(/^eligible is (true|false) because /);
      expect(off.text, route.name).toBe(JSON.stringify(withoutReasons(answer)));
    }
  });

  it('POST /run: the deciding conditions in the rule’s own words', async () => {
    const on = await post('/run', { rule: RULE, data: OTHER, reasons: true, trace: false });
    expect(JSON.parse(on.text)).toEqual({
      result: false,
      trace: [],
      outcomes: { eligible: false, 'lives in the EU': false },
      reasons: {
        result: false,
        sentence:
          'eligible is false because the age of the applicant (12) is not at least 18 and lives in the EU is false ' +
          '(because the country of the applicant ("US") is not in ["NL", "BE", "DE"])',
        because: [
          {
            kind: 'condition',
            rule: 'eligible',
            text: 'the __age__ of the **applicant** is at least 18',
            holds: false,
            path: 'applicant.age',
            value: 12,
            line: 1,
            column: 32,
          },
          {
            kind: 'rule',
            rule: 'eligible',
            text: 'the **applicant** lives in the EU',
            holds: false,
            line: 1,
            column: 84,
            because: [
              {
                kind: 'condition',
                rule: 'lives in the EU',
                text: 'the __country__ of the **applicant** is in ["NL", "BE", "DE"]',
                holds: false,
                path: 'applicant.country',
                value: 'US',
                line: 2,
                column: 36,
              },
            ],
          },
        ],
      },
    });
  });

  it("a flow's table node: the row that matched with its cells, or no rule matched with each row's first failing cell", async () => {
    const definition: FlowDefinition = {
      start: 't',
      nodes: {
        t: {
          type: 'table',
          hitPolicy: 'first',
          inputs: [{ name: 'age', path: 'applicant.age' }],
          outputs: [{ name: 'band' }],
          rules: [
            { when: ['>= 65'], then: { band: 'senior' } },
            { when: ['>= 18'], then: { band: 'adult' } },
          ],
        },
      },
    };
    const matched = await post('/flow/test?reasons=true&trace=false', { definition, data: DATA });
    expect(matched.status, matched.text).toBe(200);
    const node = (JSON.parse(matched.text) as { nodes: Array<{ reasons: { sentence: string; because: unknown[] } }> }).nodes[0];
    expect(node.reasons.sentence).toBe('t is {"band":"adult"} because rule 2 matched (age: >= 18 (30))');
    const none = await post('/flow/test?reasons=true&trace=false', { definition, data: OTHER });
    const noneNode = (JSON.parse(none.text) as { nodes: Array<{ reasons: { because: Array<Record<string, unknown>> } }> }).nodes[0];
    expect(noneNode.reasons.because).toEqual([expect.objectContaining({ kind: 'table', text: 'no rule matched', holds: false, count: 2 })]);
    const plain = await post('/flow/test?trace=false', { definition, data: DATA });
    expect(plain.text).not.toContain('"reasons"');
  });

  it('refuses a reasons switch that is not a boolean (400 validation_failed), on the body and on the query', async () => {
    for (const refused of [
      await post('/run', { rule: RULE, data: DATA, reasons: 'yes' }),
      await post('/run/batch', { rule: RULE, items: [DATA], reasons: 1 }),
      await post(`${paths[0]}?reasons=maybe`, DATA),
      await post(`${paths[2]}/batch?reasons=yes`, { items: [DATA] }),
      await post('/flow/test?reasons=1', { definition: { start: 'a', nodes: { a: { type: 'return', value: true } } }, data: DATA }),
    ]) {
      expect(refused.status, refused.text).toBe(400);
      expect((JSON.parse(refused.text) as { code: string }).code).toBe('validation_failed');
    }
  });

  it('keeps the credentials and scope checks of the routes (no key 401, unknown id 404)', async () => {
    const res = await fetch(`${stack.baseUrl}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rule: RULE, data: DATA, reasons: true }),
    });
    expect(res.status).toBe(401);
    expect((await post('/run/policy/00000000-0000-7000-8000-000000000000?reasons=true', DATA)).status).toBe(404);
  });
});
