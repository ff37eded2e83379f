import { LogConfig, NatsConfig, OpsConfig, serviceConfig } from '@arbiter/service-kit';
import { z } from 'zod';

/** Environment of the mcp service: the shared parts plus its own `MCP_*` variables (docs/configuration.md#mcp). */
export const McpConfig = serviceConfig([LogConfig, NatsConfig, OpsConfig], {
  /** Reply deadline of each request to the execution service. */
  MCP_TIMEOUT_MS: z.coerce.number().int().positive().default(3000),
  /** Send the `evaluate_rules` calls made in one event-loop turn to the execution service as one `exec.batch` message. */
  EXEC_COALESCE: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((v) => v === 'true' || v === '1'),
});
export type McpConfig = z.infer<typeof McpConfig>;
