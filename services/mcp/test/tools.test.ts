import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { documentedOperatorList } from '@arbiter/test-kit/language-doc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bus } from '@arbiter/service-kit';
import type { RunningMcp } from '../src/service.js';
import {
  captureLogger,
  clientBus,
  connectClient,
  firstText,
  randomPrefix,
  startExecution,
  startTestMcp,
  textJson,
  type ExecutionProcess,
} from './helpers.js';

const ADULT_RULE = 'A **user** is adult if the __age__ of the **user** is at least 18.';
const MEMBER_RULE =
  'A **member** earns double points if the __tier__ of the **member** is "gold" or the __visits__ of the **member** is not less than 20.';
const BROKEN_RULE = 'A **user** is adult if the __age__ of the **user** is at least.';

let execution: ExecutionProcess;
let mcp: RunningMcp;
let bus: Bus;
let client: Client;

beforeAll(async () => {
  const prefix = randomPrefix();
  execution = await startExecution(prefix);
  mcp = await startTestMcp(prefix, captureLogger().logger);
  bus = await clientBus(prefix);
  client = await connectClient(bus);
});

afterAll(async () => {
  await client?.close();
  await bus?.close();
  await mcp?.close();
  await execution?.stop();
});

describe('initialize and tools/list', () => {
  it('initializes with the official client', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'arbiter' });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toContain('evaluate_rules');
  });

  it('does not advertise tools.listChanged: a stateless server has no session to notify', () => {
    expect(client.getServerCapabilities()?.tools?.listChanged).not.toBe(true);
  });

  it('lists the four tools, each with an input and an output schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['evaluate_rules', 'explain_rule', 'list_operators', 'validate_rule']);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.description).toBeTruthy();
      expect(tool.annotations?.readOnlyHint).toBe(true);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.evaluate_rules?.inputSchema).toMatchObject({
      required: ['rule', 'data'],
      properties: { rule: { type: 'string' }, data: { type: 'object' } },
    });
    expect(byName.evaluate_rules?.outputSchema?.required).toEqual(['result', 'outcomes', 'trace', 'error', 'errorCode', 'reasons']);
    expect(byName.validate_rule?.inputSchema).toMatchObject({ required: ['rule'] });
    expect(byName.validate_rule?.outputSchema?.required).toEqual(['valid', 'error']);
    expect(byName.explain_rule?.outputSchema?.required).toEqual(['rule_count', 'rules', 'error']);
    expect(byName.list_operators?.inputSchema.properties).toEqual({});
    expect(byName.list_operators?.outputSchema?.required).toEqual(['operators']);
  });
});

describe('evaluate_rules', () => {
  it('evaluates a rule: result, outcomes, string trace, error null; text content = structured content', async () => {
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: ADULT_RULE, data: { user: { age: 30 } } } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ result: true, outcomes: { adult: true }, error: null, errorCode: null });
    const trace = (res.structuredContent as { trace: unknown }).trace;
    expect(Array.isArray(trace) && trace.length > 0 && trace.every((l) => typeof l === 'string')).toBe(true);
    expect(textJson(res)).toEqual(res.structuredContent);
    expect(Object.keys(res.structuredContent ?? {}).sort()).toEqual(['error', 'errorCode', 'outcomes', 'reasons', 'result', 'trace']);
  });

  it('always says why: reasons with the deciding conditions and a sentence, on a parse error too', async () => {
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: ADULT_RULE, data: { user: { age: 12 } } } });
    const { reasons } = res.structuredContent as {
      reasons: { result: boolean; sentence: string; because: Array<Record<string, unknown>> };
    };
    expect(reasons.result).toBe(false);
    expect(reasons.sentence).toMatch(/^adult is false because .*\(12\) is not at least 18$/);
    expect(reasons.because).toEqual([expect.objectContaining({ kind: 'condition', holds: false, path: 'user.age', value: 12 })]);
    const bad = await client.callTool({ name: 'evaluate_rules', arguments: { rule: 'if x.a >= -> ok.', data: {} } });
    const badReasons = (bad.structuredContent as { reasons: { because: Array<{ kind: string }> } }).reasons;
    expect(badReasons.because.map((b) => b.kind)).toEqual(['error']);
  });

  it('reports a false golden rule with its outcomes', async () => {
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: ADULT_RULE, data: { user: { age: 12 } } } });
    expect(res.structuredContent).toMatchObject({ result: false, outcomes: { adult: false }, error: null });
  });

  it('returns a parse error as a result, not a protocol or tool error', async () => {
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: BROKEN_RULE, data: {} } });
    expect(res.isError).toBeFalsy();
    const out = res.structuredContent as { result: boolean; outcomes: object; error: string };
    expect(out.result).toBe(false);
    expect(out.outcomes).toEqual({});
    expect(out.error).toMatch(/^Parse error: line 1, column \d+:/);
    expect(res.structuredContent).toMatchObject({ errorCode: 'parse_error' });
    expect(textJson(res)).toEqual(res.structuredContent);
  });

  it('returns a missing property as a result with the error', async () => {
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: ADULT_RULE, data: { user: {} } } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({
      result: false,
      outcomes: {},
      error: expect.stringMatching(/missing property/i),
      errorCode: 'missing_property',
    });
  });

  it('gives the errorCode POST /run gives: missing_selector', async () => {
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: ADULT_RULE, data: {} } });
    expect(res.structuredContent).toMatchObject({ result: false, errorCode: 'missing_selector' });
  });

  it('refuses a rule that is not a string with a clear tool error', async () => {
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: 42, data: {} } });
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toBeUndefined();
    expect(firstText(res)).toBe(
      'MCP error -32602: Input validation error: Invalid arguments for tool evaluate_rules: expected a string (the rule text) at rule',
    );
  });

  it.each([
    ['an array', [1, 2]],
    ['a string', 'x'],
    ['null', null],
  ])('refuses data that is %s with a clear tool error', async (_what, data) => {
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: ADULT_RULE, data } });
    expect(res.isError).toBe(true);
    expect(firstText(res)).toBe(
      'MCP error -32602: Input validation error: Invalid arguments for tool evaluate_rules: expected a JSON object (the data) at data',
    );
  });

  it('refuses missing arguments with a clear tool error', async () => {
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: ADULT_RULE } });
    expect(res.isError).toBe(true);
    expect(firstText(res)).toMatch(/evaluate_rules: required: expected a JSON object \(the data\) at data$/);
  });

  it('passes the execution limits on as a tool error', async () => {
    const res = await client.callTool({ name: 'evaluate_rules', arguments: { rule: 'x'.repeat(70_000), data: {} } });
    expect(res.isError).toBe(true);
    expect(firstText(res)).toMatch(/^rule text is 70000 bytes: the limit is \d+ bytes$/);
  });
});

describe('validate_rule', () => {
  it('accepts a valid rule', async () => {
    const res = await client.callTool({ name: 'validate_rule', arguments: { rule: ADULT_RULE } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({ valid: true, error: null });
    expect(textJson(res)).toEqual({ valid: true, error: null });
  });

  it('reports a parse error as a result', async () => {
    const res = await client.callTool({ name: 'validate_rule', arguments: { rule: BROKEN_RULE } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({ valid: false, error: expect.stringMatching(/^Parse error: /) });
  });

  it('refuses a rule that is not a string', async () => {
    const res = await client.callTool({ name: 'validate_rule', arguments: { rule: ['a'] } });
    expect(res.isError).toBe(true);
    expect(firstText(res)).toMatch(/validate_rule: expected a string \(the rule text\) at rule$/);
  });
});

describe('explain_rule', () => {
  it('explains a rule (LANGUAGE.md §12.2 example)', async () => {
    const res = await client.callTool({ name: 'explain_rule', arguments: { rule: MEMBER_RULE } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({
      rule_count: 1,
      error: null,
      rules: [
        {
          label: null,
          selector: 'member',
          verb: 'earns',
          outcome: 'double points',
          conditions: [
            {
              type: 'comparison',
              selector: 'member',
              property: 'tier',
              operator: 'is equal to',
              value: 'gold',
              logical_op: null,
              optional: false,
              negated: false,
            },
            {
              type: 'comparison',
              selector: 'member',
              property: 'visits',
              operator: 'is less than',
              value: '20',
              logical_op: 'or',
              optional: false,
              negated: true,
            },
          ],
        },
      ],
    });
    expect(textJson(res)).toEqual(res.structuredContent);
  });

  it('keeps `value` a string, as the spec types it, and reports `is not in` as "is in" negated', async () => {
    const rule =
      'A **car** is foreign if the __country__ of the **car** is not in ["XX", "YY"] and the __seats__ of the **car** is at least 2.';
    const res = await client.callTool({ name: 'explain_rule', arguments: { rule } });
    const [notIn, atLeast] = (res.structuredContent as { rules: { conditions: Record<string, unknown>[] }[] }).rules[0]!.conditions;
    expect(notIn).toMatchObject({ property: 'country', operator: 'is in', value: '["XX","YY"]', negated: true });
    expect(atLeast).toMatchObject({ property: 'seats', operator: 'is greater than or equal to', value: '2', negated: false });
  });

  it('reports a parse error as a result', async () => {
    const res = await client.callTool({ name: 'explain_rule', arguments: { rule: BROKEN_RULE } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({ rule_count: 0, rules: [], error: expect.stringMatching(/^Parse error: /) });
  });

  it('refuses a missing rule', async () => {
    const res = await client.callTool({ name: 'explain_rule', arguments: {} });
    expect(res.isError).toBe(true);
    expect(firstText(res)).toMatch(/explain_rule: required: expected a string \(the rule text\) at rule$/);
  });
});

describe('list_operators', () => {
  it('returns the exact spec array as text and wraps it as {operators} in structured content', async () => {
    const res = await client.callTool({ name: 'list_operators', arguments: {} });
    expect(res.isError).toBeFalsy();
    const operators = textJson(res) as { operator: string; forms: string[] }[];
    expect(operators).toEqual(documentedOperatorList());
    expect(res.structuredContent).toEqual({ operators });
  });

  it('works without arguments', async () => {
    const res = await client.callTool({ name: 'list_operators' });
    expect(res.isError).toBeFalsy();
    expect((res.structuredContent as { operators: unknown[] }).operators).toEqual(documentedOperatorList());
  });
});
