import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  companionDatabaseUrl,
  ConfigError,
  DatabaseConfig,
  LogConfig,
  loadConfig,
  NatsConfig,
  natsServers,
  OpsConfig,
  RedisConfig,
  serviceConfig,
} from '../src/config.js';

const BaseConfig = serviceConfig([LogConfig, NatsConfig, RedisConfig, DatabaseConfig], {});

describe('loadConfig', () => {
  it('applies the documented defaults (docs/configuration.md) to an empty environment', () => {
    expect(loadConfig(BaseConfig, {})).toEqual({
      NATS_URL: 'nats://127.0.0.1:4222',
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_COMMAND_TIMEOUT_MS: 1000,
      REDIS_CONNECT_TIMEOUT_MS: 2000,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/policy_service',
      DB_POOL_MAX: 10,
      DB_STATEMENT_TIMEOUT_MS: 5000,
      DB_CONNECT_TIMEOUT_MS: 2000,
      NATS_SUBJECT_PREFIX: 'arbiter',
      EVENTS_STREAM_REPLICAS: 1,
      NATS_PING_INTERVAL_MS: 10_000,
      NATS_CONNECT_TIMEOUT_MS: 3000,
      LOG_LEVEL: 'info',
    });
  });

  it("takes a NATS cluster's servers as a comma-separated NATS_URL, and the events stream's replicas", () => {
    const config = loadConfig(NatsConfig, {
      NATS_URL: 'nats://nats-0:4222, nats://nats-1:4222 ,tls://nats-2.example:4222',
      EVENTS_STREAM_REPLICAS: '3',
    });
    expect(config.NATS_URL).toBe('nats://nats-0:4222,nats://nats-1:4222,tls://nats-2.example:4222');
    expect(natsServers(config.NATS_URL)).toEqual(['nats://nats-0:4222', 'nats://nats-1:4222', 'tls://nats-2.example:4222']);
    expect(config.EVENTS_STREAM_REPLICAS).toBe(3);
  });

  it('refuses a NATS_URL list with a bad or empty entry, and a replica count JetStream does not allow', () => {
    for (const NATS_URL of ['nats://a:4222,not a url', 'nats://a:4222,,nats://b:4222', 'nats://a:4222,']) {
      expect(() => loadConfig(NatsConfig, { NATS_URL }), NATS_URL).toThrow(/NATS_URL: .*is not a URL/);
    }
    for (const EVENTS_STREAM_REPLICAS of ['0', '6', 'three', '1.5']) {
      expect(() => loadConfig(NatsConfig, { EVENTS_STREAM_REPLICAS }), EVENTS_STREAM_REPLICAS).toThrow(/EVENTS_STREAM_REPLICAS/);
    }
  });

  it('reads values, coerces numbers of an extended schema and treats empty variables as unset', () => {
    const schema = BaseConfig.extend({ POOL: z.coerce.number().int().positive().default(2) });
    const config = loadConfig(schema, { NATS_URL: 'nats://nats.example:4222', POOL: '8', LOG_LEVEL: '', OTHER: 'x' });
    expect(config.NATS_URL).toBe('nats://nats.example:4222');
    expect(config.POOL).toBe(8);
    expect(config.LOG_LEVEL).toBe('info');
  });

  it('names every bad variable in one error', () => {
    const schema = BaseConfig.extend({ POOL: z.coerce.number().int().positive() });
    const env = { NATS_URL: 'not a url', POOL: 'many', LOG_LEVEL: 'loud', NATS_SUBJECT_PREFIX: 'a.*' };
    let error: unknown;
    try {
      loadConfig(schema, env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const configError = error as ConfigError;
    expect(configError.name).toBe('ConfigError');
    expect(configError.variables.sort()).toEqual(['LOG_LEVEL', 'NATS_SUBJECT_PREFIX', 'NATS_URL', 'POOL']);
    expect(configError.message).toMatch(/^invalid configuration: /);
    for (const v of configError.variables) expect(configError.message).toContain(`${v}: `);
    expect(configError.message).not.toContain('\n');
    expect(configError.cause).toBeInstanceOf(z.ZodError);
  });

  it("composes parts and a service's own variables into one schema, in order", () => {
    const schema = serviceConfig([LogConfig, OpsConfig], { SVC_THREADS: z.coerce.number().int().positive().default(2) });
    expect(Object.keys(schema.shape)).toEqual(['LOG_LEVEL', 'OPS_PORT', 'OPS_HOST', 'SVC_THREADS']);
    expect(loadConfig(schema, { OPS_PORT: '9100' })).toEqual({ LOG_LEVEL: 'info', OPS_PORT: 9100, OPS_HOST: '0.0.0.0', SVC_THREADS: 2 });
  });

  it('refuses a variable declared by two parts or by a part and the service', () => {
    expect(() => serviceConfig([LogConfig, LogConfig], {})).toThrow('configuration variable `LOG_LEVEL` is declared twice');
    expect(() => serviceConfig([OpsConfig], { OPS_PORT: z.string() })).toThrow('configuration variable `OPS_PORT` is declared twice');
  });
});

describe('companionDatabaseUrl', () => {
  it('names a database beside the main one, keeping server, credentials and parameters', () => {
    expect(companionDatabaseUrl('postgres://postgres@127.0.0.1:5432/policy_service', 'audit')).toBe(
      'postgres://postgres@127.0.0.1:5432/policy_service_audit',
    );
    expect(companionDatabaseUrl('postgres://arbiter:s%40cret@db.internal:6432/stack_b?sslmode=require', 'governance')).toBe(
      'postgres://arbiter:s%40cret@db.internal:6432/stack_b_governance?sslmode=require',
    );
  });

  it('refuses a URL that names no database', () => {
    expect(() => companionDatabaseUrl('postgres://postgres@127.0.0.1:5432/', 'audit')).toThrow('names no database');
  });
});
