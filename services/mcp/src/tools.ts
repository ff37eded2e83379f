import {
  EvaluateRulesArgs,
  EvaluateRulesResult,
  ExecSubject,
  ExplainRuleResult,
  isArbiterError,
  ListOperatorsArgs,
  ListOperatorsResult,
  McpToolName,
  OperatorsResponse,
  RuleArgs,
  ValidateRuleResult,
  type Principal,
  type RunResponse,
} from '@arbiter/contracts';
import type { Bus, EvalClient } from '@arbiter/service-kit';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { z } from 'zod';

/** What one request's MCP server needs. */
export interface ToolDeps {
  bus: Pick<Bus, 'request'>;
  /** Evaluations (`exec.eval`, coalesced with the other calls of the same event-loop turn). */
  evals: Pick<EvalClient, 'one'>;
  /** The authenticated caller; sent with every execution request, which re-checks it. */
  principal: Principal;
  /** Bound to the HTTP request (request id, principal ids). */
  logger: Logger;
  timeoutMs: number;
  requestId: string;
  version: string;
}

const INSTRUCTIONS =
  'Arbiter evaluates, validates and explains policy rules written in its controlled-English rule language. ' +
  'Call list_operators for the comparison operators, validate_rule to check syntax, explain_rule to see how a ' +
  'policy is read, and evaluate_rules to run it against a JSON data object.';

const READ_ONLY = { readOnlyHint: true, idempotentHint: true, openWorldHint: false } as const;

/**
 * One JSON Schema validator for every per-request server: by default each server builds its own
 * Ajv instance, which cost more than the tool call itself.
 */
const SHARED_VALIDATOR = new AjvJsonSchemaValidator();

/**
 * A fresh MCP server with the four rule tools of docs/api.md#mcp-rules-for-ai-agents (one per HTTP request: the service is
 * stateless). The tools only forward to the execution service over the bus.
 */
export function createToolServer(deps: ToolDeps): McpServer {
  const server = new McpServer(
    { name: 'arbiter', version: deps.version },
    { instructions: INSTRUCTIONS, jsonSchemaValidator: SHARED_VALIDATOR },
  );
  const call = execCaller(deps);

  server.registerTool(
    McpToolName.evaluateRules,
    {
      title: 'Evaluate rules',
      description:
        'Evaluates a policy (rule text) against a JSON data object. Returns {result, outcomes, trace, error, errorCode, reasons}: ' +
        "`result` is the golden rule's value, `outcomes` maps each rule's outcome name to its value, `trace` " +
        'lists the evaluation steps one line per string, and `error` is null or the message of a parse error, ' +
        'missing selector or missing property (then `result` is false and `outcomes` is {}), with its code in ' +
        '`errorCode` (parse_error, missing_selector, missing_property, budget_exceeded; null without an error). ' +
        '`reasons` says why the result came out in the rule\'s own words: `sentence` ("<outcome> is <result> because …") and ' +
        '`because`, the conditions that decided it (kind, rule, text as written, holds, path, value, line, column, and the ' +
        'entries under a rule reference or an any/all element).',
      inputSchema: EvaluateRulesArgs,
      outputSchema: EvaluateRulesResult,
      annotations: READ_ONLY,
    },
    evaluateRules(deps, call),
  );

  server.registerTool(
    McpToolName.validateRule,
    {
      title: 'Validate a rule',
      description:
        'Checks the syntax and static rules of a policy without evaluating it. Returns {valid, error}: ' +
        '`error` is null or the parse error message.',
      inputSchema: RuleArgs,
      outputSchema: ValidateRuleResult,
      annotations: READ_ONLY,
    },
    async ({ rule }) =>
      call(ExecSubject.validate, request(deps, ExecSubject.validate, { principal: deps.principal, rule }, ValidateRuleResult), (r) => r),
  );

  server.registerTool(
    McpToolName.explainRule,
    {
      title: 'Explain a rule',
      description:
        'Parses a policy and describes each rule: {rule_count, rules: [{label, selector, outcome, conditions}], error}. ' +
        "A condition's `value` is always a string (a number's digits, a list's JSON text, a string without quotes); a " +
        'negative form is reported with its positive operator and `negated: true` (`is not in` → "is in"). ' +
        'On a parse error `rule_count` is 0, `rules` is [] and `error` is the message.',
      inputSchema: RuleArgs,
      outputSchema: ExplainRuleResult,
      annotations: READ_ONLY,
    },
    async ({ rule }) =>
      call(ExecSubject.explain, request(deps, ExecSubject.explain, { principal: deps.principal, rule }, ExplainRuleResult), (r) => r),
  );

  server.registerTool(
    McpToolName.listOperators,
    {
      title: 'List operators',
      description:
        'Lists the comparison operators of the rule language with every accepted spelling: ' +
        'an array of {operator, forms}. The structured content wraps it as {operators: [...]}.',
      inputSchema: ListOperatorsArgs,
      outputSchema: ListOperatorsResult,
      annotations: READ_ONLY,
    },
    async () =>
      call(
        ExecSubject.operators,
        request(deps, ExecSubject.operators, { principal: deps.principal }, OperatorsResponse),
        (operators): ListOperatorsResult => ({ operators }),
        (s) => s.operators,
      ),
  );

  // The tool list never changes while a request's server lives (one per request, no session to
  // notify): do not advertise `tools.listChanged`, which the SDK sets on the first tool.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}

const decoder = new TextDecoder();

/**
 * The `evaluate_rules` tool: one traced evaluation of `data` with its reasons (`exec.eval`), its answer as the tool
 * result. Shared by the SDK's server and the mcp service's direct path (`fast-path.ts`).
 */
export function evaluateRules(deps: ToolDeps, call: ExecCaller = execCaller(deps)) {
  return async ({ rule, data }: EvaluateRulesArgs): Promise<CallToolResult> =>
    call(
      ExecSubject.run,
      async () => {
        // MCP always traces and always says why (reasons). The answer is the execution service's own RunResponse JSON (its shape is
        // that contract, checked by the execution service's tests); the output schema checks the tool result.
        const body = await deps.evals.one(
          {
            subject: ExecSubject.run,
            principal: deps.principal,
            rule,
            trace: true,
            flags: { reasons: true },
            timeoutMs: deps.timeoutMs,
            requestId: deps.requestId,
          },
          JSON.stringify(data),
        );
        return JSON.parse(decoder.decode(body)) as RunResponse;
      },
      (r): EvaluateRulesResult => {
        const error = r.error ?? null;
        return {
          result: r.result,
          outcomes: error === null ? (r.outcomes ?? {}) : {},
          trace: r.trace,
          error,
          errorCode: error === null ? null : (r.errorCode ?? null),
          // INVARIANT: an answer asked with reasons has them (the run layer adds them to every policy answer).
          reasons: r.reasons ?? { result: r.result, sentence: error ?? '', because: [] },
        };
      },
    );
}

/** A request/reply of the execution service, validated by `reply`. */
function request<R>(deps: ToolDeps, subject: ExecSubject, payload: unknown, reply: z.ZodType<R>): () => Promise<R> {
  return () => deps.bus.request(subject, payload, reply, { timeoutMs: deps.timeoutMs, requestId: deps.requestId });
}

/**
 * Asks the execution service (`ask`) and turns its answer into a tool result: the mapped value as
 * `structuredContent` and as JSON text (`text` picks what the text shows). A failure of the service
 * becomes an `isError` result with a one-line message, never a protocol error.
 */
type ExecCaller = ReturnType<typeof execCaller>;

function execCaller(deps: ToolDeps) {
  return async <R, S extends Record<string, unknown>>(
    subject: ExecSubject,
    ask: () => Promise<R>,
    map: (r: R) => S,
    text: (s: S) => unknown = (s) => s,
  ): Promise<CallToolResult> => {
    let structured: S;
    try {
      structured = map(await ask());
    } catch (err) {
      return toolError(failureMessage(err, subject, deps.logger));
    }
    return { content: [{ type: 'text', text: JSON.stringify(text(structured)) }], structuredContent: structured };
  };
}

/** The one-line message of a failed execution request; server faults are logged, their details hidden. */
function failureMessage(err: unknown, subject: string, logger: Logger): string {
  if (!isArbiterError(err)) {
    logger.error({ err, subject }, 'execution request failed');
    return 'internal error: the request could not be completed';
  }
  if (err.status >= 500) logger.warn({ err: { code: err.code, message: err.message }, subject }, 'execution request failed');
  switch (err.code) {
    case 'dependency_unavailable':
      return `execution service unavailable: ${err.message}`;
    case 'timeout':
      return `execution timed out: ${err.message}`;
    case 'internal':
      return 'internal error: the request could not be completed';
    default:
      return err.message;
  }
}

function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}
