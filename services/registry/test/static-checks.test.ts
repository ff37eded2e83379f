/** `registry.policy.checks`: the static checks of a policy text, run in the check workers. */

import { FlowChecksReply, PolicyChecksReply, RegistrySubject as S } from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADULT_RULE, as, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const checks = (rule: string, principal = as('viewer')) => env.call(S.policyChecks, { principal, rule }, PolicyChecksReply);

describe('registry.policy.checks', () => {
  it('answers no findings for a clean policy, and the warnings of a broken one with their positions', async () => {
    expect(await checks(ADULT_RULE)).toEqual({ checks: [], checksComplete: true });
    expect(await checks('if x.n > 5\n  and x.n < 3 -> ok.')).toEqual({
      checks: [
        {
          check: 'contradiction',
          severity: 'warning',
          message:
            '`x.n < 3` cannot hold together with `x.n > 5`: no value of x.n satisfies them all, so the conditions joined by `and` are always false',
          line: 2,
          column: 7,
          text: 'x.n < 3',
        },
      ],
      checksComplete: true,
    });
  });

  it('answers no findings for a text that does not parse (its parse error is reported elsewhere)', async () => {
    expect(await checks('if if')).toEqual({ checks: [], checksComplete: true });
  });

  it('needs the view right, and a well-formed request', async () => {
    expect((await env.fail(S.policyChecks, { principal: as('viewer', { scopes: [] }), rule: ADULT_RULE })).code).toBe('forbidden');
    expect((await env.fail(S.policyChecks, { principal: as('viewer') })).code).toBe('bad_request');
  });
});

const TIERS = {
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

describe('registry.flow.checks', () => {
  it("answers every finding of the flow's decision tables, warnings included; none for a flow without tables", async () => {
    const found = await env.call(S.flowChecks, { principal: as('viewer'), definition: TIERS }, FlowChecksReply);
    expect(found.checksComplete).toBe(true);
    expect(found.checks.map((c) => [c.check, c.severity, c.path, c.rules])).toEqual([
      ['gap', 'warning', 'nodes.t.rules', []],
      ['unreachable', 'warning', 'nodes.t.rules.1', [1, 2]],
    ]);
    expect(found.checks[0].example).toEqual({ applicant: { age: 17 } });
    const plain = { start: 'r', nodes: { r: { type: 'return', value: true } } };
    expect(await env.call(S.flowChecks, { principal: as('viewer'), definition: plain }, FlowChecksReply)).toEqual({
      checks: [],
      checksComplete: true,
    });
  });

  it('needs the view right, and a well-formed definition', async () => {
    expect((await env.fail(S.flowChecks, { principal: as('viewer', { scopes: [] }), definition: TIERS })).code).toBe('forbidden');
    expect((await env.fail(S.flowChecks, { principal: as('viewer'), definition: { start: 1 } })).code).toBe('bad_request');
  });
});
