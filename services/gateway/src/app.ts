import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { GatewayConfig } from './config.js';
import type { EngineClient } from './engine-client.js';
import { registerOpenApi } from './http/openapi.js';
import { installProblemHandlers } from './http/problem.js';
import { RateBuckets } from './http/rate-count.js';
import { registerRateLimit } from './http/rate-limit.js';
import { echoRequestId, requestIdOf } from './http/request-id.js';
import { Authenticator } from './identity/authenticator.js';
import { createTokenVerifier } from './identity/jwt.js';
import { IdentityService } from './identity/identity-service.js';
import { ApiKeyCache } from './identity/key-cache.js';
import { pingDatabase } from './db/database.js';
import { engineRoutes } from './routes/engine-routes.js';
import { healthRoutes, type MetricsSource, type ReadinessCheck } from './routes/health-routes.js';
import { identityRoutes } from './routes/identity-routes.js';
import { mcpRoutes } from './routes/mcp-routes.js';
import { storedRunRoutes } from './routes/stored-run-routes.js';
import type { RunnerClient } from './runner-client.js';
import type { McpForwarder } from './mcp-forwarder.js';
import type { EventSink } from './events/event-sink.js';
import type { RegistryClient } from './registry-client.js';
import { getOrgSettings } from './repositories/org-settings.js';
import { groupRoutes } from './routes/group-routes.js';
import { registryRoutes } from './routes/registry-routes.js';

/** The settings {@link buildApp} reads (a subset of the process configuration). */
export type AppConfig = Pick<GatewayConfig, 'jwt' | 'limits' | 'redisKeyPrefix' | 'apiKeyCacheTtlSeconds'> & Partial<Pick<GatewayConfig, 'trustProxy'>>;

/** Everything the HTTP app needs; `main.ts` builds the real ones, tests their own. */
export interface AppDeps {
  readonly config: AppConfig;
  /** JSON logger that redacts credentials (`createLogger` of service-kit). */
  readonly logger: FastifyBaseLogger;
  /** Identity database (migrated). */
  readonly db: Knex;
  /** Shared Redis for the API-key cache and rate-limit counters. */
  readonly redis: Redis;
  /** The rule engine (the execution service over NATS in production). */
  readonly engine: EngineClient;
  /** Proxy to the mcp service; `/mcp` is served only when given. */
  readonly mcp?: McpForwarder;
  /** Runs of stored policies and flows (the execution service); `/run/policy/...`, `/run/flow/...` and `/flow/test` are served only when given. */
  readonly runner?: RunnerClient;
  /** The registry service; the stored policy, flow and group routes are served only when given. */
  readonly registry?: RegistryClient;
  /** Where the gateway's own audit events go (`assigned` of role changes); dropped when absent. */
  readonly events?: EventSink;
  /** Extra readiness probes beyond database and Redis (e.g. the bus). */
  readonly readinessChecks?: readonly ReadinessCheck[];
  /** Prometheus registry served at `/metrics`, when given. */
  readonly metrics?: MetricsSource;
  /** Version shown in the OpenAPI document. */
  readonly version?: string;
  /** Clock, for tests of expiry. */
  readonly now?: () => Date;
}

/** Probe paths whose requests are not logged. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** fastify's `trustProxy`: a hop count becomes the function that trusts that many hops. */
function trustProxyOption(trust: boolean | number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

/** Builds the gateway HTTP app (not listening). Call `ready()` or `inject()` on the result. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const app = Fastify({
    loggerInstance: deps.logger,
    genReqId: requestIdOf,
    logController: new LogController({
      requestIdLogLabel: 'requestId',
      disableRequestLogging: (request) => QUIET_PATHS.has(request.url),
    }),
    bodyLimit: config.limits.bodyLimitBytes,
    trustProxy: trustProxyOption(config.trustProxy ?? false),
    // /users/:userId must accept ids such as `auth0|abc`
    routerOptions: { maxParamLength: 300 },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorateRequest('principal', null);
  // Bodies are JSON only: anything else (text/plain included) is 415.
  app.removeContentTypeParser('text/plain');
  installProblemHandlers(app);
  echoRequestId(app);

  const now = deps.now ?? (() => new Date());
  const buckets = new RateBuckets(config.redisKeyPrefix, config.limits.rateLimitWindowMs);
  const cache = new ApiKeyCache(deps.redis, config.redisKeyPrefix, config.apiKeyCacheTtlSeconds, buckets);
  const authenticator = new Authenticator(deps.db, cache, createTokenVerifier(config.jwt), config.limits.authFailuresMax, now);
  const identity = new IdentityService(deps.db, cache, now, deps.events);

  await registerRateLimit(app, { redis: deps.redis, buckets, max: config.limits.rateLimitMax });
  await registerOpenApi(app, deps.version ?? '0.1.0');

  const checks: ReadinessCheck[] = [
    { name: 'database', check: () => pingDatabase(deps.db) },
    { name: 'redis', check: async () => void (await deps.redis.ping()) },
    ...(deps.readinessChecks ?? []),
  ];
  await app.register(healthRoutes, { checks, ...(deps.metrics ? { metrics: deps.metrics } : {}) });
  await app.register(identityRoutes, { authenticator, identity });
  await app.register(engineRoutes, { authenticator, engine: deps.engine });
  if (deps.mcp) await app.register(mcpRoutes, { authenticator, forwarder: deps.mcp });
  if (deps.runner) await app.register(storedRunRoutes, { authenticator, runner: deps.runner });
  if (deps.registry) {
    const governanceApproval = async (orgId: string) => (await getOrgSettings(deps.db, orgId)).governanceApproval;
    await app.register(registryRoutes, { authenticator, registry: deps.registry, governanceApproval });
    await app.register(groupRoutes, { authenticator, groups: deps.registry.groups });
  }
  return app;
}
