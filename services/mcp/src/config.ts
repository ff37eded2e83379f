import { DatabaseConfig, LogConfig, NatsConfig, OpsConfig, RedisConfig, serviceConfig } from '@arbiter/service-kit';
import { KeyAuthConfig } from '@arbiter/key-auth';
import { z } from 'zod';

/**
 * Environment of the mcp service: the shared parts plus its own `MCP_*` variables
 * (docs/configuration.md#mcp). Redis, the database and the key-authentication variables are read
 * only when `MCP_HTTP_PORT` opens the service's own port; they must then be the gateway's.
 */
export const McpConfig = serviceConfig([LogConfig, NatsConfig, OpsConfig, RedisConfig, DatabaseConfig, KeyAuthConfig], {
  /** Reply deadline of each request to the execution service. */
  MCP_TIMEOUT_MS: z.coerce.number().int().positive().default(3000),
  /** Send the `evaluate_rules` calls made in one event-loop turn to the execution service as one `exec.batch` message. */
  EXEC_COALESCE: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((v) => v === 'true' || v === '1'),
  /**
   * The service's own HTTP port serving `POST /mcp` (API keys checked here, as the gateway does);
   * unset or empty: none, the service serves only the bus (`mcp.http`, from the gateway's `/mcp`);
   * `0`: any free port (tests).
   */
  MCP_HTTP_PORT: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(0).max(65535).optional()),
  MCP_HTTP_HOST: z.string().default('0.0.0.0'),
});
export type McpConfig = z.infer<typeof McpConfig>;
