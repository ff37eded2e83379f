import {
  closeRedis,
  connectRedis,
  databaseOptionsOf,
  EvalClient,
  openDatabase,
  redisOptionsOf,
  startService,
  type Bus,
  type RunningService,
  type ServiceKit,
} from '@arbiter/service-kit';
import {
  ApiKeyCache,
  hashApiKey,
  installationId,
  KeyAuthenticator,
  KeyUsage,
  RateBuckets,
  RateCounter,
  redisKeyPrefixOf,
} from '@arbiter/key-auth';
import type { AddressInfo } from 'node:net';
import { mcpBusEndpoint, serveExchange, type McpBusDeps } from './bus-endpoint.js';
import type { McpConfig } from './config.js';
import { buildHttpDoor, type DoorAuth } from './http-door.js';

/** A running mcp service, with its bus exposed for tests. */
export interface RunningMcp extends RunningService {
  bus: Bus;
  /** The port of the service's own `/mcp` (`MCP_HTTP_PORT`); undefined when it has none. */
  httpPort: number | undefined;
}

/**
 * Serves `mcp.http` in the `mcp` queue group (the gateway carries each of its `/mcp` exchanges over
 * the bus with the caller's principal), and with `MCP_HTTP_PORT` the service's own `POST /mcp`,
 * which authenticates API keys itself against the gateway's Redis and database (`http-door.ts`).
 */
export function startMcp(kit: ServiceKit<McpConfig>): Promise<RunningMcp> {
  return startService(kit, async (s) => {
    const { config, logger } = kit;
    const bus = await s.bus();
    const deps: McpBusDeps = {
      bus,
      evals: new EvalClient(bus, { coalesce: config.EXEC_COALESCE }),
      logger,
      timeoutMs: config.MCP_TIMEOUT_MS,
      version: kit.version,
    };
    await s.serve(bus, {
      name: 'mcp',
      version: kit.version,
      description: 'MCP rule tools (Streamable HTTP over the bus, or on the service own port)',
      endpoints: { http: mcpBusEndpoint(deps) },
    });
    let httpPort: number | undefined;
    let redisReady = (): boolean => true;
    if (config.MCP_HTTP_PORT !== undefined) {
      const redis = s.add('redis', await connectRedis(config.REDIS_URL, logger, redisOptionsOf(config)), closeRedis);
      // Without Redis the port can only answer 503: not ready, so the Service routes around this pod.
      redisReady = () => redis.status === 'ready';
      // The gateway's database, read for keys the cache does not hold; never migrated or created here.
      const db = s.add('database', openDatabase(config.DATABASE_URL, databaseOptionsOf(config)), (d) => d.destroy());
      const usage = s.add('key usage', new KeyUsage(db, (err, message) => logger.warn({ err }, message), config.KEY_USAGE_FLUSH_MS), (u) =>
        u.close(),
      );
      const buckets = new RateBuckets(
        redisKeyPrefixOf(config, config.NATS_SUBJECT_PREFIX),
        config.RATE_LIMIT_WINDOW,
        config.RATE_LIMIT_MAX,
        config.RATE_LIMIT_PERSON_MAX ?? config.RATE_LIMIT_MAX,
      );
      const rates = new RateCounter(redis, buckets, hashApiKey);
      // Cached grants are tied to the database they were read from (its installation id, written by
      // the gateway's migrations): read on the first request, so the service may start before the gateway.
      let auth: Promise<DoorAuth> | undefined;
      const makeAuth = async (): Promise<DoorAuth> => {
        const prefix = `${redisKeyPrefixOf(config, config.NATS_SUBJECT_PREFIX)}${await installationId(db)}:`;
        const cache = new ApiKeyCache(redis, prefix, config.API_KEY_CACHE_TTL_SECONDS, buckets);
        const authenticator = new KeyAuthenticator({
          db,
          cache,
          unknownKeysMax: config.AUTH_FAILURES_MAX,
          log: (err, message) => logger.warn({ err }, message),
          usage,
        });
        return { authenticator, rates };
      };
      const app = await buildHttpDoor({
        auth: () => {
          auth ??= makeAuth().catch((err: unknown) => {
            auth = undefined;
            throw err;
          });
          return auth;
        },
        exchange: (req, requestId, parsed) => serveExchange(deps, req, requestId, parsed),
        bodyLimitBytes: config.BODY_LIMIT_BYTES,
        bodyTimeoutMs: config.BODY_TIMEOUT_MS,
        trustProxy: config.TRUST_PROXY,
        logger,
        metrics: kit.metrics,
      });
      s.add('http', app, (a) => a.close());
      await app.listen({ port: config.MCP_HTTP_PORT, host: config.MCP_HTTP_HOST });
      httpPort = (app.server.address() as AddressInfo).port;
      logger.info({ port: httpPort }, 'mcp: serving /mcp on its own port');
    }
    return { bus, httpPort, ready: () => bus.connected() && redisReady() };
  });
}
