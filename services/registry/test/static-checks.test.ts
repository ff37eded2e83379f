/** `registry.policy.checks`: the static checks of a policy text, run in the check workers. */

import { PolicyChecksReply, RegistrySubject as S } from '@arbiter/contracts';
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
