/**
 * End-to-end: the trace switch (docs/design/trace-switch.md) on every run route. `"trace": false` in the
 * body of `POST /run` and `POST /run/batch`, `?trace=false` on the others: the answer keeps its
 * shape with `"trace": []` (flows: each node's `trace` empty) and is otherwise byte for byte the
 * traced answer. The default stays on.
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

/** POSTs `body` and answers the status and the raw text of the answer. */
async function post(path: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': stack.adminKey },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

interface Answer {
  trace?: string[];
  nodes?: Array<{ trace: string[] }>;
  results?: Answer[];
}

/** The answer with every trace emptied, as the untraced answer must be. */
function withoutTraces(a: Answer): Answer {
  if (a.results) return { ...a, results: a.results.map(withoutTraces) };
  const out: Answer = { ...a };
  if (a.trace) out.trace = [];
  if (a.nodes) out.nodes = a.nodes.map((n) => ({ ...n, trace: [] }));
  return out;
}

/** Every trace in the answer (single, flow nodes, batch results). */
function traces(a: Answer): string[][] {
  if (a.results) return a.results.flatMap(traces);
  return [...(a.trace ? [a.trace] : []), ...(a.nodes ?? []).map((n) => n.trace)];
}

let routes: Array<{
  name: string;
  on: () => Promise<{ status: number; text: string }>;
  off: () => Promise<{ status: number; text: string }>;
}>;

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'gateway'] });
  bus = await connectBus({
    url: stack.env.NATS_URL,
    prefix: stack.env.NATS_SUBJECT_PREFIX,
    name: 'e2e-trace',
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
  const storedPaths = [
    `/run/policy/${v1.baseId}`,
    `/run/policy_version/${v1.policyId}`,
    `/run/flow/${flow.baseId}`,
    `/run/flow_version/${flow.flowId}`,
  ];
  routes = [
    {
      name: 'POST /run',
      on: () => post('/run', { rule: RULE, data: DATA }),
      off: () => post('/run', { rule: RULE, data: DATA, trace: false }),
    },
    {
      name: 'POST /run/batch',
      on: () => post('/run/batch', { rule: RULE, items: [DATA, OTHER] }),
      off: () => post('/run/batch', { rule: RULE, items: [DATA, OTHER], trace: false }),
    },
    ...storedPaths.flatMap((path) => [
      { name: `POST ${path}`, on: () => post(path, DATA), off: () => post(`${path}?trace=false`, DATA) },
      {
        name: `POST ${path}/batch`,
        on: () => post(`${path}/batch`, { items: [DATA, OTHER] }),
        off: () => post(`${path}/batch?trace=false`, { items: [DATA, OTHER] }),
      },
    ]),
    {
      name: 'POST /flow/test',
      on: () => post('/flow/test', { definition, data: DATA }),
      off: () => post('/flow/test?trace=false', { definition, data: DATA }),
    },
  ];
}, 120_000);

afterAll(async () => {
  await bus?.close();
  await stack?.stop();
});

describe('the trace switch', () => {
  it('answers every run route without traces when asked, otherwise byte for byte the traced answer', async () => {
    expect(routes).toHaveLength(11);
    for (const route of routes) {
      const on = await route.on();
      const off = await route.off();
      expect(on.status, `${route.name} ${on.text}`).toBe(200);
      expect(off.status, `${route.name} ${off.text}`).toBe(200);
      const traced = JSON.parse(on.text) as Answer;
      // On by default: every trace (every flow node's) has lines.
      expect(traces(traced).length, route.name).toBeGreaterThan(0);
      expect(
        traces(traced).every((t) => t.length > 0),
        route.name,
      ).toBe(true);
      // Off: the same bytes but for the emptied traces.
      expect(off.text, route.name).toBe(JSON.stringify(withoutTraces(traced)));
      expect(
        traces(JSON.parse(off.text) as Answer).every((t) => t.length === 0),
        route.name,
      ).toBe(true);
    }
  });

  it('takes `?trace=true` (and `"trace": true`) as the default, and refuses anything else with 400', async () => {
    const traced = await post('/run', { rule: RULE, data: DATA });
    expect((await post('/run', { rule: RULE, data: DATA, trace: true })).text).toBe(traced.text);
    const flowOn = routes.find((r) => r.name.startsWith('POST /run/flow/') && !r.name.endsWith('/batch'))!;
    const path = flowOn.name.slice('POST '.length);
    expect((await post(`${path}?trace=true`, DATA)).text).toBe((await flowOn.on()).text);
    for (const bad of ['maybe', '0', '']) {
      const res = await post(`${path}?trace=${bad}`, DATA);
      expect(res.status, bad).toBe(400);
      expect((JSON.parse(res.text) as { code: string }).code).toBe('validation_failed');
    }
    const badBody = await post('/run', { rule: RULE, data: DATA, trace: 'no' });
    expect(badBody.status).toBe(400);
  });

  it('is documented in the OpenAPI document: a body field of /run and /run/batch, a query parameter of the other run routes', async () => {
    const doc = (await (await fetch(`${stack.baseUrl}/openapi.json`)).json()) as {
      paths: Record<
        string,
        {
          post: {
            parameters?: Array<{ name: string; in: string }>;
            requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
          };
        }
      >;
    };
    for (const path of ['/run', '/run/batch']) {
      expect(Object.keys(doc.paths[path].post.requestBody?.content['application/json'].schema.properties ?? {}), path).toContain('trace');
    }
    const queried = Object.keys(doc.paths).filter((p) => /^\/run\/(policy|flow)/.test(p) || p === '/flow/test');
    expect(queried).toHaveLength(9);
    for (const path of queried) {
      expect(
        doc.paths[path].post.parameters?.some((p) => p.name === 'trace' && p.in === 'query'),
        path,
      ).toBe(true);
    }
  });
});
