import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { connectBus, createLogger, createRegistry, onShutdown } from '@arbiter/service-kit';
import { buildApp } from './app.js';
import { readConfig } from './config.js';
import { ensureDatabase, migrateLatest, openDatabase } from './db/database.js';
import { NatsEngineClient } from './engine-client-nats.js';
import { McpForwarder } from './mcp-forwarder.js';
import { NatsRunnerClient } from './runner-client.js';
import { JetStreamEventPublisher } from './events/jetstream-publisher.js';
import { NatsRegistryClient } from './registry-client.js';
import { bootstrapIdentity } from './identity/bootstrap.js';

const version = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const config = readConfig();
const logger = createLogger({ service: 'gateway', level: config.logLevel });

await ensureDatabase(config.databaseUrl);
const db = openDatabase(config.databaseUrl);
await migrateLatest(db);
const boot = await bootstrapIdentity(db, {
  orgId: config.bootstrapOrg,
  ...(config.bootstrapAdminKey !== undefined ? { adminKey: config.bootstrapAdminKey } : {}),
});
for (const note of boot.notes) logger.warn(note);

const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, connectTimeout: 5000 });
redis.on('error', (err) => logger.warn({ err }, 'Redis error'));
const bus = await connectBus({ url: config.natsUrl, prefix: config.natsSubjectPrefix, name: 'gateway', logger });

const events = new JetStreamEventPublisher(bus.nc, config.natsSubjectPrefix, logger);

const app = await buildApp({
  config,
  logger,
  db,
  redis,
  engine: new NatsEngineClient(bus, config.engineTimeoutMs),
  mcp: new McpForwarder(bus, config.mcp.timeoutMs),
  runner: new NatsRunnerClient(bus, config.engineTimeoutMs),
  registry: new NatsRegistryClient(bus, config.registryTimeoutMs),
  events,
  readinessChecks: [
    {
      name: 'nats',
      check: async () => {
        if (!bus.connected()) throw new Error('NATS is disconnected');
      },
    },
  ],
  metrics: createRegistry('gateway'),
  version,
});

onShutdown(logger, async () => {
  await app.close();
  await events.close();
  await bus.close();
  await redis.quit();
  await db.destroy();
});

await app.listen({ port: config.port, host: config.host });
const shown = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
const base = `http://${shown}:${config.port}`;
logger.info({ api: base, docs: `${base}/docs`, openapi: `${base}/openapi.json` }, 'gateway listening');
process.stdout.write(`Arbiter API:  ${base}\nArbiter docs: ${base}/docs (OpenAPI: ${base}/openapi.json)\n`);
if (boot.generatedKey !== undefined) {
  // Printed once, outside the JSON logs: the only copy of this secret.
  process.stdout.write(
    `\nGenerated admin API key for org \`${boot.orgId}\`, user \`${boot.userId}\` (shown once, store it now):\n  ${boot.generatedKey}\n\n`,
  );
}
