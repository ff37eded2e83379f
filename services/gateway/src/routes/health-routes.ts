import { z } from 'zod';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

/** One named readiness probe; it throws (or rejects) when the dependency is not usable. */
export interface ReadinessCheck {
  readonly name: string;
  readonly check: () => Promise<void>;
}

/** A Prometheus registry, as far as `/metrics` needs it. */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}

/** Dependencies of {@link healthRoutes}. */
export interface HealthRoutesOptions {
  readonly checks: readonly ReadinessCheck[];
  readonly metrics?: MetricsSource;
}

const Health = z.object({ status: z.enum(['ok', 'unavailable']), checks: z.record(z.string(), z.enum(['ok', 'failed'])).optional() });

/** `GET /healthz` (the process is up), `GET /readyz` (every dependency answers; else 503) and `GET /metrics`. */
export const healthRoutes: FastifyPluginAsyncZod<HealthRoutesOptions> = async (app, { checks, metrics }) => {
  if (metrics) {
    app.get('/metrics', { config: { rateLimit: false }, schema: { hide: true } }, async (_request, reply) =>
      reply.type(metrics.contentType).send(await metrics.metrics()),
    );
  }

  app.get('/healthz', {
    config: { rateLimit: false },
    schema: { tags: ['health'], summary: 'Liveness', response: { 200: Health } },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.get('/readyz', {
    config: { rateLimit: false },
    schema: { tags: ['health'], summary: 'Readiness: database, Redis and the bus', response: { 200: Health, 503: Health } },
    handler: async (request, reply) => {
      const results = await Promise.all(
        checks.map(async (c) => {
          try {
            await c.check();
            return [c.name, 'ok'] as const;
          } catch (err) {
            request.log.warn({ err, check: c.name }, `readiness check failed: ${c.name}`);
            return [c.name, 'failed'] as const;
          }
        }),
      );
      const ready = results.every(([, r]) => r === 'ok');
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks: Object.fromEntries(results) });
    },
  });
};
