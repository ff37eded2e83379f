import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { ArbiterError } from '@arbiter/contracts';
import { defineCountCommand, rateCountOf, type RateBuckets, type RateCount } from '../limits/rate-count.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set when authentication already counted the request in its bucket (API keys: one Redis round trip for both). */
    rateCount: RateCount | null;
  }
}

/**
 * Counts handed from the key generator to the store. @fastify/rate-limit gives its store only the
 * generated key, so a request counted during authentication gets a one-off ticket as its key; the
 * store redeems it right after (same `applyRateLimit` call, nothing in between can throw).
 */
class CountTickets {
  private readonly counts = new Map<string, RateCount>();
  private next = 0;

  issue(count: RateCount): string {
    const ticket = `counted#${this.next++}`;
    this.counts.set(ticket, count);
    return ticket;
  }

  redeem(key: string): RateCount | undefined {
    const count = this.counts.get(key);
    if (count !== undefined) this.counts.delete(key);
    return count;
  }
}

/**
 * Rate-limit bucket of a request counted by the store: its user's person bucket (bearer token: the
 * same bucket their keys' requests count in, `RateBuckets.ofPerson`), else its address.
 */
export function rateLimitKey(request: FastifyRequest): string {
  const p = request.principal;
  // API-key callers are counted by the key lookup; this names their bucket only if one were not.
  if (p?.apiKeyId !== undefined) return `key:${p.apiKeyId}`;
  if (p) return `person:${p.orgId}:${p.userId}`;
  return `ip:${request.ip}`;
}

/**
 * A store for @fastify/rate-limit that takes a request's count from authentication when it has
 * one and otherwise counts in Redis itself, with the same fixed-window script.
 */
function countingStore(redis: Redis, buckets: RateBuckets, tickets: CountTickets) {
  defineCountCommand(redis);
  return class CountingStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: RateCount) => void): void {
      const counted = tickets.redeem(key);
      if (counted !== undefined) return callback(null, counted);
      redis.arbiterCount(buckets.named(key), buckets.windowMs).then(
        (reply) => callback(null, rateCountOf(reply)),
        (err: Error) => callback(err),
      );
    }

    child(): FastifyRateLimitStore {
      throw new Error('per-route rate-limit settings are not supported: every route shares the per-key limit');
    }
  };
}

/**
 * Rate limiting per key and per person (a key's owner over all their keys, or a bearer's user),
 * shared by all replicas through Redis. It runs as the last `onRequest` hook of each route, after
 * authentication (whose key lookup counted an API-key request in both buckets and hands on the
 * tighter count); 429 answers are problem documents with `retry-after`.
 */
export async function registerRateLimit(app: FastifyInstance, opts: { redis: Redis; buckets: RateBuckets }): Promise<void> {
  const tickets = new CountTickets();
  app.decorateRequest('rateCount', null);
  await app.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    // API-key requests are judged against the key's limit (their count is the tighter of key and
    // person, see RateBuckets.tighter); bearer requests count in their person's bucket.
    max: (request) =>
      request.principal !== null && request.principal.apiKeyId === undefined ? opts.buckets.personMax : opts.buckets.keyMax,
    timeWindow: opts.buckets.windowMs,
    store: countingStore(opts.redis, opts.buckets, tickets),
    keyGenerator: (request) => (request.rateCount !== null ? tickets.issue(request.rateCount) : rateLimitKey(request)),
    // Redis down: authentication already answers 503 (the key cache is in Redis), so the limiter
    // need not fail the request a second time.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new ArbiterError('rate_limited', `rate limit of ${context.max} requests exceeded; retry in ${context.after}`),
  });
}
