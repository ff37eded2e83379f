import { createLogger } from '@arbiter/service-kit';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { RuleIndex } from '../src/answers/rule-index.js';
import { dropKeys, randomPrefix, REDIS_URL, silentLogger } from './helpers.js';

const prefix = randomPrefix();
const redis = new Redis(REDIS_URL);
const index = new RuleIndex(redis, prefix, silentLogger(), 60_000);

afterAll(async () => {
  await index.close();
  await dropKeys(prefix);
  redis.disconnect();
});

describe('RuleIndex', () => {
  it('namespaces keys by the prefix', () => {
    expect(index.key('abc')).toBe(`${prefix}:rule:abc`);
    expect(index.setKey).toBe(`${prefix}:rules`);
  });

  it('writes nothing until flushed, then the record and the set', async () => {
    index.note('h1', 120, true);
    index.note('h1', 120, false);
    index.note('h2', 7, true);
    expect(await index.get('h1')).toBeNull();
    await index.flush();
    const h1 = await index.get('h1');
    expect(h1).toMatchObject({ hash: 'h1', size: 120, runs: 2, compiles: 1 });
    expect(Date.parse(h1?.firstSeenAt ?? '')).not.toBeNaN();
    expect((h1?.lastSeenAt ?? '') >= (h1?.firstSeenAt ?? '')).toBe(true);
    expect((await redis.zrange(index.setKey, 0, -1)).sort()).toEqual(['h1', 'h2']);
  });

  it('adds later runs and keeps the first-seen time', async () => {
    const before = await index.get('h1');
    index.note('h1', 120, false);
    await index.flush();
    const after = await index.get('h1');
    expect(after).toMatchObject({ runs: 3, compiles: 1, firstSeenAt: before?.firstSeenAt });
  });

  it('gives every record and the set a TTL, renewed by each write', async () => {
    const ttl = await redis.ttl(index.key('h1'));
    expect(ttl).toBeGreaterThan(86_000);
    expect(ttl).toBeLessThanOrEqual(86_400);
    expect(await redis.ttl(index.setKey)).toBeGreaterThan(86_000);
  });

  it('keeps at most maxRules records: N distinct rules do not make N keys', async () => {
    const own = `${prefix}_bounded`;
    const bounded = new RuleIndex(redis, own, silentLogger(), 60_000, { maxRules: 5, ttlSeconds: 60 });
    try {
      for (let i = 0; i < 40; i++) {
        bounded.note(`r${i}`, 10, true);
        if (i % 10 === 9) await bounded.flush();
      }
      const keys = await redis.keys(`${own}:rule:*`);
      expect(keys).toHaveLength(5);
      expect(await redis.zcard(bounded.setKey)).toBe(5);
      // the ones kept are from the last write (the most recently run)
      const kept = await redis.zrange(bounded.setKey, 0, -1);
      expect(kept.every((h) => Number(h.slice(1)) >= 30)).toBe(true);
      for (const key of keys) expect(await redis.ttl(key)).toBeGreaterThan(0);
    } finally {
      await bounded.close();
      await dropKeys(own);
    }
  });

  it('counts at most maxRules distinct rules in memory between writes', async () => {
    const own = `${prefix}_memory`;
    const bounded = new RuleIndex(redis, own, silentLogger(), 60_000, { maxRules: 3, ttlSeconds: 60 });
    try {
      for (let i = 0; i < 10; i++) bounded.note(`m${i}`, 1, true);
      await bounded.flush();
      expect(await redis.zcard(bounded.setKey)).toBe(3);
    } finally {
      await bounded.close();
      await dropKeys(own);
    }
  });

  it('logs and drops counts when Redis refuses the write', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ service: 't', destination: { write: (s: string) => void lines.push(JSON.parse(s)) } });
    const broken = new Redis(REDIS_URL);
    const brokenIndex = new RuleIndex(broken, prefix, logger, 60_000);
    await broken.set(`${prefix}:rule:h3`, 'not a hash');
    brokenIndex.note('h3', 1, true);
    await brokenIndex.flush();
    expect(lines.find((l) => l.msg === 'rule index write failed: counts dropped')).toMatchObject({ rules: 1 });
    await brokenIndex.close();
    broken.disconnect();
  });
});
