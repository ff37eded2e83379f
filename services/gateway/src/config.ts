import { parse as parseDuration } from '@lukeed/ms';
import { z } from 'zod';
import { OrgId } from '@arbiter/contracts';
import { BaseConfig, loadConfig } from '@arbiter/service-kit';
import { MIN_API_KEY_LENGTH } from './identity/api-key-secret.js';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** Environment variables of the gateway and their defaults (README: Configuration). */
const GatewayEnv = BaseConfig.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  REDIS_KEY_PREFIX: z.string().default('arbiter:gateway:'),
  AUTH_JWT_SECRET: z.string().min(32, 'must be at least 32 characters (HS256 wants 256 bits)').optional(),
  AUTH_JWKS_URL: z.url().optional(),
  AUTH_ISSUER: z.string().optional(),
  AUTH_AUDIENCE: z.string().optional(),
  AUTH_ORG_CLAIM: z.string().default('org'),
  POLICY_BOOTSTRAP_ADMIN_KEY: z.string().min(MIN_API_KEY_LENGTH, `must be at least ${MIN_API_KEY_LENGTH} characters`).optional(),
  POLICY_BOOTSTRAP_ORG: OrgId.default('default'),
  BODY_LIMIT_BYTES: positiveInt(1024 * 1024),
  RATE_LIMIT_MAX: positiveInt(6000),
  AUTH_FAILURES_MAX: positiveInt(20),
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v): boolean | number | string[] => {
      if (v === 'true' || v === 'false') return v === 'true';
      if (/^\d+$/.test(v)) return Number(v);
      return v.split(',').map((a) => a.trim()).filter((a) => a !== '');
    }),
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
  ENGINE_TIMEOUT_MS: positiveInt(2000),
  MCP_FORWARD_TIMEOUT_MS: positiveInt(10000),
  REGISTRY_TIMEOUT_MS: positiveInt(5000),
});

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
  /** Requests allowed per key (or user) per window. */
  readonly rateLimitMax: number;
  /** Rate-limit window in milliseconds (`RATE_LIMIT_WINDOW` also takes a duration such as `1 minute`). */
  readonly rateLimitWindowMs: number;
  /**
   * Unknown API keys one client address may send per window; past it, its API-key requests that
   * miss the key cache get 429 without a database lookup.
   */
  readonly authFailuresMax: number;
}

/** The typed configuration of the gateway process. */
export interface GatewayConfig {
  readonly port: number;
  readonly host: string;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly redisKeyPrefix: string;
  readonly natsUrl: string;
  readonly natsSubjectPrefix: string;
  readonly logLevel: string;
  readonly jwt: JwtSettings;
  readonly bootstrapAdminKey?: string;
  readonly bootstrapOrg: string;
  readonly limits: HttpLimits;
  /** fastify's `trustProxy`: which `X-Forwarded-For` hops to believe for the client address (`false`: none). */
  readonly trustProxy: boolean | number | string[];
  readonly apiKeyCacheTtlSeconds: number;
  readonly engineTimeoutMs: number;
  /** How long `/mcp` waits for the mcp service (over the bus). */
  readonly mcp: { readonly timeoutMs: number };
  /** How long the stored policy, flow and group routes wait for the registry service (over the bus). */
  readonly registryTimeoutMs: number;
}

/** Reads the configuration from `env`; throws `ConfigError` naming every bad variable. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const e = loadConfig(GatewayEnv, env);
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    natsUrl: e.NATS_URL,
    natsSubjectPrefix: e.NATS_SUBJECT_PREFIX,
    logLevel: e.LOG_LEVEL,
    jwt: {
      ...(e.AUTH_JWT_SECRET !== undefined ? { secret: e.AUTH_JWT_SECRET } : {}),
      ...(e.AUTH_JWKS_URL !== undefined ? { jwksUrl: e.AUTH_JWKS_URL } : {}),
      ...(e.AUTH_ISSUER !== undefined ? { issuer: e.AUTH_ISSUER } : {}),
      ...(e.AUTH_AUDIENCE !== undefined ? { audience: e.AUTH_AUDIENCE } : {}),
      orgClaim: e.AUTH_ORG_CLAIM,
    },
    ...(e.POLICY_BOOTSTRAP_ADMIN_KEY !== undefined ? { bootstrapAdminKey: e.POLICY_BOOTSTRAP_ADMIN_KEY } : {}),
    bootstrapOrg: e.POLICY_BOOTSTRAP_ORG,
    limits: { bodyLimitBytes: e.BODY_LIMIT_BYTES, rateLimitMax: e.RATE_LIMIT_MAX, rateLimitWindowMs: e.RATE_LIMIT_WINDOW, authFailuresMax: e.AUTH_FAILURES_MAX },
    trustProxy: e.TRUST_PROXY,
    apiKeyCacheTtlSeconds: e.API_KEY_CACHE_TTL_SECONDS,
    engineTimeoutMs: e.ENGINE_TIMEOUT_MS,
    mcp: { timeoutMs: e.MCP_FORWARD_TIMEOUT_MS },
    registryTimeoutMs: e.REGISTRY_TIMEOUT_MS,
  };
}
