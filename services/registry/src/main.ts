import { createLogger, createRegistry, loadConfig, onShutdown, startOpsServer } from '@arbiter/service-kit';
import { RegistryConfig } from './config.js';
import { startRegistry } from './service.js';

const config = loadConfig(RegistryConfig);
const logger = createLogger({ service: 'registry', level: config.LOG_LEVEL });
const metrics = createRegistry('registry');

try {
  const registry = await startRegistry(config, logger);
  const ops = config.OPS_PORT > 0 ? await startOpsServer({ port: config.OPS_PORT, host: config.OPS_HOST, ready: registry.ready, registry: metrics }) : undefined;
  if (ops) logger.info({ port: ops.port }, 'ops server listening');
  onShutdown(logger, async () => {
    await registry.stop();
    await ops?.close();
  });
} catch (err) {
  logger.fatal({ err }, 'registry service failed to start');
  process.exitCode = 1;
}
