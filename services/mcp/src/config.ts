import { BaseConfig } from '@arbiter/service-kit';
import { z } from 'zod';

const port = () => z.coerce.number().int().min(0).max(65535);

/** Environment of the mcp service (DESIGN.md §1, §8; spec §5.2). */
export const McpConfig = BaseConfig.extend({
  /** Port of `POST /mcp`; 0 picks a free port. */
  MCP_PORT: port().default(8090),
  /** Interface of `POST /mcp`; loopback by default, since only the gateway should reach it. */
  HOST: z.string().default('127.0.0.1'),
  /** When set, every request must carry it in `x-arbiter-internal-token` (the gateway sends it). */
  MCP_INTERNAL_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Reply deadline of each request to the execution service. */
  MCP_TIMEOUT_MS: z.coerce.number().int().positive().default(3000),
  /** Largest accepted `POST /mcp` body (DESIGN.md §4: 1 MiB). */
  MCP_MAX_BODY_BYTES: z.coerce.number().int().positive().default(1024 * 1024),
  /** Port of `/healthz`, `/readyz`, `/metrics`; 0 turns the ops server off. */
  OPS_PORT: port().default(0),
  OPS_HOST: z.string().default('0.0.0.0'),
});
export type McpConfig = z.infer<typeof McpConfig>;
