import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  FlowRunResponse,
  FlowTestBody,
  RecordIdParam,
  RunData,
  StoredFlowRunResponse,
  StoredPolicyRunResponse,
  TraceQuery,
  ByBaseQuery,
  instantsOf,
  traceOf,
  runFlagsOf,
} from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { busValidatedReply } from '../http/bus-validated.js';
import { rawBodyOf } from '../http/json-body.js';
import { sendAnswer, sendJson } from '../http/raw-json.js';
import { errorResponses } from '../http/openapi.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { RunBy, RunKind, StoredRunClient } from '../clients/stored-run-client.js';

/** Dependencies of {@link storedRunRoutes}. */
export interface StoredRunRoutesOptions {
  readonly authenticator: Authenticator;
  readonly runner: StoredRunClient;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }];
const tags = ['execution'];
const EXECUTION_RESULTS =
  "Engine outcomes are results, not HTTP errors: a rule that fails to parse, missing data, or data that breaks the policy's JSON Schema " +
  '(`errorCode:"schema_mismatch"`, `error` naming the first failing path) answer 200 with `result:false`, `error` and `errorCode`.';
const FLOW_RESULTS =
  'A policy node names a base (its current runnable record, or the pinned `version`) or an exact `policyId`. A node whose policy is deleted, ' +
  'unknown or in another org stops the flow: 200 with `result:false`, `errorCode:"policy_not_found"` and an `error` naming the node.';
const NOT_FOUND = 'An id that is unknown, not a UUID, in another org, or whose base is deleted answers 404 (also by exact version id).';
const TRACE =
  '`?trace=false` leaves the trace out: the answer keeps its shape with `"trace": []` (flows: each node\'s `trace` empty). ' +
  '`?reasons=true` adds `reasons` to a policy answer (flows: to each policy node): why the result came out (docs/LANGUAGE.md §10.4).';

const TIMELINE =
  '`?asOf=` runs the version runnable at that instant, evaluated at it unless `?now=` is given too; `?now=` alone sets the clock and picks the version in effect at it; ' +
  'the answer names the version; docs/api.md#scheduled-versions-as-of-runs-and-rollback';

const param = (name: string, what: string) => z.object({ [name]: RecordIdParam.describe(what) });

/**
 * Runs of stored policies and flows and `POST /flow/test` (docs/api.md#evaluate-rules, docs/api.md#policies-and-flows): an `x-api-key`
 * with scope `view` is required (docs/api.md#authentication-and-roles); the body is the input data object itself (for
 * `/flow/test`: `{definition, data}`). The execution service resolves the record from the Redis
 * runnable index and runs it; nothing on this path reads PostgreSQL in steady state.
 */
export const storedRunRoutes: FastifyPluginAsyncZod<StoredRunRoutesOptions> = async (app, { authenticator, runner }) => {
  authenticate(app, authenticator, 'api-key-only');
  const canView = requireCapability('view');
  const policyErrors = errorResponses(400, 401, 403, 404, 413, 415, 422, 429, 503, 504);

  /** Runs the record on the body (the data object, forwarded as the JSON text it came as) and sends its answer. */
  async function runOne(request: FastifyRequest, reply: FastifyReply, kind: RunKind, by: RunBy, id: string, query: ByBaseQuery) {
    const flags = runFlagsOf(query);
    const [answer] = await runner.run(kind, principalOf(request), by, id, [rawBodyOf(request)], {
      requestId: request.id,
      trace: traceOf(query),
      ...(flags !== undefined ? { flags } : {}),
      ...(by === 'base' ? instantsOf(query) : {}),
    });
    return sendAnswer(reply, answer);
  }

  app.post('/run/policy/:baseId', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: 'Run the current runnable policy of a base',
      description: `Runs the version of the base in effect (the latest published one, unless a schedule says otherwise: ${TIMELINE}), or its draft when it was never published. ${EXECUTION_RESULTS} ${TRACE} ${NOT_FOUND}`,
      params: param('baseId', 'Base id of the policy'),
      querystring: ByBaseQuery,
      body: RunData,
      response: { 200: StoredPolicyRunResponse, ...policyErrors },
    },
    handler: async (request, reply) => runOne(request, reply, 'policy', 'base', request.params.baseId, request.query),
  });

  app.post('/run/policy_version/:policyId', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: 'Run the exact policy record (a version or the draft)',
      description: `${EXECUTION_RESULTS} ${TRACE} ${NOT_FOUND}`,
      params: param('policyId', 'Id of a policy record (a version or the draft)'),
      querystring: TraceQuery,
      body: RunData,
      response: { 200: StoredPolicyRunResponse, ...policyErrors },
    },
    handler: async (request, reply) => runOne(request, reply, 'policy', 'record', request.params.policyId, request.query),
  });

  app.post('/run/flow/:baseId', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: 'Run the current runnable flow of a base',
      description: `Runs the version of the base in effect (the latest published one, unless a schedule says otherwise: ${TIMELINE}), or its draft when it was never published. ${FLOW_RESULTS} ${TRACE} ${NOT_FOUND}`,
      params: param('baseId', 'Base id of the flow'),
      querystring: ByBaseQuery,
      body: RunData,
      response: { 200: StoredFlowRunResponse, ...policyErrors },
    },
    handler: async (request, reply) => runOne(request, reply, 'flow', 'base', request.params.baseId, request.query),
  });

  app.post('/run/flow_version/:flowId', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: 'Run the exact flow record (a version or the draft)',
      description: `${FLOW_RESULTS} ${TRACE} ${NOT_FOUND}`,
      params: param('flowId', 'Id of a flow record (a version or the draft)'),
      querystring: TraceQuery,
      body: RunData,
      response: { 200: StoredFlowRunResponse, ...policyErrors },
    },
    handler: async (request, reply) => runOne(request, reply, 'flow', 'record', request.params.flowId, request.query),
  });

  app.post('/flow/test', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags,
      security,
      summary: 'Run an ad hoc flow definition without storing it',
      description:
        `The definition must be a valid DAG (start exists, every branch resolves, no cycles, no unreachable nodes, both branches on every policy node): ` +
        `otherwise 400 \`validation_failed\` listing every problem. ${FLOW_RESULTS} ${TRACE} No \`executed\` event: nothing stored ran as a flow.`,
      querystring: TraceQuery,
      body: FlowTestBody,
      response: { 200: FlowRunResponse, ...errorResponses(400, 401, 403, 413, 415, 422, 429, 503, 504) },
    },
    handler: async (request, reply) => {
      const flags = runFlagsOf(request.query);
      return sendJson(
        reply,
        await runner.testFlow(principalOf(request), request.body, {
          requestId: request.id,
          trace: traceOf(request.query),
          ...(flags !== undefined ? { flags } : {}),
        }),
      );
    },
  });
};
