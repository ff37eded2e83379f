import { createLogger, createRegistry, loadConfig, onShutdown, startOpsServer } from '@arbiter/service-kit';
import { McpConfig } from './config.js';
import { startMcp } from './start.js';

const config = loadConfig(McpConfig);
const logger = createLogger({ service: 'mcp', level: config.LOG_LEVEL });
const registry = createRegistry('mcp');

try {
  const mcp = await startMcp(config, logger);
  const ops =
    config.OPS_PORT > 0 ? await startOpsServer({ port: config.OPS_PORT, host: config.OPS_HOST, ready: mcp.ready, registry }) : undefined;
  if (ops) logger.info({ port: ops.port }, 'ops server listening');
  onShutdown(logger, async () => {
    await mcp.stop();
    await ops?.close();
  });
} catch (err) {
  logger.fatal({ err }, 'mcp service failed to start');
  process.exitCode = 1;
}
