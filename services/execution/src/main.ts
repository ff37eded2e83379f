import { createLogger, createRegistry, loadConfig, onShutdown, startOpsServer } from '@arbiter/service-kit';
import { ExecConfig } from './config.js';
import { startExecution } from './service.js';

const config = loadConfig(ExecConfig);
const logger = createLogger({ service: 'execution', level: config.LOG_LEVEL });
const registry = createRegistry('execution');

try {
  const execution = await startExecution(config, { logger, registry });
  const ops =
    config.OPS_PORT > 0
      ? await startOpsServer({ port: config.OPS_PORT, host: config.OPS_HOST, ready: execution.ready, registry })
      : undefined;
  if (ops) logger.info({ port: ops.port }, 'ops server listening');
  onShutdown(logger, async () => {
    await execution.close();
    await ops?.close();
  });
} catch (err) {
  logger.fatal({ err }, 'execution service failed to start');
  process.exitCode = 1;
}
