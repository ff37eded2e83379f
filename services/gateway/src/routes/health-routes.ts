import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

/** One named readiness probe; it throws (or rejects) when the dependency is not usable. */
export interface ReadinessCheck {
  readonly name: string;
  readonly check: () => Promise<void>;
  /** Whether a failure makes `/readyz` 503 (default true); a check that is not required is only reported. */
  readonly required?: boolean;
}

/** Dependencies of {@link healthRoutes}. */
export interface HealthRoutesOptions {
  readonly checks: readonly ReadinessCheck[];
}

/** Each readiness check gets this long, so `/readyz` answers within a second even when a dependency hangs. */
const CHECK_DEADLINE_MS = 900;

/** Resolves when `check` does, rejects when it fails or takes longer than the deadline. */
async function withinDeadline(check: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_DEADLINE_MS} ms`)), CHECK_DEADLINE_MS);
  });
  try {
    await Promise.race([check(), late]);
  } finally {
    clearTimeout(timer);
  }
}

const Health = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z
    .record(z.string(), z.enum(['ok', 'failed']))
    .optional()
    .describe(
      'Each dependency: `database`, `redis`, `nats`, and each back-end service answering on the bus (`execution`, `registry`, ' +
        '`governance`, `audit`, `webhooks`, `mcp`); `status` counts the services of `GATEWAY_READY_SERVICES` (default all)',
    ),
});

/**
 * `GET /healthz` (the process is up) and `GET /readyz` (every required dependency answers; else
 * 503), with each dependency's state. Metrics are not served on the public port: the ops server
 * serves them on `OPS_PORT` with the other services'.
 */
export const healthRoutes: FastifyPluginAsyncZod<HealthRoutesOptions> = async (app, { checks }) => {
  app.get('/healthz', {
    schema: { tags: ['health'], summary: 'Liveness', security: [], response: { 200: Health } },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.get('/readyz', {
    schema: {
      tags: ['health'],
      summary: 'Readiness: database, Redis, the bus and each back-end service on it',
      security: [],
      response: { 200: Health, 503: Health },
    },
    handler: async (request, reply) => {
      const results = await Promise.all(
        checks.map(async (c) => {
          try {
            await withinDeadline(c.check);
            return [c.name, 'ok'] as const;
          } catch (err) {
            if (c.required !== false) request.log.warn({ err, check: c.name }, `readiness check failed: ${c.name}`);
            return [c.name, 'failed'] as const;
          }
        }),
      );
      const ready = results.every(([, r], i) => r === 'ok' || checks[i].required === false);
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks: Object.fromEntries(results) });
    },
  });
};
