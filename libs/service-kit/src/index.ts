export { BaseConfig, LogLevel, ConfigError, loadConfig } from './config.js';
export { createLogger, redactUrl } from './logger.js';
export {
  connectBus,
  defineEndpoint,
  REQUEST_ID_HEADER,
  type Bus,
  type EndpointDef,
  type HandlerContext,
  type RequestOptions,
  type ServiceDef,
} from './bus.js';
export { startOpsServer, type OpsServer } from './ops-server.js';
export { createRegistry } from './metrics.js';
export { onShutdown, type ShutdownOptions } from './shutdown.js';
export { ensureDatabase } from './database.js';
export { createRedis, connectRedis } from './redis.js';
