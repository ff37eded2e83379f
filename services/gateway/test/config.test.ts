import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '@arbiter/service-kit';
import { appSettingsOf, GatewayConfig } from '../src/config.js';

/** The app settings the gateway derives from `env`, plus the configuration itself. */
function readConfig(env: NodeJS.ProcessEnv) {
  const config = loadConfig(GatewayConfig, env);
  return { ...config, ...appSettingsOf(config) };
}

describe('the gateway configuration', () => {
  it('applies the documented defaults', () => {
    const c = readConfig({});
    expect(c).toMatchObject({
      PORT: 8080,
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/policy_service',
      REDIS_URL: 'redis://127.0.0.1:6379',
      NATS_URL: 'nats://127.0.0.1:4222',
      NATS_SUBJECT_PREFIX: 'arbiter',
      POLICY_BOOTSTRAP_ORG: 'default',
      OPS_PORT: 0,
      jwt: { orgClaim: 'org' },
      limits: { bodyLimitBytes: 1048576, bodyTimeoutMs: 30_000, rateLimitMax: 6000, rateLimitWindowMs: 60_000, authFailuresMax: 20 },
      trustProxy: false,
      apiKeyCacheTtlSeconds: 60,
      redisKeyPrefix: 'arbiter:gateway:',
      ENGINE_TIMEOUT_MS: 2000,
    });
    expect(c.POLICY_BOOTSTRAP_ADMIN_KEY).toBeUndefined();
    expect(c.jwt.secret).toBeUndefined();
  });

  it('reads every variable; a numeric window is milliseconds; empty means unset', () => {
    const c = readConfig({
      PORT: '9000',
      AUTH_JWT_SECRET: 's'.repeat(32),
      AUTH_ISSUER: 'https://idp',
      AUTH_AUDIENCE: 'arbiter',
      AUTH_ORG_CLAIM: 'tenant',
      AUTH_JWKS_URL: '',
      POLICY_BOOTSTRAP_ADMIN_KEY: 'k'.repeat(40),
      POLICY_BOOTSTRAP_ORG: 'acme',
      BODY_LIMIT_BYTES: '2048',
      BODY_TIMEOUT_MS: '1500',
      RATE_LIMIT_MAX: '5',
      RATE_LIMIT_WINDOW: '1000',
    });
    expect(c).toMatchObject({
      PORT: 9000,
      jwt: { secret: 's'.repeat(32), issuer: 'https://idp', audience: 'arbiter', orgClaim: 'tenant' },
      POLICY_BOOTSTRAP_ADMIN_KEY: 'k'.repeat(40),
      POLICY_BOOTSTRAP_ORG: 'acme',
      limits: { bodyLimitBytes: 2048, bodyTimeoutMs: 1500, rateLimitMax: 5, rateLimitWindowMs: 1000 },
    });
    expect(c.jwt.jwksUrl).toBeUndefined();
  });

  it('keys Redis under the subject prefix unless REDIS_KEY_PREFIX says otherwise, so stacks side by side share no keys', () => {
    expect(readConfig({ NATS_SUBJECT_PREFIX: 'stack_b' }).redisKeyPrefix).toBe('stack_b:gateway:');
    expect(readConfig({ NATS_SUBJECT_PREFIX: 'stack_b', REDIS_KEY_PREFIX: 'mine:' }).redisKeyPrefix).toBe('mine:');
  });

  it.each([
    ['true', true],
    ['false', false],
    ['2', 2],
    ['10.0.0.0/8, 127.0.0.1', ['10.0.0.0/8', '127.0.0.1']],
  ])('reads TRUST_PROXY %s', (value, expected) => {
    expect(readConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each([
    ['2 minutes', 120_000],
    ['1h', 3_600_000],
    ['250', 250],
  ])('reads RATE_LIMIT_WINDOW %s as %i ms', (value, ms) => {
    expect(readConfig({ RATE_LIMIT_WINDOW: value }).limits.rateLimitWindowMs).toBe(ms);
  });

  it.each([
    ['PORT', 'eighty'],
    ['AUTH_JWT_SECRET', 'too-short'],
    ['POLICY_BOOTSTRAP_ADMIN_KEY', 'short'],
    ['POLICY_BOOTSTRAP_ORG', 'Not A Slug'],
    ['RATE_LIMIT_MAX', '0'],
    ['RATE_LIMIT_WINDOW', 'a while'],
    ['AUTH_FAILURES_MAX', '0'],
    ['RATE_LIMIT_WINDOW', '0'],
  ])('refuses a bad %s, naming it', (name, value) => {
    expect(() => readConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => readConfig({ [name]: value })).toThrow(name);
  });
});
