import type { Registry } from 'prom-client';
import { Writable } from 'node:stream';
import { SignJWT } from 'jose';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { createLogger } from '@arbiter/service-kit';
import { buildApp, type AppConfig, type AppDeps } from '../../src/app.js';
import type { ExecutionClient } from '../../src/clients/execution-client.js';
import type { AuditClient } from '../../src/clients/audit-client.js';
import type { DecisionsClient } from '../../src/clients/decisions-client.js';
import type { RegistryClient } from '../../src/clients/registry-client.js';
import type { GovernanceClient } from '../../src/clients/governance-client.js';
import type { ImpactClient } from '../../src/clients/impact-client.js';
import { createOrgWithAdmin } from '../../src/identity/bootstrap.js';
import { StubExecution } from './stub-execution.js';
import type { TestDatabase, TestRedis } from './servers.js';

/** HS256 secret configured on every test gateway. */
export const JWT_SECRET = 'test-secret-that-is-at-least-32-characters-long';
export const JWT_ISSUER = 'https://idp.test';
export const JWT_AUDIENCE = 'arbiter';

/** Log lines written by a test gateway (to check that secrets never appear). */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.lines.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== ''),
    );
    done();
  }
  /** Every captured line as one string. */
  text(): string {
    return this.lines.join('\n');
  }
}

/** Options of {@link startGateway}. */
export interface GatewayOptions {
  execution?: ExecutionClient;
  limits?: Partial<AppConfig['limits']>;
  logs?: LogCapture;
  /** Level of the captured logs (`info` by default). */
  logLevel?: 'info' | 'debug';
  /** ACCESS_LOG_SAMPLE_EVERY (1000 by default). */
  accessLogSampleEvery?: number;
  now?: () => Date;
  /** Serves the stored policy, flow and group routes with this registry. */
  registry?: RegistryClient;
  /** Serves `/audit` and `/audit/export` with this audit client. */
  audit?: AuditClient;
  /** Serves `/decisions*` (with a registry) with this client of the audit service's decision records. */
  decisions?: DecisionsClient;
  /** Serves the review routes (with a registry) with this governance service. */
  governance?: GovernanceClient;
  /** Serves `POST /policy/{policyId}/impact` and `POST /flow/{flowId}/impact` with this client. */
  impact?: ImpactClient;
  /** fastify's `trustProxy` (TRUST_PROXY). */
  trustProxy?: boolean | number | string[];
  /** API_KEY_CACHE_TTL_SECONDS (60 by default). */
  cacheTtlSeconds?: number;
  /** Prometheus registry for the request metrics and `/metrics`. */
  metrics?: Registry;
  /** Serves the local-evaluation routes (`/runnable…`). */
  runnable?: AppDeps['runnable'];
}

/** A gateway app wired to the file's real database and Redis. */
export async function startGateway(db: TestDatabase, redis: TestRedis, opts: GatewayOptions = {}): Promise<FastifyInstance> {
  const config: AppConfig = {
    jwt: { secret: JWT_SECRET, issuer: JWT_ISSUER, audience: JWT_AUDIENCE, orgClaim: 'org' },
    limits: { bodyLimitBytes: 1024 * 1024, rateLimitMax: 10_000, rateLimitWindowMs: 60_000, authFailuresMax: 20, ...opts.limits },
    redisKeyPrefix: redis.prefix,
    apiKeyCacheTtlSeconds: opts.cacheTtlSeconds ?? 60,
    ...(opts.accessLogSampleEvery !== undefined ? { accessLogSampleEvery: opts.accessLogSampleEvery } : {}),
    ...(opts.trustProxy !== undefined ? { trustProxy: opts.trustProxy } : {}),
  };
  const logger = createLogger({
    service: 'gateway-test',
    level: opts.logs ? (opts.logLevel ?? 'info') : 'silent',
    ...(opts.logs ? { destination: opts.logs } : {}),
  });
  const app = await buildApp({
    config,
    logger,
    db: db.db,
    redis: redis.redis,
    execution: opts.execution ?? new StubExecution(),
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.registry ? { registry: opts.registry } : {}),
    ...(opts.audit ? { audit: opts.audit } : {}),
    ...(opts.decisions ? { decisions: opts.decisions } : {}),
    ...(opts.governance ? { governance: opts.governance } : {}),
    ...(opts.impact ? { impact: opts.impact } : {}),
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
    ...(opts.runnable ? { runnable: opts.runnable } : {}),
  });
  await app.ready();
  return app;
}

/** Creates an org with an admin (`admin` unless named) and returns the admin key. */
export async function newOrg(db: TestDatabase, orgId: string, adminUserId = 'admin'): Promise<string> {
  return (await createOrgWithAdmin(db.db, orgId, adminUserId)).key;
}

/** Signs an HS256 token for `sub` in `org`, valid for 5 minutes unless overridden. */
export async function signToken(
  claims: { sub?: string; org?: string; [k: string]: unknown },
  opts: { secret?: string; issuer?: string; audience?: string; expiresIn?: string | number } = {},
): Promise<string> {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (opts.issuer !== '') jwt.setIssuer(opts.issuer ?? JWT_ISSUER);
  if (opts.audience !== '') jwt.setAudience(opts.audience ?? JWT_AUDIENCE);
  if (claims.sub !== undefined) jwt.setSubject(claims.sub);
  jwt.setExpirationTime(opts.expiresIn ?? '5m');
  return jwt.sign(new TextEncoder().encode(opts.secret ?? JWT_SECRET));
}

/** Headers carrying an API key. */
export const withKey = (key: string): Record<string, string> => ({ 'x-api-key': key });
/** Headers carrying a bearer token. */
export const withToken = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/**
 * Gives `userId` the role in the admin's org, then has that user (signing in with a JWT) create
 * a key with `scopes`; returns the key.
 */
export async function memberKey(
  app: FastifyInstance,
  adminKey: string,
  org: string,
  userId: string,
  role: string,
  scopes: string[],
): Promise<string> {
  const put = await app.inject({
    method: 'PUT',
    url: `/users/${encodeURIComponent(userId)}`,
    headers: withKey(adminKey),
    payload: { role },
  });
  if (put.statusCode >= 300) throw new Error(`PUT /users failed: ${put.statusCode} ${put.body}`);
  const token = await signToken({ sub: userId, org });
  const created = await app.inject({
    method: 'POST',
    url: '/apikeys',
    headers: withToken(token),
    payload: { name: `${userId} key`, scopes },
  });
  if (created.statusCode !== 201) throw new Error(`POST /apikeys failed: ${created.statusCode} ${created.body}`);
  return created.json().key as string;
}

/** Asserts-free view of a problem answer for compact expectations. */
export function problem(res: LightMyRequestResponse): { status: number; code: string; detail: string; contentType: string | undefined } {
  const body = res.json<{ status: number; code: string; detail: string }>();
  return { status: res.statusCode, code: body.code, detail: body.detail, contentType: res.headers['content-type'] as string | undefined };
}
