import {
  closeRedis,
  connectServiceBus,
  createRedis,
  databaseOptionsOf,
  ensureDatabase,
  ensureEventStream,
  EventRelay,
  openDatabase,
  redisOptionsOf,
  type Bus,
  type RunningService,
  type ServiceKit,
  EvalClient,
} from '@arbiter/service-kit';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { buildApp } from './app.js';
import { watchEvalClient } from './http/metrics.js';
import { NatsAuditClient } from './audit-client.js';
import { NatsDecisionsClient } from './decisions-client.js';
import { NatsImpactClient } from './impact-client.js';
import { appSettingsOf, type GatewayConfig } from './config.js';
import { NatsEngineClient } from './engine-client-nats.js';
import { gatewayOutbox } from './events/outbox.js';
import { bootstrapIdentity } from './identity/bootstrap.js';
import { McpForwarder } from './mcp-forwarder.js';
import { migrateGateway } from './migrate.js';
import { NatsGovernanceClient } from './governance-client.js';
import { NatsRegistryClient } from './registry-client.js';
import { NatsRunnerClient } from './runner-client.js';
import { NatsRunnableClient } from './runnable-client.js';
import { RunnableWatch } from './runnable-watch.js';

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
export async function startGateway(kit: ServiceKit<GatewayConfig>): Promise<Gateway> {
  const { config, logger } = kit;
  await ensureDatabase(config.DATABASE_URL, { connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS });
  const db = openDatabase(config.DATABASE_URL, databaseOptionsOf(config));
  let redis: Redis | undefined;
  let bus: Bus | undefined;
  let relay: EventRelay | undefined;
  let app: FastifyInstance | undefined;
  let watch: RunnableWatch | undefined;
  const closeAll = async (): Promise<void> => {
    await app?.close();
    watch?.close();
    await relay?.stop();
    await bus?.close();
    if (redis) await closeRedis(redis);
    await db.destroy();
  };
  try {
    await migrateGateway(db);
    const boot = await bootstrapIdentity(db, {
      orgId: config.POLICY_BOOTSTRAP_ORG,
      ...(config.POLICY_BOOTSTRAP_ADMIN_KEY !== undefined ? { adminKey: config.POLICY_BOOTSTRAP_ADMIN_KEY } : {}),
    });
    for (const note of boot.notes) logger.warn(note);
    redis = createRedis(config.REDIS_URL, logger, redisOptionsOf(config));
    const liveBus = await connectServiceBus(kit);
    bus = liveBus;
    await ensureEventStream(liveBus.nc, config.NATS_SUBJECT_PREFIX, { replicas: config.EVENTS_STREAM_REPLICAS });
    const outbox = gatewayOutbox(db, () => relay?.kick());
    relay = new EventRelay(liveBus.nc, outbox.store, config.NATS_SUBJECT_PREFIX, logger.child({ component: 'outbox' }), {
      intervalMs: config.GATEWAY_OUTBOX_INTERVAL_MS,
      canPublish: () => liveBus.connected(),
      metrics: kit.metrics,
    });
    relay.kick();
    const evals = new EvalClient(liveBus, { coalesce: config.EXEC_COALESCE, maxItems: config.RUN_BATCH_CHUNK });
    watchEvalClient(kit.metrics, evals);
    const runnableClient = new NatsRunnableClient(liveBus, config.REGISTRY_TIMEOUT_MS);
    watch = new RunnableWatch(liveBus, runnableClient, config.RUNNABLE_POLL_MS, (err, message) => logger.warn({ err }, message));
    app = await buildApp({
      config: appSettingsOf(config),
      logger,
      db,
      redis,
      engine: new NatsEngineClient(evals, liveBus, config.ENGINE_TIMEOUT_MS),
      mcp: new McpForwarder(liveBus, config.MCP_FORWARD_TIMEOUT_MS),
      runner: new NatsRunnerClient(evals, liveBus, config.ENGINE_TIMEOUT_MS),
      registry: new NatsRegistryClient(liveBus, config.REGISTRY_TIMEOUT_MS),
      audit: new NatsAuditClient(liveBus, config.AUDIT_TIMEOUT_MS),
      decisions: new NatsDecisionsClient(liveBus, config.AUDIT_TIMEOUT_MS),
      impact: new NatsImpactClient(liveBus, config.IMPACT_TIMEOUT_MS),
      governance: new NatsGovernanceClient(liveBus, config.GOVERNANCE_TIMEOUT_MS),
      runnable: { client: runnableClient, watch, authRecheckMs: config.RUNNABLE_AUTH_RECHECK_MS },
      events: outbox.events,
      readinessChecks: [
        {
          name: 'nats',
          check: async () => {
            if (!liveBus.connected()) throw new Error('NATS is disconnected');
          },
        },
      ],
      metrics: kit.metrics,
      version: kit.version,
    });
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
    const liveApp = app;
    let closing: Promise<void> | undefined;
    // The ops port's readiness is the public `/readyz`: database, Redis and NATS each answer.
    const ready = async () => (await liveApp.inject({ method: 'GET', url: '/readyz' })).statusCode === 200;
    return { app: liveApp, url, ready, close: () => (closing ??= closeAll()) };
  } catch (err) {
    await closeAll().catch(() => undefined);
    throw err;
  }
}
