import { z } from 'zod';
import { EXEC_BATCH_MAX_ITEMS, OrgId, RUN_DEFAULTS, ServiceGroup, type BackEndService } from '@arbiter/contracts';
import { DatabaseConfig, LogConfig, NatsConfig, OpsConfig, RedisConfig, serviceConfig } from '@arbiter/service-kit';
import { KeyAuthConfig, redisKeyPrefixOf } from '@arbiter/key-auth';

/** Shortest key accepted from configuration (a 128-bit secret in base64url is 22 characters). */
export const MIN_API_KEY_LENGTH = 22;

/** Default of `APIKEYS_PER_USER_MAX`: live (unrevoked, unexpired) keys one user may hold in an org. */
export const DEFAULT_API_KEYS_PER_USER_MAX = 50;

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const booleanFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

/** Environment of the gateway: the shared parts plus its own variables (docs/configuration.md). */
export const GatewayConfig = serviceConfig([LogConfig, NatsConfig, RedisConfig, DatabaseConfig, OpsConfig, KeyAuthConfig], {
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  AUTH_JWT_SECRET: z.string().min(32, 'must be at least 32 characters (HS256 wants 256 bits)').optional(),
  AUTH_JWKS_URL: z.url().optional(),
  AUTH_ISSUER: z.string().optional(),
  AUTH_AUDIENCE: z.string().optional(),
  AUTH_ORG_CLAIM: z.string().default('org'),
  POLICY_BOOTSTRAP_ADMIN_KEY: z.string().min(MIN_API_KEY_LENGTH, `must be at least ${MIN_API_KEY_LENGTH} characters`).optional(),
  POLICY_BOOTSTRAP_ORG: OrgId.default('default'),
  /** One request in this many gets an access-log line at `info` (0: none); at LOG_LEVEL=debug every request does. */
  ACCESS_LOG_SAMPLE_EVERY: z.coerce.number().int().min(0).default(1000),
  /** Live (not revoked, not expired) API keys one user may hold in an org; creating one more is 409 `too_many_api_keys`. */
  APIKEYS_PER_USER_MAX: positiveInt(DEFAULT_API_KEYS_PER_USER_MAX),
  ENGINE_TIMEOUT_MS: positiveInt(RUN_DEFAULTS.callerTimeoutMs),
  /** Data objects one batch run (`POST /run/batch`, `…/batch`) may carry; more → 413. */
  RUN_BATCH_MAX_ITEMS: positiveInt(1000),
  /**
   * UTF-8 bytes the traces of one traced batch call share: each item's trace is cut at its share
   * (at least 4 KiB), so the answer stays bounded; 16 items or fewer keep whole traces.
   */
  RUN_BATCH_TRACE_BYTES: positiveInt(RUN_DEFAULTS.batchTraceBytes),
  /**
   * Items per `exec.eval` message (at most 256; a message also stays under the bus's max payload),
   * all of a batch call's messages sent at once: each message's group is one job in the execution queue.
   */
  RUN_BATCH_CHUNK: z.coerce.number().int().positive().max(EXEC_BATCH_MAX_ITEMS).default(EXEC_BATCH_MAX_ITEMS),
  /** Send the evaluations asked for in one event-loop turn to the execution service as one `exec.eval` message. */
  EXEC_COALESCE: booleanFlag(true),
  /** Answer plain `POST /run` requests in the run lane, past fastify's per-request machinery (docs/design/run-lane.md). */
  RUN_LANE: booleanFlag(true),
  MCP_FORWARD_TIMEOUT_MS: positiveInt(10000),
  REGISTRY_TIMEOUT_MS: positiveInt(5000),
  /** Deadline of an `audit.query` (one page of `GET /audit`, or of an export). */
  AUDIT_TIMEOUT_MS: positiveInt(5000),
  /** Deadline of a request to the webhooks service (`/webhooks` routes; none listening → 503). */
  WEBHOOKS_TIMEOUT_MS: positiveInt(5000),
  /** Deadline of a request to the governance service: above its own deadline for the registry (`GOVERNANCE_REGISTRY_TIMEOUT_MS`, 5000). */
  GOVERNANCE_TIMEOUT_MS: positiveInt(8000),
  /** Deadline of `POST /policy/{policyId}/impact` and `POST /flow/{flowId}/impact` (up to 10,000 replays; the governance service's steps have `GOVERNANCE_IMPACT_TIMEOUT_MS`). */
  IMPACT_TIMEOUT_MS: positiveInt(30000),
  /** How often each org with open `GET /runnable/changes` streams has its runnable revision polled (besides the registry's notifications). */
  RUNNABLE_POLL_MS: positiveInt(2000),
  /** How often an open `GET /runnable/changes` stream checks that its API key still works. */
  RUNNABLE_AUTH_RECHECK_MS: positiveInt(5000),
  /** Runs a report may count per second of its window, per record (`POST /runnable/reports`; more → 400 `too_many_runs`). */
  RUN_REPORT_MAX_RUNS_PER_SECOND: positiveInt(100_000),
  /** Clock drift allowed to a runtime's report windows: they may start this long before the key was made, and end this long ahead. */
  RUN_REPORT_CLOCK_SKEW_MS: z.coerce.number().int().min(0).max(86_400_000).default(300_000),
  /** How often the outbox relay sweeps for events left behind by another process (it runs right after each change, and retries every second while a publish fails). */
  GATEWAY_OUTBOX_INTERVAL_MS: positiveInt(30_000),
  /**
   * The back-end services that must answer on the bus (`<group>.ping`) for `/readyz` to be 200,
   * comma-separated; every one is probed and reported. Default: all six. `none`: only the
   * gateway's own connections count.
   */
  GATEWAY_READY_SERVICES: z
    .string()
    .default(Object.keys(ServiceGroup).join(','))
    .transform((v, ctx): BackEndService[] => {
      const names =
        v === 'none'
          ? []
          : v
              .split(',')
              .map((n) => n.trim())
              .filter((n) => n !== '');
      const unknown = names.filter((n) => !Object.hasOwn(ServiceGroup, n));
      if (unknown.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `unknown service(s) ${unknown.join(', ')}: use ${Object.keys(ServiceGroup).join(', ')} or \`none\``,
        });
        return z.NEVER;
      }
      return [...new Set(names)] as BackEndService[];
    }),
});
export type GatewayConfig = z.infer<typeof GatewayConfig>;

/** Settings of the JWT bearer credential; `undefined` key material disables bearer tokens. */
export interface JwtSettings {
  /** HS256 shared secret. */
  readonly secret?: string;
  /** JWKS address of the identity provider (asymmetric keys). */
  readonly jwksUrl?: string;
  /** Expected `iss`, checked when set. */
  readonly issuer?: string;
  /** Expected `aud`, checked when set. */
  readonly audience?: string;
  /** Claim holding the org id. */
  readonly orgClaim: string;
}

/** HTTP limits applied by the app. */
export interface HttpLimits {
  /** Largest accepted request body in bytes (larger → 413). */
  readonly bodyLimitBytes: number;
  /**
   * Time a client has to send a whole request (headers and body), and at most how long the rest of
   * a body may take after an answer sent before it arrived; default 30 s.
   */
  readonly bodyTimeoutMs?: number;
  /** Requests allowed per key per window. */
  readonly rateLimitMax: number;
  /** Requests allowed per person (a key's owner over all their keys, or a bearer's user) per window; default `rateLimitMax`. */
  readonly rateLimitPersonMax?: number;
  /** Rate-limit window in milliseconds (`RATE_LIMIT_WINDOW` also takes a duration such as `1 minute`). */
  readonly rateLimitWindowMs: number;
  /**
   * Unknown API keys one client address may send per window; past it, its API-key requests that
   * miss the key cache get 429 without a database lookup.
   */
  readonly authFailuresMax: number;
  /** Data objects one batch run may carry (more → 413); default 1000. */
  readonly runBatchMaxItems?: number;
  /** UTF-8 bytes the traces of one batch call share (`RUN_BATCH_TRACE_BYTES`). */
  readonly runBatchTraceBytes?: number;
  /** Live API keys one user may hold in an org (`APIKEYS_PER_USER_MAX`); default 50. */
  readonly apiKeysPerUserMax?: number;
}

/** The options of the HTTP app ({@link buildApp}), grouped by concern: what it needs of the configuration. */
export interface AppSettings {
  readonly jwt: JwtSettings;
  readonly limits: HttpLimits;
  readonly redisKeyPrefix: string;
  readonly apiKeyCacheTtlSeconds: number;
  /** How often API keys' `lastUsedAt` is written (batched; never a write per request). */
  readonly keyUsageFlushMs?: number;
  /** fastify's `trustProxy`: which `X-Forwarded-For` hops to believe for the client address (`false`: none). */
  readonly trustProxy?: boolean | number | string[];
  /** One request in this many gets an access-log line at `info` (0: none); default 1000. */
  readonly accessLogSampleEvery?: number;
  /** Whether plain `POST /run` requests take the run lane (`RUN_LANE`); default true. */
  readonly runLane?: boolean;
}

/** The app's settings from the gateway's configuration. */
export function appSettingsOf(c: GatewayConfig): AppSettings {
  return {
    jwt: {
      ...(c.AUTH_JWT_SECRET !== undefined ? { secret: c.AUTH_JWT_SECRET } : {}),
      ...(c.AUTH_JWKS_URL !== undefined ? { jwksUrl: c.AUTH_JWKS_URL } : {}),
      ...(c.AUTH_ISSUER !== undefined ? { issuer: c.AUTH_ISSUER } : {}),
      ...(c.AUTH_AUDIENCE !== undefined ? { audience: c.AUTH_AUDIENCE } : {}),
      orgClaim: c.AUTH_ORG_CLAIM,
    },
    limits: {
      bodyLimitBytes: c.BODY_LIMIT_BYTES,
      bodyTimeoutMs: c.BODY_TIMEOUT_MS,
      rateLimitMax: c.RATE_LIMIT_MAX,
      ...(c.RATE_LIMIT_PERSON_MAX !== undefined ? { rateLimitPersonMax: c.RATE_LIMIT_PERSON_MAX } : {}),
      rateLimitWindowMs: c.RATE_LIMIT_WINDOW,
      authFailuresMax: c.AUTH_FAILURES_MAX,
      runBatchMaxItems: c.RUN_BATCH_MAX_ITEMS,
      runBatchTraceBytes: c.RUN_BATCH_TRACE_BYTES,
      apiKeysPerUserMax: c.APIKEYS_PER_USER_MAX,
    },
    redisKeyPrefix: redisKeyPrefixOf(c, c.NATS_SUBJECT_PREFIX),
    apiKeyCacheTtlSeconds: c.API_KEY_CACHE_TTL_SECONDS,
    keyUsageFlushMs: c.KEY_USAGE_FLUSH_MS,
    trustProxy: c.TRUST_PROXY,
    accessLogSampleEvery: c.ACCESS_LOG_SAMPLE_EVERY,
    runLane: c.RUN_LANE,
  };
}
