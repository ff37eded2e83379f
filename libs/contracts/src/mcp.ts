import { z } from 'zod';
import { EngineErrorCode, ExplainResponse, OperatorsResponse, Reasons, ValidateResponse } from './engine.js';
import { Principal } from './principal.js';

/** Names of the four MCP tools (docs/api.md#mcp-rules-for-ai-agents). */
export const McpToolName = {
  evaluateRules: 'evaluate_rules',
  validateRule: 'validate_rule',
  explainRule: 'explain_rule',
  listOperators: 'list_operators',
} as const;
export type McpToolName = (typeof McpToolName)[keyof typeof McpToolName];

/** A one-line argument error; the MCP SDK appends ` at <argument>`. */
const argError = (expected: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? `required: expected ${expected}` : `expected ${expected}`;

/** The `rule` argument of every rule tool. */
const RuleText = z.string({ error: argError('a string (the rule text)') }).describe('Policy rule text in the Arbiter rule language');

/** Arguments of `evaluate_rules`. Unknown keys are ignored. */
export const EvaluateRulesArgs = z.object({
  rule: RuleText,
  data: z
    .record(z.string(), z.unknown(), { error: argError('a JSON object (the data)') })
    .describe('JSON object the rules are evaluated against'),
});
export type EvaluateRulesArgs = z.infer<typeof EvaluateRulesArgs>;

/**
 * Result of `evaluate_rules` (LANGUAGE.md §11). `trace` is the `/run` trace: one string
 * per line (LANGUAGE.md §10.2). On an engine error `result` is false, `outcomes` is `{}`, `error`
 * is the message and `errorCode` its code, as `POST /run` answers them; otherwise both are null.
 */
export const EvaluateRulesResult = z.object({
  result: z.boolean(),
  outcomes: z.record(z.string(), z.boolean()),
  trace: z.array(z.string()),
  error: z.string().nullable(),
  errorCode: EngineErrorCode.nullable().describe("The engine error code of `error` (`POST /run`'s `errorCode`), or null"),
  reasons: Reasons.describe(
    "Why the result came out, in the rule's own words: the deciding conditions and a sentence (LANGUAGE.md §10.4); always present",
  ),
});
export type EvaluateRulesResult = z.infer<typeof EvaluateRulesResult>;

/** Arguments of `validate_rule` and `explain_rule`. Unknown keys are ignored. */
export const RuleArgs = z.object({ rule: RuleText });
export type RuleArgs = z.infer<typeof RuleArgs>;

/** Result of `validate_rule`: the `exec.validate` reply as is. */
export const ValidateRuleResult = ValidateResponse;
export type ValidateRuleResult = z.infer<typeof ValidateRuleResult>;

/** Result of `explain_rule`: the `exec.explain` reply as is. */
export const ExplainRuleResult = ExplainResponse;
export type ExplainRuleResult = z.infer<typeof ExplainRuleResult>;

/** Arguments of `list_operators`: none. Unknown keys are ignored. */
export const ListOperatorsArgs = z.object({});
export type ListOperatorsArgs = z.infer<typeof ListOperatorsArgs>;

/**
 * `structuredContent` of `list_operators`. MCP requires structured content to be an object, so the
 * spec's array is wrapped as `{operators}`; the text content carries the bare array.
 */
export const ListOperatorsResult = z.object({ operators: OperatorsResponse });
export type ListOperatorsResult = z.infer<typeof ListOperatorsResult>;

/** Request/reply subject of the mcp service: one MCP HTTP exchange carried over the bus. */
export const McpSubject = {
  http: 'mcp.http',
} as const;
export type McpSubject = (typeof McpSubject)[keyof typeof McpSubject];

/**
 * `mcp.http` request: the gateway has authenticated the caller and forwards the MCP request
 * (Streamable HTTP, stateless) with the caller's principal. Credentials are never included.
 */
export const McpHttpRequest = z.strictObject({
  method: z.enum(['POST', 'GET', 'DELETE']),
  /** MCP-relevant request headers (content-type, accept, mcp-protocol-version, ...), lower-case names. */
  headers: z.record(z.string(), z.string()),
  /** The JSON-RPC body as text. */
  body: z.string().optional(),
  principal: Principal,
});
export type McpHttpRequest = z.infer<typeof McpHttpRequest>;

/** `mcp.http` reply: the HTTP response the gateway passes back to the MCP client. */
export const McpHttpResponse = z.object({
  status: z.number().int(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
});
export type McpHttpResponse = z.infer<typeof McpHttpResponse>;
