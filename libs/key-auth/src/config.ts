import type { ServerOptions } from 'node:http';
import { parse as parseDuration } from '@lukeed/ms';
import { z } from 'zod';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Default of `BODY_TIMEOUT_MS`: the time a client has to send a whole request, headers and body. */
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;

/**
 * The variables of an HTTP door's body limit, client address, API-key authentication and rate
 * limiting, read alike by every door
 * (docs/configuration.md#gateway): the gateway and the mcp service's own port must be given the
 * same values, or a key's limit differs between them (its counters are shared either way).
 */
export const KeyAuthConfig = z.object({
  /** Largest request body; larger → 413 before it is read. */
  BODY_LIMIT_BYTES: positiveInt(1024 * 1024),
  /** Time a client has to send a whole request, headers and body; later → 408 and the connection is closed. */
  BODY_TIMEOUT_MS: positiveInt(DEFAULT_BODY_TIMEOUT_MS),
  /** Which `X-Forwarded-For` hops to believe for the client address (`true`, a hop count, or addresses/CIDRs); the unknown-key limit counts per address. */
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v): boolean | number | string[] => {
      if (v === 'true' || v === 'false') return v === 'true';
      if (/^\d+$/.test(v)) return Number(v);
      return v
        .split(',')
        .map((a) => a.trim())
        .filter((a) => a !== '');
    }),
  /** Prefix of the gateway's Redis keys; unset: `<NATS_SUBJECT_PREFIX>:gateway:`, so stacks with their own prefix never share keys. */
  REDIS_KEY_PREFIX: z.string().min(1).optional(),
  RATE_LIMIT_MAX: positiveInt(6000),
  /** Requests per window of one person over all their keys (and their bearer-token requests); default RATE_LIMIT_MAX. */
  RATE_LIMIT_PERSON_MAX: z.coerce.number().int().positive().optional(),
  AUTH_FAILURES_MAX: positiveInt(20),
  RATE_LIMIT_WINDOW: z
    .string()
    .default('1 minute')
    .transform((w, ctx) => {
      const ms = /^\d+$/.test(w) ? Number(w) : parseDuration(w);
      if (ms === undefined || !Number.isSafeInteger(ms) || ms <= 0) {
        ctx.addIssue({ code: 'custom', message: 'must be a positive number of milliseconds or a duration such as `1 minute`' });
        return z.NEVER;
      }
      return ms;
    }),
  API_KEY_CACHE_TTL_SECONDS: positiveInt(60),
  /** How often the time each API key was last used is written (one UPDATE for every key used since). */
  KEY_USAGE_FLUSH_MS: positiveInt(30_000),
});
export type KeyAuthConfig = z.infer<typeof KeyAuthConfig>;

/** The Redis key prefix of the key cache and the rate buckets: `REDIS_KEY_PREFIX`, else `<NATS_SUBJECT_PREFIX>:gateway:`. */
export function redisKeyPrefixOf(c: Pick<KeyAuthConfig, 'REDIS_KEY_PREFIX'>, natsSubjectPrefix: string): string {
  return c.REDIS_KEY_PREFIX ?? `${natsSubjectPrefix}:gateway:`;
}

/** fastify's `trustProxy` from `TRUST_PROXY`: a hop count becomes a function trusting the nearest `n` hops. */
export function trustProxyOption(trust: boolean | number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof trust === 'number' ? (_address, hop) => hop < trust : trust;
}

/**
 * fastify's options that bound how long a request may take to arrive, by Node's own HTTP server:
 * the whole request (headers and body) within `timeoutMs` (`requestTimeout`; fastify's default, 0,
 * would let a body shorter than its `content-length` hold the connection for ever), the headers
 * within the same time (Node checks the request deadline only when the headers deadline is not
 * longer), and the check that finds late requests run often enough that one is closed soon after
 * its deadline (Node's default looks every 30 s). A late request is answered 408 by the client
 * error handler, then its connection is closed.
 */
export function requestDeadlines(timeoutMs: number): { requestTimeout: number; http: ServerOptions } {
  return {
    requestTimeout: timeoutMs,
    http: {
      headersTimeout: timeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeoutMs / 10))),
    },
  };
}
