export {
  LogLevel,
  LogConfig,
  NatsConfig,
  RedisConfig,
  DatabaseConfig,
  companionDatabaseUrl,
  OpsConfig,
  EvaluationConfig,
  serviceConfig,
  ConfigError,
  loadConfig,
  natsServers,
} from './config.js';
export { createLogger, redactUrl, redactCredentials } from './logger.js';
export {
  connectNats,
  natsConnectionOptions,
  natsSecurityOf,
  natsTuningOf,
  MAX_PINGS_OUT,
  type NatsSecurity,
  type NatsTuning,
} from './nats.js';
export {
  connectBus,
  defineEndpoint,
  ReplyBytes,
  REQUEST_ID_HEADER,
  type Bus,
  type EndpointDef,
  type RawEndpointDef,
  type HandlerContext,
  type RequestOptions,
  type ServiceDef,
} from './bus.js';
export { connectServiceBus } from './service-bus.js';
export { EvalClient, decodeReply, type SentRun, type EvalAnswer, type EvalClientOptions, type EvalClientStats } from './eval-client.js';
export { encodeFrame, decodeFrame, decodeFrameReply, frameHeader, type FrameItem, type DecodedFrame } from './frame.js';
export { startOpsServer, type OpsServer } from './ops-server.js';
export { createRegistry } from './metrics.js';
export { onShutdown, type ShutdownOptions } from './shutdown.js';
export { ensureDatabase, openDatabase, migrateLatest, pingDatabase, databaseOptionsOf, type Db, type DatabaseOptions } from './database.js';
export { isDatabaseUnavailable } from './db-faults.js';
export { encodeCursor, decodeCursor, pageFrom, cursorField } from './cursor.js';
export { createRedis, connectRedis, closeRedis, redisOptionsOf, type RedisOptions } from './redis.js';
export { packageVersion } from './package-version.js';
export { builtWorkerFile } from './worker-file.js';
export { runService, inProcessKit, type ServiceDefinition, type ServiceKit, type RunningService, type RunOptions } from './run-service.js';
export { ensureEventStream, DUPLICATE_WINDOW_MS, type EventStreamOptions } from './events/stream.js';
export { DeadLetters, type DeadLettersOptions, type ParkedFrom } from './events/dead-letters.js';
export type { OutboxStore, ClaimedEvent, EventOutbox, OutboxDropReason } from './events/outbox.js';
export { PgOutbox, outboxTableSql } from './events/pg-outbox.js';
export { RedisOutbox } from './events/redis-outbox.js';
export { EventRelay, maxEventBytes, type EventRelayOptions } from './events/event-relay.js';
export { BatchedWriter, Startup, startService, type BatchedWriterOptions } from './lifecycle/index.js';
export { instrumentRequests, type RequestCounter } from './http-metrics.js';
