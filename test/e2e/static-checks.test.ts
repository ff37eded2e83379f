/**
 * The static checks of a policy through the full stack (docs/api.md#static-checks): `/validate`
 * and the answers of policy saves carry them; the registry's check workers run them.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'gateway'] });
});

afterAll(async () => {
  await stack?.stop();
});

const CLEAN = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';

describe('static checks', () => {
  it('answers the static checks of a rule: on /validate, and with a saved policy', async () => {
    const rule = 'A **loan** needs review\n  if loan.amount > 5000\n  and loan.amount < 1000.';
    const finding = {
      check: 'contradiction',
      severity: 'warning',
      message:
        '`loan.amount < 1000` cannot hold together with `loan.amount > 5000`: no value of loan.amount satisfies them all, so the conditions joined by `and` are always false',
      line: 3,
      column: 7,
      text: 'loan.amount < 1000',
    };
    const v = await call(stack, 'POST', '/validate', { key: stack.adminKey, body: { rule } });
    expect([v.status, v.body]).toEqual([200, { valid: true, error: null, checks: [finding], checksComplete: true }]);
    const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'loan review', rule } });
    expect([created.status, created.body.checks, created.body.checksComplete]).toEqual([201, [finding], true]);
    const saved = await call(stack, 'PUT', `/policy/${created.body.policyId}`, {
      key: stack.adminKey,
      body: { status: 'draft', rule: CLEAN },
    });
    expect([saved.status, saved.body.checks, saved.body.checksComplete]).toEqual([200, [], true]);
    const published = await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key: stack.adminKey, body: { status: 'published' } });
    expect([published.status, published.body.checks]).toEqual([201, []]);
  });

  it("answers a flow's decision-table findings with its save, warnings and errors alike", async () => {
    const definition = {
      start: 't',
      nodes: {
        t: {
          type: 'table',
          hitPolicy: 'first',
          inputs: [{ name: 'age', path: 'applicant.age' }],
          outputs: [{ name: 'tier' }],
          rules: [
            { when: ['>= 18'], then: { tier: 'adult' } },
            { when: ['>= 65'], then: { tier: 'senior' } },
          ],
        },
      },
    };
    const created = await call(stack, 'POST', '/flow', { key: stack.adminKey, body: { name: 'tiers', definition } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.checksComplete).toBe(true);
    expect(created.body.checks.map((c: { check: string; severity: string; path: string }) => [c.check, c.severity, c.path])).toEqual([
      ['gap', 'warning', 'nodes.t.rules'],
      ['unreachable', 'warning', 'nodes.t.rules.1'],
    ]);
    const read = await call(stack, 'GET', `/flow/${created.body.flowId}`, { key: stack.adminKey });
    expect(read.body).not.toHaveProperty('checks');
  });

  it('answers a rule that does not parse with its parse error and no checks', async () => {
    const v = await call(stack, 'POST', '/validate', {
      key: stack.adminKey,
      body: { rule: 'A **driver** is old if the __age__ of the **driver** is.' },
    });
    expect(v.status).toBe(200);
    expect(v.body).toMatchObject({ valid: false, error: expect.stringMatching(/^Parse error: line 1/), checks: [], checksComplete: true });
  });

  it('refuses /validate without credentials, without the view scope, and with a malformed body', async () => {
    expect((await call(stack, 'POST', '/validate', { body: { rule: CLEAN } })).status).toBe(401);
    const created = await call(stack, 'POST', '/apikeys', { key: stack.adminKey, body: { name: 'audit-only', scopes: ['audit'] } });
    expect(created.status).toBe(201);
    expect((await call(stack, 'POST', '/validate', { key: created.body.key as string, body: { rule: CLEAN } })).status).toBe(403);
    const bad = await call(stack, 'POST', '/validate', { key: stack.adminKey, body: { rule: 7 } });
    expect([bad.status, bad.body.code]).toEqual([400, 'validation_failed']);
  });
});
