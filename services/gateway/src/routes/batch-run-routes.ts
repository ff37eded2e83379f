import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  RecordIdParam,
  RUN_BATCH_DEFAULT_MAX_ITEMS,
  RunBatchRequest,
  RunBatchResponse,
  StoredFlowBatchResponse,
  StoredPolicyBatchResponse,
  StoredRunBatchRequest,
  TraceQuery,
  ByBaseQuery,
  instantsOf,
  traceOf,
  runFlagsOf,
  itemTraceBytes,
  runOptionsOf,
} from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { busValidatedReply } from '../http/bus-validated.js';
import { errorResponses } from '../http/openapi.js';
import { applyRateLimit } from '../http/rate-limit.js';
import { installItemsBodyParser, itemsOf } from '../http/json-body.js';
import { sendResults } from '../http/raw-json.js';
import type { Authenticator } from '../identity/authenticator.js';
import type { RateCounter } from '@arbiter/key-auth';
import { batchResults, checkBatchSize } from '../batch-results.js';
import type { ExecutionAnswer, ExecutionClient } from '../clients/execution-client.js';
import type { RunBy, RunKind, StoredRunClient } from '../clients/stored-run-client.js';

/** Dependencies of {@link batchRunRoutes}. */
export interface BatchRunRoutesOptions {
  readonly authenticator: Authenticator;
  readonly execution: ExecutionClient;
  /** Stored runs; the `/run/policy…/batch` and `/run/flow…/batch` routes are served only when given. */
  readonly runner?: StoredRunClient;
  /** Counts each batch item in the rate limit. */
  readonly rates: RateCounter;
  /** Items per call (more → 413); default 1000. */
  readonly maxItems?: number;
  /** UTF-8 bytes the traces of one call share (`RUN_BATCH_TRACE_BYTES`); default RUN_DEFAULTS.batchTraceBytes. */
  readonly batchTraceBytes?: number;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }];
const tags = ['execution'];
const BATCH =
  '`results[i]` is exactly what the single-item endpoint answers for `items[i]`: its 200 body (run outcomes such as `parse_error` ' +
  'or `schema_mismatch` included), or the RFC 9457 problem object of an item that failed on its own (data nested too deep, the ' +
  'per-key evaluation limit, a time-out). More than RUN_BATCH_MAX_ITEMS items (default 1000) → 413. The rate limit counts each ' +
  "item as a request (for the key and for its owner over all their keys), and the answer's `x-ratelimit-remaining` counts them: past " +
  'it 429 with `retry-after`, nothing run.';
const NOT_FOUND = 'An id that is unknown, not a UUID, in another org, or whose base is deleted answers 404 for the whole call.';
const TRACE =
  '`?trace=false` leaves the traces out: each answer keeps its shape with `"trace": []` (flows: each node\'s `trace` empty). ' +
  '`?reasons=true` adds `reasons` to each policy answer (docs/LANGUAGE.md §10.4).';

/** What a refused batch counted. */
const BATCH_COUNTED = ' (a batch counts each item, for the key and for its owner over all their keys)';

const param = (name: string, what: string) => z.object({ [name]: RecordIdParam.describe(what) });

/**
 * Batch runs (`POST /run/batch` and `…/batch` of the four stored-run routes): many data objects in
 * one call, answered in order. Same credentials as the single-item routes (an `x-api-key` with
 * scope `view`); the items go to the execution service as `exec.eval` groups (at most 256 items a
 * message), each message's group one job of the caller's in the execution queue, and the answers
 * come back as raw JSON that is put together here without being decoded.
 */
export const batchRunRoutes: FastifyPluginAsyncZod<BatchRunRoutesOptions> = async (app, opts) => {
  authenticate(app, opts.authenticator, 'api-key-only');
  installItemsBodyParser(app);
  const canView = requireCapability('view');
  const maxItems = opts.maxItems ?? RUN_BATCH_DEFAULT_MAX_ITEMS;
  const errors = errorResponses(400, 401, 403, 413, 415, 422, 429, 503, 504);
  const storedErrors = errorResponses(400, 401, 403, 404, 413, 415, 422, 429, 503, 504);

  /** Checks the size and counts the items in the rate limit, whose headers then include them (nothing runs past either). */
  async function admit(request: FastifyRequest, reply: FastifyReply, count: number): Promise<void> {
    checkBatchSize(count, maxItems);
    const key = request.headers['x-api-key'];
    const use = await opts.rates.chargeItems(typeof key === 'string' ? key : undefined, request.principal, count);
    if (use !== undefined) applyRateLimit(reply, use, BATCH_COUNTED);
  }

  function send(request: FastifyRequest, reply: FastifyReply, answers: ExecutionAnswer[], notFoundFailsCall: boolean) {
    const results = batchResults(answers, {
      requestId: String(request.id),
      notFoundFailsCall,
      onFault: (err) => request.log.warn({ err }, 'batch item failed'),
    });
    return sendResults(reply, results);
  }

  app.post('/run/batch', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags: ['engine'],
      security,
      summary: 'Evaluate an unsaved rule against many data objects',
      description: `Each item is evaluated as by \`POST /run\`. \`"trace": false\` leaves the traces out: each answer keeps its shape with \`"trace": []\`. \`"reasons": true\` adds \`reasons\` to each answer (docs/LANGUAGE.md §10.4). ${BATCH}`,
      body: RunBatchRequest,
      response: { 200: RunBatchResponse, ...errors },
    },
    handler: async (request, reply) => {
      const { rule, items } = request.body;
      await admit(request, reply, items.length);
      const answers = await opts.execution.run(principalOf(request), rule, itemsOf(request, items), {
        ...runOptionsOf(request.id, request.body),
        traceBytes: itemTraceBytes(items.length, opts.batchTraceBytes),
      });
      return send(request, reply, answers, false);
    },
  });

  const runner = opts.runner;
  if (runner === undefined) return;
  const storedSchema = (name: string, what: string, summary: string, single: string, reply: z.ZodType) => ({
    tags,
    security,
    summary,
    description: `Each item runs as by \`POST ${single}\`. ${BATCH} ${TRACE} ${NOT_FOUND}`,
    params: param(name, what),
    querystring: name === 'baseId' ? ByBaseQuery : TraceQuery,
    body: StoredRunBatchRequest,
    response: { 200: reply, ...storedErrors },
  });

  async function runStored(
    request: FastifyRequest,
    reply: FastifyReply,
    kind: RunKind,
    by: RunBy,
    id: string,
    { body: { items }, query }: { body: StoredRunBatchRequest; query: ByBaseQuery },
  ) {
    await admit(request, reply, items.length);
    const flags = runFlagsOf(query);
    const answers = await runner!.run(kind, principalOf(request), by, id, itemsOf(request, items), {
      requestId: request.id,
      trace: traceOf(query),
      traceBytes: itemTraceBytes(items.length, opts.batchTraceBytes),
      ...(flags !== undefined ? { flags } : {}),
      ...(by === 'base' ? instantsOf(query) : {}),
    });
    return send(request, reply, answers, true);
  }

  app.post('/run/policy/:baseId/batch', {
    onRequest: canView,
    ...busValidatedReply,
    schema: storedSchema(
      'baseId',
      'Base id of the policy',
      'Run the current runnable policy of a base on many data objects',
      '/run/policy/{baseId}',
      StoredPolicyBatchResponse,
    ),
    handler: async (request, reply) => runStored(request, reply, 'policy', 'base', request.params.baseId, request),
  });

  app.post('/run/policy_version/:policyId/batch', {
    onRequest: canView,
    ...busValidatedReply,
    schema: storedSchema(
      'policyId',
      'Id of a policy record (a version or the draft)',
      'Run the exact policy record on many data objects',
      '/run/policy_version/{policyId}',
      StoredPolicyBatchResponse,
    ),
    handler: async (request, reply) => runStored(request, reply, 'policy', 'record', request.params.policyId, request),
  });

  app.post('/run/flow/:baseId/batch', {
    onRequest: canView,
    ...busValidatedReply,
    schema: storedSchema(
      'baseId',
      'Base id of the flow',
      'Run the current runnable flow of a base on many data objects',
      '/run/flow/{baseId}',
      StoredFlowBatchResponse,
    ),
    handler: async (request, reply) => runStored(request, reply, 'flow', 'base', request.params.baseId, request),
  });

  app.post('/run/flow_version/:flowId/batch', {
    onRequest: canView,
    ...busValidatedReply,
    schema: storedSchema(
      'flowId',
      'Id of a flow record (a version or the draft)',
      'Run the exact flow record on many data objects',
      '/run/flow_version/{flowId}',
      StoredFlowBatchResponse,
    ),
    handler: async (request, reply) => runStored(request, reply, 'flow', 'record', request.params.flowId, request),
  });
};
