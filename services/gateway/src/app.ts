import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { pingDatabase, type EventOutbox } from '@arbiter/service-kit';
import { ApiKeyCache, hashApiKey, installationId, KeyUsage, RateBuckets, RateCounter, trustProxyOption } from '@arbiter/key-auth';
import type { AppSettings } from './config.js';
import type { ExecutionClient } from './clients/execution-client.js';
import { registerOpenApi } from './http/openapi.js';
import { clientErrorHandler, installProblemHandlers, sendProblem } from './http/problem.js';
import { installJsonBodyParser } from './http/json-body.js';
import { closeAfterUnfinishedBodies, DEFAULT_BODY_TIMEOUT_MS, requestDeadlines } from './http/slow-bodies.js';
import { AccessLog, lazyChildLogger } from './http/logging.js';
import { echoRequestId, requestIdOf } from './http/request-id.js';
import { handedOver, installRunLane, replayHandedOverBodies } from './http/run-lane.js';
import { Authenticator } from './identity/authenticator.js';
import { createTokenVerifier } from './identity/jwt.js';
import { IdentityService } from './identity/identity-service.js';
import { ruleRoutes } from './routes/rule-routes.js';
import { batchRunRoutes } from './routes/batch-run-routes.js';
import { healthRoutes, type ReadinessCheck } from './routes/health-routes.js';
import { instrumentRequests } from './http/metrics.js';
import type { Registry } from 'prom-client';
import { identityRoutes } from './routes/identity-routes.js';
import { mcpRoutes } from './routes/mcp-routes.js';
import { storedRunRoutes } from './routes/stored-run-routes.js';
import type { StoredRunClient } from './clients/stored-run-client.js';
import type { McpForwarder } from './clients/mcp-forwarder.js';
import { gatewayOutbox } from './events/outbox.js';
import type { RegistryClient } from './clients/registry-client.js';
import type { PolicyChecker } from './http/policy-checks.js';
import { getOrgSettings } from './repositories/org-settings.js';
import { groupRoutes } from './routes/group-routes.js';
import { registryRoutes } from './routes/registry-routes.js';
import type { AuditClient } from './clients/audit-client.js';
import type { DecisionsClient } from './clients/decisions-client.js';
import type { ImpactClient } from './clients/impact-client.js';
import { auditRoutes } from './routes/audit-routes.js';
import { webhookRoutes } from './routes/webhook-routes.js';
import type { WebhooksClient } from './clients/webhooks-client.js';
import { decisionRoutes } from './routes/decision-routes.js';
import { impactRoutes } from './routes/impact-routes.js';
import { exportRoutes } from './routes/export-routes.js';
import { importRoutes } from './routes/import-routes.js';
import { restoreRoutes } from './routes/restore-routes.js';
import { rolloutRoutes } from './routes/rollout-routes.js';
import { shadowRoutes } from './routes/shadow-routes.js';
import type { ShadowClient } from './clients/shadow-client.js';
import { reviewRoutes } from './routes/review-routes.js';
import type { GovernanceClient } from './clients/governance-client.js';
import { consoleRoutes, defaultConsoleDir } from './routes/console-routes.js';
import { runnableRoutes } from './routes/runnable-routes.js';
import type { RunnableClient } from './clients/runnable-client.js';
import type { RunnableWatch } from './clients/runnable-watch.js';
import type { ReportBounds } from './runnable/report-bounds.js';

/** The settings {@link buildApp} reads (a subset of the process configuration). */
export type AppConfig = AppSettings;

/** Everything the HTTP app needs; `main.ts` builds the real ones, tests their own. */
export interface AppDeps {
  readonly config: AppConfig;
  /** JSON logger that redacts credentials (`createLogger` of service-kit). */
  readonly logger: FastifyBaseLogger;
  /** Identity database (migrated). */
  readonly db: Knex;
  /** Shared Redis for the API-key cache and rate-limit counters. */
  readonly redis: Redis;
  /** Runs of rule texts, validate, explain and operators: the execution service over NATS in production. */
  readonly execution: ExecutionClient;
  /** Proxy to the mcp service; `/mcp` is served only when given. */
  readonly mcp?: McpForwarder;
  /** Runs of stored policies and flows (the execution service); `/run/policy/...`, `/run/flow/...` and `/flow/test` are served only when given. */
  readonly runner?: StoredRunClient;
  /** The registry service; the stored policy, flow and group routes are served only when given. */
  readonly registry?: RegistryClient;
  /** Local evaluation's registry side and revision watch; `/runnable`, `/runnable/changes` and `/runnable/reports` are served only when given. */
  readonly runnable?: { client: RunnableClient; watch: RunnableWatch; authRecheckMs?: number; reportBounds?: ReportBounds };
  /** The audit service; `/audit` and `/audit/export` are served only when given. */
  readonly audit?: AuditClient;
  /** The webhooks service; `/webhooks*` are served only when given. */
  readonly webhooks?: WebhooksClient;
  /** Decision records and their settings (the audit service); `/decisions*` are served only when given, with a registry. */
  readonly decisions?: DecisionsClient;
  /** Impact analysis (the governance service); `POST /policy/{policyId}/impact` and `POST /flow/{flowId}/impact` are served only when given. */
  readonly impact?: ImpactClient;
  /** Shadow runs of bases (the registry); `/policy/{baseId}/shadow` and `/flow/{baseId}/shadow` are served only when given. */
  readonly shadows?: ShadowClient;
  /** The governance service; the review routes are served only when given (with a registry). */
  readonly governance?: GovernanceClient;
  /** The gateway's outbox for its own audit events (identity changes); without one they wait in the outbox table. */
  readonly events?: EventOutbox<Knex.Transaction>;
  /** Extra readiness probes beyond database and Redis (e.g. the bus). */
  readonly readinessChecks?: readonly ReadinessCheck[];
  /** Prometheus registry the HTTP request metrics are registered in (served by the ops server on `OPS_PORT`, never on the API port). */
  readonly metrics?: Registry;
  /** Version shown in the OpenAPI document. */
  readonly version?: string;
  /** Clock, for tests of expiry. */
  readonly now?: () => Date;
  /** The web console's built files, served at `/console` (default: `dist/` of the `@arbiter/console` package). */
  readonly consoleDir?: string;
}

/** One request in this many gets an access-log line at `info` (every request does at `debug`). */
export const DEFAULT_ACCESS_LOG_SAMPLE_EVERY = 1000;

/** Longest path parameter (ids; user ids such as `auth0|abc`); longer → 400 `validation_failed`. */
export const MAX_PARAM_LENGTH = 300;

/** Builds the gateway HTTP app (not listening). Call `ready()` or `inject()` on the result. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const bodyTimeoutMs = config.limits.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const accessLog = new AccessLog(deps.logger, config.accessLogSampleEvery ?? DEFAULT_ACCESS_LOG_SAMPLE_EVERY);
  const app = Fastify({
    loggerInstance: deps.logger,
    // A request the run lane handed over keeps the id the lane gave it.
    genReqId: (req) => handedOver(req)?.id ?? requestIdOf(req),
    logController: accessLog,
    childLoggerFactory: lazyChildLogger,
    bodyLimit: config.limits.bodyLimitBytes,
    // A request must arrive within the body time-out (Node's own deadlines; fastify's default has none).
    ...requestDeadlines(bodyTimeoutMs),
    trustProxy: trustProxyOption(config.trustProxy ?? false),
    // /users/:userId must accept ids such as `auth0|abc`
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // A bad URL or an over-long path parameter is found by the router before any route: answer it as a problem too.
    frameworkErrors: (error, request, reply) => void sendProblem(request, reply, error),
    // Requests Node's HTTP parser refuses (a body shorter than its content-length, a bad header) never reach fastify.
    clientErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();
  // One rule for every query string: unknown parameters are ignored, known ones validated.
  app.setValidatorCompiler<z.ZodType>((route) =>
    validatorCompiler(
      route.httpPart === 'querystring' && route.schema instanceof z.ZodObject ? { ...route, schema: route.schema.strip() } : route,
    ),
  );
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('principal', null);
  // Bodies are JSON only: anything else (text/plain included) is 415.
  app.removeContentTypeParser('text/plain');
  installJsonBodyParser(app);
  installProblemHandlers(app);
  echoRequestId(app);
  closeAfterUnfinishedBodies(app, bodyTimeoutMs);
  replayHandedOverBodies(app);

  const now = deps.now ?? (() => new Date());
  const buckets = new RateBuckets(
    config.redisKeyPrefix,
    config.limits.rateLimitWindowMs,
    config.limits.rateLimitMax,
    config.limits.rateLimitPersonMax ?? config.limits.rateLimitMax,
  );
  // Cached grants are tied to the database they were read from: another database (a new bootstrap) has another installation id.
  const cache = new ApiKeyCache(
    deps.redis,
    `${config.redisKeyPrefix}${await installationId(deps.db)}:`,
    config.apiKeyCacheTtlSeconds,
    buckets,
  );
  const rates = new RateCounter(deps.redis, buckets, hashApiKey);
  const keyUsage = new KeyUsage(deps.db, (err, message) => deps.logger.warn({ err }, message), config.keyUsageFlushMs ?? 30_000, now);
  app.addHook('onClose', () => keyUsage.close());
  const authenticator = new Authenticator(
    {
      db: deps.db,
      cache,
      unknownKeysMax: config.limits.authFailuresMax,
      now,
      log: (err, message) => deps.logger.warn({ err }, message),
      usage: keyUsage,
    },
    rates,
    createTokenVerifier(config.jwt),
  );
  const identity = new IdentityService(
    deps.db,
    cache,
    deps.events ?? gatewayOutbox(deps.db).events,
    now,
    keyUsage,
    config.limits.apiKeysPerUserMax,
  );

  await registerOpenApi(app, deps.version ?? '0.1.0');

  const checks: ReadinessCheck[] = [
    { name: 'database', check: () => pingDatabase(deps.db) },
    { name: 'redis', check: async () => void (await deps.redis.ping()) },
    ...(deps.readinessChecks ?? []),
  ];
  const answered = deps.metrics ? instrumentRequests(app, deps.metrics) : undefined;
  await app.register(healthRoutes, { checks });
  await app.register(identityRoutes, { authenticator, identity });
  const registry = deps.registry;
  const policyChecks: PolicyChecker | undefined = registry && ((principal, rule, ctx) => registry.policyChecks(principal, rule, ctx));
  await app.register(ruleRoutes, { authenticator, execution: deps.execution, ...(policyChecks && { checks: policyChecks }) });
  if (deps.mcp) await app.register(mcpRoutes, { authenticator, forwarder: deps.mcp, rates });
  if (deps.runner) await app.register(storedRunRoutes, { authenticator, runner: deps.runner });
  await app.register(batchRunRoutes, {
    authenticator,
    execution: deps.execution,
    ...(deps.runner ? { runner: deps.runner } : {}),
    rates,
    ...(config.limits.runBatchMaxItems !== undefined ? { maxItems: config.limits.runBatchMaxItems } : {}),
    ...(config.limits.runBatchTraceBytes !== undefined ? { batchTraceBytes: config.limits.runBatchTraceBytes } : {}),
  });
  if (deps.registry) {
    const orgSettings = (orgId: string) => getOrgSettings(deps.db, orgId);
    const governanceApproval = async (orgId: string) => (await orgSettings(orgId)).governanceApproval;
    const governance = deps.governance;
    await app.register(registryRoutes, {
      authenticator,
      registry: deps.registry,
      orgSettings,
      ...(policyChecks && { checks: policyChecks }),
      ...(governance ? { governance } : {}),
    });
    if (governance) await app.register(reviewRoutes, { authenticator, governance });
    await app.register(restoreRoutes, { authenticator, registry: deps.registry });
    await app.register(rolloutRoutes, { authenticator, registry: deps.registry });
    await app.register(exportRoutes, { authenticator, registry: deps.registry });
    await app.register(importRoutes, { authenticator, registry: deps.registry, governanceApproval });
    await app.register(groupRoutes, { authenticator, groups: deps.registry.groups });
  }
  if (deps.runnable) await app.register(runnableRoutes, { authenticator, ...deps.runnable });
  if (deps.audit) await app.register(auditRoutes, { authenticator, audit: deps.audit });
  if (deps.webhooks) await app.register(webhookRoutes, { authenticator, webhooks: deps.webhooks });
  if (deps.decisions && deps.registry)
    await app.register(decisionRoutes, { authenticator, decisions: deps.decisions, registry: deps.registry });
  if (deps.impact) await app.register(impactRoutes, { authenticator, impact: deps.impact });
  if (deps.shadows) await app.register(shadowRoutes, { authenticator, shadows: deps.shadows });
  await app.register(consoleRoutes, { root: deps.consoleDir ?? defaultConsoleDir() });
  if (config.runLane !== false) {
    installRunLane(app, {
      authenticator,
      execution: deps.execution,
      bodyLimit: config.limits.bodyLimitBytes,
      trustProxy: config.trustProxy ?? false,
      requestIdOf,
      ...(answered ? { answered } : {}),
      completed: (id, status, ms) => accessLog.laneCompleted(id, status, ms),
    });
  }
  return app;
}
