import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { ArbiterError } from '@arbiter/contracts';

/** Rate-limit bucket of a request: its API key, else its user, else (unauthenticated routes) its address. */
export function rateLimitKey(request: FastifyRequest): string {
  const p = request.principal;
  if (p?.apiKeyId !== undefined) return `key:${p.apiKeyId}`;
  if (p) return `user:${p.orgId}:${p.userId}`;
  return `ip:${request.ip}`;
}

/**
 * Per-key rate limiting shared by all replicas through Redis. It runs as the last `onRequest`
 * hook of each route, after authentication, so buckets belong to keys and users; 429 answers
 * are problem documents with `retry-after`.
 */
export async function registerRateLimit(
  app: FastifyInstance,
  opts: { redis: Redis; prefix: string; max: number; timeWindow: number | string },
): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    max: opts.max,
    timeWindow: opts.timeWindow,
    redis: opts.redis,
    nameSpace: `${opts.prefix}ratelimit:`,
    keyGenerator: rateLimitKey,
    // Redis down: authentication already answers 503 (the key cache is in Redis), so the limiter
    // need not fail the request a second time.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new ArbiterError('rate_limited', `rate limit of ${context.max} requests exceeded; retry in ${context.after}`),
  });
}
