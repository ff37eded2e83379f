import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import {
  ExplainResponse,
  OperatorsResponse,
  RuleOnlyRequest,
  RunRequest,
  RunResponse,
  runOptionsOf,
  ValidateHttpResponse,
} from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { busValidatedReply } from '../http/bus-validated.js';
import { installItemsBodyParser, itemsOf } from '../http/json-body.js';
import { sendAnswer } from '../http/raw-json.js';
import { handedOver } from '../http/run-lane.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { ExecutionClient } from '../clients/execution-client.js';
import { checksFor, type PolicyChecker } from '../http/policy-checks.js';

/** Dependencies of {@link ruleRoutes}. */
export interface RuleRoutesOptions {
  readonly authenticator: Authenticator;
  readonly execution: ExecutionClient;
  /** The static checks `/validate` answers with; without it they are left out (`checks: []`, `checksComplete: false`). */
  readonly checks?: PolicyChecker;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }];
const tags = ['engine'];

/**
 * `POST /run`, `/validate`, `/explain` and `GET /operators`: an `x-api-key` with scope `view`
 * is required (docs/api.md#authentication-and-roles); the work is done by the execution service.
 */
export const ruleRoutes: FastifyPluginAsyncZod<RuleRoutesOptions> = async (app, { authenticator, execution, checks }) => {
  authenticate(app, authenticator, 'api-key-only');
  // `data` travels to the execution service as the bytes the caller sent (never parsed and written again).
  installItemsBodyParser(app, undefined, { key: 'data', as: 'value' });
  const canView = requireCapability('view');

  app.post('/run', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: 'Evaluate an unsaved rule against data',
      description:
        'A rule that fails to parse, reads missing data or needs more steps than its budget (`budget_exceeded`, EXEC_TRACE_STEP_BUDGET; ' +
        'EXEC_STEP_BUDGET with `"trace": false`) answers 200 with `result:false`, `error` and `errorCode`. `"trace": false` leaves the ' +
        'trace out: the answer keeps its shape with `"trace": []`, everything else alike. `"reasons": true` adds `reasons`: why the result ' +
        "came out, in the rule's own words (docs/LANGUAGE.md §10.4); without it the answer is unchanged. 429 with `retry-after` when the key (or its " +
        'owner over all their keys) already has EXEC_CALLER_MAX evaluations in progress.',
      body: RunRequest,
      response: { 200: RunResponse, ...errorResponses(400, 401, 403, 413, 415, 422, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      const { rule, data } = request.body;
      // A run the lane started and handed over (its answer was an error) is answered from its answers, never run twice.
      const [answer] = await (handedOver(request.raw)?.answers ??
        execution.run(principalOf(request), rule, itemsOf(request, [data]), runOptionsOf(request.id, request.body)));
      return sendAnswer(reply, answer);
    },
  });

  app.post('/validate', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: 'Check the syntax of a rule, and its static checks',
      description:
        '`valid` and `error` as before; `checks` lists the static-check warnings of a rule that parses (conditions that are always ' +
        'true or false, conditions joined by `and` that cannot all hold; docs/api.md, "Static checks"), each with its line, column and ' +
        'text. Warnings never make a rule invalid. `checksComplete` is false when the checks stopped at their bound or did not run ' +
        '(the registry, which runs them, did not answer): the answer is still 200.',
      body: RuleOnlyRequest,
      response: { 200: ValidateHttpResponse, ...errorResponses(400, 401, 403, 413, 415, 429, 503, 504) },
    },
    handler: async (request) => {
      const principal = principalOf(request);
      const [answer, found] = await Promise.all([
        execution.validate(principal, request.body, { requestId: request.id }),
        checksFor(request, checks, principal, request.body.rule),
      ]);
      return { ...answer, ...found };
    },
  });

  app.post('/explain', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: 'Describe the rules, selectors and conditions of a rule text',
      body: RuleOnlyRequest,
      response: { 200: ExplainResponse, ...errorResponses(400, 401, 403, 413, 415, 429, 503, 504) },
    },
    handler: async (request) => execution.explain(principalOf(request), request.body, { requestId: request.id }),
  });

  app.get('/operators', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: 'List the operators of the rule language',
      response: { 200: OperatorsResponse, ...errorResponses(401, 403, 429, 503, 504) },
    },
    handler: async (request) => execution.operators(principalOf(request), { requestId: request.id }),
  });
};
