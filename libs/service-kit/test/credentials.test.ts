import { startRedisServer, type OwnServer } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, NatsConfig, RedisConfig } from '../src/config.js';
import { redactCredentials } from '../src/logger.js';
import { natsConnectionOptions, natsSecurityOf, natsTuningOf } from '../src/nats.js';
import { connectRedis, redisOptionsOf } from '../src/redis.js';
import { memoryLogger } from './helpers.js';

describe('NATS credentials and TLS from configuration', () => {
  it('passes the user, password and TLS files to the connection, and nothing when unset', () => {
    const config = loadConfig(NatsConfig, {
      NATS_USER: 'registry',
      NATS_PASSWORD: 's3cret',
      NATS_TLS_CA_FILE: '/etc/arbiter/ca.pem',
    });
    const options = natsConnectionOptions(config.NATS_URL, 'registry', natsSecurityOf(config));
    expect(options).toMatchObject({ user: 'registry', pass: 's3cret', tls: { caFile: '/etc/arbiter/ca.pem' } });
    const tuned = natsConnectionOptions(
      config.NATS_URL,
      'registry',
      {},
      natsTuningOf(loadConfig(NatsConfig, { NATS_PING_INTERVAL_MS: '2500', NATS_CONNECT_TIMEOUT_MS: '1500' })),
    );
    expect(tuned).toMatchObject({ pingInterval: 2500, maxPingOut: 2, timeout: 1500 });
    const plain = natsConnectionOptions('nats://127.0.0.1:4222', 'x', natsSecurityOf(loadConfig(NatsConfig, {})));
    expect(plain).not.toHaveProperty('user');
    expect(plain).not.toHaveProperty('tls');
    expect(natsSecurityOf(loadConfig(NatsConfig, { NATS_TLS: 'true' }))).toEqual({ tls: {} });
  });

  it('refuses a bad NATS_TLS value', () => {
    expect(() => loadConfig(NatsConfig, { NATS_TLS: 'yes' })).toThrow(/NATS_TLS/);
  });

  it('hides the password of a connection address', () => {
    expect(redactCredentials('nats://gateway:hunter2@nats:4222')).toBe('nats://gateway:[REDACTED]@nats:4222');
    expect(redactCredentials('redis://:hunter2@redis:6379/0')).toBe('redis://:[REDACTED]@redis:6379/0');
    expect(redactCredentials('postgres://postgres@db/x')).toBe('postgres://postgres@db/x');
  });
});

describe('Redis with a password (own redis-server with requirepass)', () => {
  let server: OwnServer;
  let port: number;
  const password = 'pw-for-the-test';

  beforeAll(async () => {
    server = await startRedisServer(['--requirepass', password]);
    port = server.port;
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('authenticates with the password in REDIS_URL and is refused without it', async () => {
    const config = loadConfig(RedisConfig, { REDIS_URL: `redis://:${password}@127.0.0.1:${port}` });
    const redis = await connectRedis(config.REDIS_URL, memoryLogger().logger, redisOptionsOf(config));
    try {
      expect(await redis.set('k', 'v')).toBe('OK');
    } finally {
      redis.disconnect();
    }
    // Without the password the connection's ready check is refused (NOAUTH) and the client gives up on it.
    const anonymous = connectRedis(`redis://127.0.0.1:${port}`, memoryLogger().logger).then(async (r) => {
      try {
        return await r.get('k');
      } finally {
        r.disconnect();
      }
    });
    await expect(anonymous).rejects.toThrow(/NOAUTH|Connection is closed/);
  });
});
