import { LogConfig, NatsConfig, OpsConfig, serviceConfig } from '@arbiter/service-kit';
import { z } from 'zod';

/** Environment of the mcp service: the shared parts plus its own `MCP_*` variables (DESIGN.md §1, §8). */
export const McpConfig = serviceConfig([LogConfig, NatsConfig, OpsConfig], {
  /** Reply deadline of each request to the execution service. */
  MCP_TIMEOUT_MS: z.coerce.number().int().positive().default(3000),
});
export type McpConfig = z.infer<typeof McpConfig>;
