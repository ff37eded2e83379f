import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import {
  deleteRedisKeys,
  hostPort,
  eventually,
  probe,
  randomPrefix,
  startNatsServer,
  startRedisServer,
  TcpProxy,
  testServers,
} from '../src/index.js';

describe('eventually', () => {
  it('returns the first value a check gives without throwing', async () => {
    let calls = 0;
    const value = await eventually(() => {
      calls++;
      if (calls < 3) throw new Error('not yet');
      return calls;
    });
    expect(value).toBe(3);
  });

  it('rethrows the last error once the deadline has passed', async () => {
    let calls = 0;
    await expect(
      eventually(
        () => {
          calls++;
          throw new Error(`attempt ${calls}`);
        },
        { timeoutMs: 100, intervalMs: 10 },
      ),
    ).rejects.toThrow(/^attempt \d+$/);
    expect(calls).toBeGreaterThanOrEqual(2);
  });
});

describe('randomPrefix', () => {
  it('is the label and 12 hex digits, new each time', () => {
    const a = randomPrefix('reg');
    expect(a).toMatch(/^reg_[0-9a-f]{12}$/);
    expect(randomPrefix('reg')).not.toBe(a);
  });
});

describe('deleteRedisKeys', () => {
  it('deletes the keys under the prefix and no others', async () => {
    const url = testServers().redis;
    const mine = `${randomPrefix()}:`;
    const other = `${randomPrefix()}:`;
    const redis = new Redis(url);
    try {
      await redis.set(`${mine}a`, '1');
      await redis.set(`${mine}b:c`, '1');
      await redis.set(`${other}a`, '1');
      await deleteRedisKeys(url, mine);
      expect(await redis.exists(`${mine}a`, `${mine}b:c`, `${other}a`)).toBe(1);
    } finally {
      await redis.del(`${other}a`);
      redis.disconnect();
    }
  });
});

describe('own servers and the TCP proxy', () => {
  it('starts a redis-server of its own, freezes and thaws it, and stops it', async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url, { commandTimeout: 300, maxRetriesPerRequest: 0 });
    try {
      // The short command timeout is for the frozen ping; on a loaded machine a first ping may miss it too.
      expect(await eventually(() => redis.ping())).toBe('PONG');
      server.freeze();
      await expect(redis.ping()).rejects.toThrow('Command timed out');
      server.thaw();
      expect(await eventually(() => redis.ping())).toBe('PONG');
    } finally {
      redis.disconnect();
      await server.stop();
    }
    expect(await probe('redis', server.url)).toBe(false);
  });

  it('kills a server of its own like a crash and starts it again on the same port', async () => {
    const server = await startRedisServer();
    try {
      const pid = server.process?.pid;
      await server.kill();
      expect(server.process).toBeUndefined();
      expect(await probe('redis', server.url)).toBe(false);
      await server.start();
      expect(server.process?.pid).not.toBe(pid);
      const redis = new Redis(server.url);
      try {
        expect(await redis.ping()).toBe('PONG');
      } finally {
        redis.disconnect();
      }
    } finally {
      await server.stop();
    }
  });

  it('starts a nats-server with JetStream of its own', async () => {
    const server = await startNatsServer();
    try {
      const info = await new Promise<string>((resolve, reject) => {
        const s = connect(server.port, '127.0.0.1');
        s.once('data', (d) => {
          s.destroy();
          resolve(d.toString());
        });
        s.once('error', reject);
      });
      expect(JSON.parse(info.replace(/^INFO /, ''))).toMatchObject({ port: server.port, jetstream: true });
    } finally {
      await server.stop();
    }
  });

  it('freezes a real server for its clients (connections open, nothing answered) and gives it back', async () => {
    const proxy = await TcpProxy.start(hostPort('redis', testServers().redis));
    const frozen = new Redis(`redis://127.0.0.1:${proxy.port}`, { commandTimeout: 300, maxRetriesPerRequest: 0 });
    try {
      expect(await eventually(() => frozen.ping())).toBe('PONG');
      proxy.freeze();
      await expect(frozen.ping()).rejects.toThrow(/timed out/i);
      await proxy.restore();
      const fresh = new Redis(`redis://127.0.0.1:${proxy.port}`);
      try {
        expect(await fresh.ping()).toBe('PONG');
      } finally {
        fresh.disconnect();
      }
    } finally {
      frozen.disconnect();
      await proxy.cut();
    }
  });

  it('cuts a client off a real server and gives it back', async () => {
    const proxy = await TcpProxy.start(hostPort('redis', testServers().redis));
    try {
      expect(await probe('redis', `redis://127.0.0.1:${proxy.port}`)).toBe(true);
      await proxy.cut();
      expect(await probe('redis', `redis://127.0.0.1:${proxy.port}`)).toBe(false);
      await proxy.restore();
      const redis = new Redis(`redis://127.0.0.1:${proxy.port}`);
      try {
        expect(await redis.ping()).toBe('PONG');
      } finally {
        redis.disconnect();
      }
    } finally {
      await proxy.cut();
    }
  });
});
