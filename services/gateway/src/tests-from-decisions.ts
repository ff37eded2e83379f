/**
 * Saved tests from recorded decisions (docs/decisions.md#saved-tests-from-decisions): a decision's
 * (masked) input and its answer become a saved test of its base's draft. The decision is read
 * through the audit service (which re-checks the `audit` right), the draft through the registry
 * (which re-checks `edit`, ownership and tenancy), made from the latest version when the base has
 * none, exactly as `GET /policy/{id}/draft` makes it.
 */

import {
  ArbiterError,
  FlowTest,
  PolicyTest,
  type DecisionRecord,
  type ErrorReason,
  type FlowRecord,
  type PolicyRecord,
  type Principal,
  type TestFromDecisionBody,
} from '@arbiter/contracts';
import type { DecisionsClient } from './clients/decisions-client.js';
import type { RegistryClient } from './clients/registry-client.js';

/** What a test name says when the decision's input was masked. */
export const MASKED_SUFFIX = ' (masked input)';
const MAX_NAME = 200;

function refuse(code: string, message: string, path: string): never {
  const reason: ErrorReason = { code, message, path };
  throw new ArbiterError('validation_failed', message, [reason]);
}

/**
 * The saved test a decision makes for the base `baseId` of `kind`: its input as data, its result
 * as `expect`. 400 `validation_failed` (reason `decision_of_other_base`) when the decision was not
 * made by that base, (reason `decision_error`) when it ended in an error: no saved test expects one.
 */
export function testFromDecision(decision: DecisionRecord, kind: 'policy' | 'flow', baseId: string, name: string): PolicyTest | FlowTest {
  if (decision.kind !== kind || decision.baseId !== baseId) {
    refuse(
      'decision_of_other_base',
      `decision \`${decision.decisionId}\` was made by ${decision.kind} base \`${decision.baseId}\`, not by ${kind} base \`${baseId}\``,
      'decisionId',
    );
  }
  if (decision.errorCode !== null) {
    refuse(
      'decision_error',
      `decision \`${decision.decisionId}\` ended in an error (\`${decision.errorCode}\`): a saved test expects a result`,
      'decisionId',
    );
  }
  const testName = decision.masked ? `${name.slice(0, MAX_NAME - MASKED_SUFFIX.length).trimEnd()}${MASKED_SUFFIX}` : name;
  const parsed = (kind === 'policy' ? PolicyTest : FlowTest).safeParse({ name: testName, data: decision.input, expect: decision.result });
  if (!parsed.success) {
    refuse(
      'invalid_test',
      `decision \`${decision.decisionId}\` does not make a saved ${kind} test: ${parsed.error.issues[0]?.message}`,
      'decisionId',
    );
  }
  return parsed.data;
}

/**
 * Adds the test made from `body.decisionId` to the draft of the base of record or base id `id`
 * (a new draft from the latest version when there is none) and answers the draft as saved.
 * Unknown, deleted or other-org bases and decisions are 404, as their own services answer.
 */
export async function addTestFromDecision(
  deps: { registry: RegistryClient; decisions: DecisionsClient },
  principal: Principal,
  kind: 'policy' | 'flow',
  id: string,
  body: TestFromDecisionBody,
  ctx: { requestId: string },
): Promise<PolicyRecord | FlowRecord> {
  const records = kind === 'policy' ? deps.registry.policies : deps.registry.flows;
  const current = await records.get(principal, id, ctx);
  const decision = await deps.decisions.get(principal, body.decisionId, ctx);
  const test = testFromDecision(decision, kind, current.baseId, body.name);
  const { record: draft } = await records.draft(principal, current.baseId, ctx);
  const recordId = kind === 'policy' ? (draft as PolicyRecord).policyId : (draft as FlowRecord).flowId;
  if (kind === 'policy') {
    const tests = [...(draft as PolicyRecord).tests, test as PolicyTest];
    return (await deps.registry.policies.update(principal, recordId, { status: 'draft', tests }, ctx)).record;
  }
  const tests = [...(draft as FlowRecord).tests, test];
  return (await deps.registry.flows.update(principal, recordId, { status: 'draft', tests }, ctx)).record;
}
