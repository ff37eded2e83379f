import { dropDatabases, testServers, withDatabase } from '@arbiter/test-kit';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { connectBus, defineEndpoint } from '../src/bus.js';
import { DatabaseConfig, LogConfig, NatsConfig, serviceConfig } from '../src/config.js';
import { startService, Startup } from '../src/lifecycle/index.js';
import { inProcessKit } from '../src/run-service.js';
import { memoryLogger, randomPrefix } from './helpers.js';

const { postgres: PG_URL, nats: NATS_URL } = testServers();
const Config = serviceConfig([LogConfig, NatsConfig, DatabaseConfig], {});

/** A kit whose log lines are kept, with the given configuration. */
function kitOf(env: Record<string, string> = {}) {
  const { logger, lines } = memoryLogger('svc');
  return { kit: inProcessKit('svc', Config.parse(env), { logger }), lines };
}

describe('Startup', () => {
  it('closes what was opened last first, once, and keeps closing past a closer that throws', async () => {
    const { kit, lines } = kitOf();
    const startup = new Startup(kit);
    const closed: string[] = [];
    startup.add('a', 'a', (v) => closed.push(v));
    startup.add('b', 'b', () => {
      throw new Error('b is stuck');
    });
    startup.add('c', 'c', async (v) => {
      await Promise.resolve();
      closed.push(v);
    });
    const first = startup.close();
    const second = startup.close();
    expect(second).toBe(first);
    await first;
    expect(closed).toEqual(['c', 'a']);
    expect(lines.filter((l) => l.msg === 'closing the b failed')).toHaveLength(1);
  });
});

describe('startService', () => {
  it('closes what a failed start had opened, last first, and rethrows its error', async () => {
    const { kit, lines } = kitOf();
    const closed: string[] = [];
    const failure = new Error('the migration failed');
    await expect(
      startService(kit, async (s) => {
        s.add('pool', 'pool', (v) => closed.push(v));
        s.add('bus', 'bus', (v) => closed.push(v));
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(closed).toEqual(['bus', 'pool']);
    expect(lines.some((l) => l.msg === 'svc service started')).toBe(false);
  });

  it('opens a database (created and migrated) and a bus, serves, and at close stops serving before the rest closes', async () => {
    const prefix = randomPrefix('test_startup');
    const database = prefix.replace('test_startup_', 'arbiter_test_startup_');
    const { kit, lines } = kitOf({ NATS_URL, NATS_SUBJECT_PREFIX: prefix, DATABASE_URL: withDatabase(PG_URL, database) });
    const order: string[] = [];
    const service = await startService(kit, async (s) => {
      const db = await s.database(kit.config.DATABASE_URL, async (d) => {
        await d.schema.createTable('greetings', (t) => t.text('word'));
        await d('greetings').insert({ word: 'hello' });
      });
      s.add('probe', db, () => order.push('probe'));
      const bus = await s.bus();
      const greet = defineEndpoint({
        subject: 'svc.greet',
        request: z.object({}),
        handler: async () => (await db('greetings').first<{ word: string }>('word'))!,
      });
      await s.serve(bus, { name: 'svc', version: '0.0.0', description: 'greets', endpoints: { greet } });
      s.add('serving probe', bus, (b) => order.push(b.connected() ? 'after serve: bus still up' : 'after serve: bus closed'));
      return { bus, db, ready: () => bus.connected() };
    });
    const client = await connectBus({ url: NATS_URL, prefix, name: 'startup-test-client', logger: kit.logger });
    try {
      expect(lines.find((l) => l.msg === 'svc service started')).toMatchObject({ prefix });
      expect(service.ready()).toBe(true);
      expect(await client.request('svc.greet', {}, z.object({ word: z.string() }))).toEqual({ word: 'hello' });
      await service.close();
      // Closers added after serve run before it; then the bus closes, then the pool (the probe before it).
      expect(order).toEqual(['after serve: bus still up', 'probe']);
      expect(service.bus.connected()).toBe(false);
      await expect(service.db.raw('select 1')).rejects.toThrow();
    } finally {
      await client.close();
      await dropDatabases(PG_URL, [database]);
    }
  });
});
