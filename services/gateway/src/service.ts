import { pingSubject, PingReply, ServiceGroup, type BackEndService } from '@arbiter/contracts';
import {
  type Bus,
  closeRedis,
  createRedis,
  ensureEventStream,
  EvalClient,
  redisOptionsOf,
  startService,
  type RunningService,
  type ServiceKit,
} from '@arbiter/service-kit';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { ReadinessCheck } from './routes/health-routes.js';
import { watchEvalClient } from './http/metrics.js';
import { NatsAuditClient } from './clients/audit-client.js';
import { NatsWebhooksClient } from './clients/webhooks-client.js';
import { NatsDecisionsClient } from './clients/decisions-client.js';
import { NatsShadowClient } from './clients/shadow-client.js';
import { NatsImpactClient } from './clients/impact-client.js';
import { appSettingsOf, type GatewayConfig } from './config.js';
import { NatsExecutionClient } from './clients/execution-client-nats.js';
import { gatewayOutbox } from './events/outbox.js';
import { bootstrapIdentity } from './identity/bootstrap.js';
import { McpForwarder } from './clients/mcp-forwarder.js';
import { migrateGateway } from './migrate.js';
import { NatsGovernanceClient } from './clients/governance-client.js';
import { NatsRegistryClient } from './clients/registry-client.js';
import { NatsStoredRunClient } from './clients/stored-run-client.js';
import { NatsRunnableClient } from './clients/runnable-client.js';
import { RunnableWatch } from './clients/runnable-watch.js';

/** How long a service's `<group>._ping` may take; `/readyz` gives each check at most 900 ms. */
const PING_TIMEOUT_MS = 800;

/**
 * One readiness check per back-end service: a replica answers its `<group>._ping` on the bus. Each
 * is reported by `/readyz`; those of `required` (`GATEWAY_READY_SERVICES`) decide its status.
 */
function serviceProbes(bus: Pick<Bus, 'request'>, required: readonly BackEndService[]): ReadinessCheck[] {
  return (Object.keys(ServiceGroup) as BackEndService[]).map((name) => ({
    name,
    required: required.includes(name),
    check: async () => void (await bus.request(pingSubject(ServiceGroup[name]), {}, PingReply, { timeoutMs: PING_TIMEOUT_MS })),
  }));
}

/** A running gateway: the listening app and its connections. */
export interface Gateway extends RunningService {
  app: FastifyInstance;
  /** The address the API answers on. */
  url: string;
}

/**
 * Starts the gateway: creates and migrates its database, bootstraps the first org and admin,
 * connects Redis and NATS, starts its outbox relay, builds the app and listens on `HOST:PORT`.
 * Prints the API and docs addresses (and a generated admin key, once) on stdout for people.
 */
export function startGateway(kit: ServiceKit<GatewayConfig>): Promise<Gateway> {
  return startService(kit, async (s) => {
    const { config, logger } = kit;
    const db = await s.database(config.DATABASE_URL, migrateGateway);
    const boot = await bootstrapIdentity(db, {
      orgId: config.POLICY_BOOTSTRAP_ORG,
      ...(config.POLICY_BOOTSTRAP_ADMIN_KEY !== undefined ? { adminKey: config.POLICY_BOOTSTRAP_ADMIN_KEY } : {}),
    });
    for (const note of boot.notes) logger.warn(note);
    const redis = s.add('redis', createRedis(config.REDIS_URL, logger, redisOptionsOf(config)), closeRedis);
    const bus = await s.bus();
    await ensureEventStream(bus.nc, config.NATS_SUBJECT_PREFIX, { replicas: config.EVENTS_STREAM_REPLICAS });
    // Kicked after each change; changes come only through the app, built after the relay.
    const outbox = gatewayOutbox(db, () => relay.kick());
    const relay = s.relay(bus.nc, outbox.store, { intervalMs: config.GATEWAY_OUTBOX_INTERVAL_MS, canPublish: () => bus.connected() });
    relay.kick();
    const evals = new EvalClient(bus, { coalesce: config.EXEC_COALESCE, maxItems: config.RUN_BATCH_CHUNK });
    watchEvalClient(kit.metrics, evals);
    const runnableClient = new NatsRunnableClient(bus, config.REGISTRY_TIMEOUT_MS);
    const watch = s.add(
      'runnable watch',
      new RunnableWatch(bus, runnableClient, config.RUNNABLE_POLL_MS, (err, message) => logger.warn({ err }, message)),
      (w) => w.close(),
    );
    const app = s.add(
      'HTTP app',
      await buildApp({
        config: appSettingsOf(config),
        logger,
        db,
        redis,
        execution: new NatsExecutionClient(evals, bus, config.ENGINE_TIMEOUT_MS),
        mcp: new McpForwarder(bus, config.MCP_FORWARD_TIMEOUT_MS),
        runner: new NatsStoredRunClient(evals, bus, config.ENGINE_TIMEOUT_MS),
        registry: new NatsRegistryClient(bus, config.REGISTRY_TIMEOUT_MS),
        shadows: new NatsShadowClient(bus, config.REGISTRY_TIMEOUT_MS),
        audit: new NatsAuditClient(bus, config.AUDIT_TIMEOUT_MS),
        webhooks: new NatsWebhooksClient(bus, config.WEBHOOKS_TIMEOUT_MS),
        decisions: new NatsDecisionsClient(bus, config.AUDIT_TIMEOUT_MS),
        impact: new NatsImpactClient(bus, config.IMPACT_TIMEOUT_MS),
        governance: new NatsGovernanceClient(bus, config.GOVERNANCE_TIMEOUT_MS),
        runnable: {
          client: runnableClient,
          watch,
          authRecheckMs: config.RUNNABLE_AUTH_RECHECK_MS,
          reportBounds: { maxRunsPerSecond: config.RUN_REPORT_MAX_RUNS_PER_SECOND, clockSkewMs: config.RUN_REPORT_CLOCK_SKEW_MS },
        },
        events: outbox.events,
        readinessChecks: [
          {
            name: 'nats',
            check: async () => {
              if (!bus.connected()) throw new Error('NATS is disconnected');
            },
          },
          ...serviceProbes(bus, config.GATEWAY_READY_SERVICES),
        ],
        metrics: kit.metrics,
        version: kit.version,
      }),
      (a) => a.close(),
    );
    await app.listen({ port: config.PORT, host: config.HOST });
    const shown = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
    const url = `http://${shown}:${config.PORT}`;
    logger.info({ api: url, docs: `${url}/docs`, openapi: `${url}/openapi.json` }, 'gateway listening');
    process.stdout.write(
      `Arbiter API:  ${url}\nArbiter docs: ${url}/docs (OpenAPI: ${url}/openapi.json)\nArbiter console: ${url}/console\n`,
    );
    if (boot.generatedKey !== undefined) {
      // Printed once, outside the JSON logs: the only copy of this secret.
      process.stdout.write(
        `\nGenerated admin API key for org \`${boot.orgId}\`, user \`${boot.userId}\` (shown once, store it now):\n  ${boot.generatedKey}\n\n`,
      );
    }
    // The ops port's readiness is the public `/readyz`: database, Redis, NATS and the required services each answer.
    const ready = async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200;
    return { app, url, ready };
  });
}
