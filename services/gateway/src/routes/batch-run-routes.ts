import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  ArbiterError,
  RecordIdParam,
  RUN_BATCH_DEFAULT_MAX_ITEMS,
  RunBatchRequest,
  RunBatchResponse,
  StoredFlowBatchResponse,
  StoredPolicyBatchResponse,
  StoredRunBatchRequest,
  type Principal,
  type RunData,
} from '@arbiter/contracts';
import { authenticate, principalOf, requireCapability } from '../http/auth.js';
import { problemOf } from '../http/problem.js';
import { busValidatedReply } from '../http/bus-validated.js';
import { errorResponses } from '../http/openapi.js';
import type { ItemCounter } from '../http/rate-items.js';
import type { Authenticator } from '../identity/authenticator.js';
import { checkBatchSize, runItems } from '../batch-runner.js';
import type { EngineClient } from '../engine-client.js';
import type { RunnerClient } from '../runner-client.js';

/** Dependencies of {@link batchRunRoutes}. */
export interface BatchRunRoutesOptions {
  readonly authenticator: Authenticator;
  readonly engine: EngineClient;
  /** Stored runs; the `/run/policy…/batch` and `/run/flow…/batch` routes are served only when given. */
  readonly runner?: RunnerClient;
  readonly items: ItemCounter;
  /** Items per call (more → 413); default 1000. */
  readonly maxItems?: number;
  /** Items in flight at once; default 32. */
  readonly wave?: number;
}

const security: Array<Record<string, string[]>> = [{ apiKey: [] }];
const tags = ['execution'];
const BATCH =
  '`results[i]` is exactly what the single-item endpoint answers for `items[i]`: its 200 body (engine outcomes such as `parse_error` ' +
  'or `schema_mismatch` included), or the RFC 9457 problem object of an item that failed on its own (data nested too deep, the ' +
  'per-key evaluation limit, a time-out). More than RUN_BATCH_MAX_ITEMS items (default 1000) → 413. The rate limit counts each ' +
  'item as a request: past it 429 with `retry-after`, nothing run.';
const NOT_FOUND = 'An id that is unknown, not a UUID, in another org, or whose base is deleted answers 404 for the whole call.';

const param = (name: string, what: string) => z.object({ [name]: RecordIdParam.describe(what) });

/**
 * Batch runs (`POST /run/batch` and `…/batch` of the four stored-run routes): many data objects in
 * one call, answered in order. Same credentials as the single-item routes (an `x-api-key` with
 * scope `view`); the items go to the execution service as coalesced `exec.batch` messages.
 */
export const batchRunRoutes: FastifyPluginAsyncZod<BatchRunRoutesOptions> = async (app, opts) => {
  authenticate(app, opts.authenticator, 'api-key-only');
  const canView = requireCapability('view');
  const maxItems = opts.maxItems ?? RUN_BATCH_DEFAULT_MAX_ITEMS;
  const wave = opts.wave ?? 32;
  const errors = errorResponses(400, 401, 403, 413, 415, 422, 429, 503, 504);
  const storedErrors = errorResponses(400, 401, 403, 404, 413, 415, 422, 429, 503, 504);

  const itemProblem = (request: FastifyRequest, err: ArbiterError) => {
    if (err.status >= 500) request.log.warn({ err }, 'batch item failed');
    return problemOf(err, String(request.id));
  };

  /** Checks the size, counts the items in the rate limit, then runs them. */
  async function batch<R>(request: FastifyRequest, items: RunData[], runOne: (principal: Principal, data: RunData) => Promise<R>) {
    checkBatchSize(items.length, maxItems);
    await opts.items.charge(request, items.length);
    const principal = principalOf(request);
    const results = await runItems(items, (data) => runOne(principal, data), {
      wave,
      requestId: String(request.id),
      onFault: (err) => request.log.warn({ err }, 'batch item failed'),
    });
    return { results };
  }

  app.post('/run/batch', {
    onRequest: canView,
    ...busValidatedReply,
    schema: {
      tags: ['engine'],
      security,
      summary: 'Evaluate an unsaved rule against many data objects',
      description: `Each item is evaluated as by \`POST /run\`. ${BATCH}`,
      body: RunBatchRequest,
      response: { 200: RunBatchResponse, ...errors },
    },
    handler: async (request) => {
      const { rule, items } = request.body;
      checkBatchSize(items.length, maxItems);
      await opts.items.charge(request, items.length);
      const answers = await opts.engine.runMany(principalOf(request), rule, items, { requestId: request.id });
      return { results: answers.map((a) => (a instanceof ArbiterError ? itemProblem(request, a) : a)) };
    },
  });

  const runner = opts.runner;
  if (runner === undefined) return;
  const storedSchema = (name: string, what: string, summary: string, single: string, reply: z.ZodType) => ({
    tags,
    security,
    summary,
    description: `Each item runs as by \`POST ${single}\`. ${BATCH} ${NOT_FOUND}`,
    params: param(name, what),
    body: StoredRunBatchRequest,
    response: { 200: reply, ...storedErrors },
  });

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
    handler: async (request) =>
      batch(request, request.body.items, (principal, data) =>
        runner.runPolicy(principal, 'base', request.params.baseId, data, { requestId: request.id }),
      ),
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
    handler: async (request) =>
      batch(request, request.body.items, (principal, data) =>
        runner.runPolicy(principal, 'record', request.params.policyId, data, { requestId: request.id }),
      ),
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
    handler: async (request) =>
      batch(request, request.body.items, (principal, data) =>
        runner.runFlow(principal, 'base', request.params.baseId, data, { requestId: request.id }),
      ),
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
    handler: async (request) =>
      batch(request, request.body.items, (principal, data) =>
        runner.runFlow(principal, 'record', request.params.flowId, data, { requestId: request.id }),
      ),
  });
};
