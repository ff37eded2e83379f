/**
 * The consumer's store (src/store.ts) on the real database, given its turn by hand: a batch's
 * INSERTs wait for the batch before to have written, and its rows become visible only once the
 * batch before has committed; two batches in line holding the same event store it once.
 */
import { createRegistry } from '@arbiter/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Turn } from '../src/consumer.js';
import { DecisionIngestMetrics } from '../src/decision-metrics.js';
import type { Audit } from '../src/service.js';
import { batchStore } from '../src/store.js';
import { event, startTestEnv, type TestEnv } from './support.js';

let t: TestEnv;
let audit: Audit;

beforeAll(async () => {
  t = await startTestEnv();
  audit = await t.startAudit();
});
afterAll(async () => t?.close());

const store = () =>
  batchStore({
    db: audit.db,
    partitions: audit.partitions,
    decisionPartitions: audit.decisionPartitions,
    retentionDays: 0,
    decisionRetentionDays: 0,
    decisionMetrics: new DecisionIngestMetrics(createRegistry('audit')),
  });

/** A turn whose batch before is still under way, with the means to end its writes and its commit. */
function heldTurn() {
  let endWrites!: () => void;
  let endCommit!: () => void;
  let written = false;
  const turn: Turn = {
    previousWritten: new Promise<void>((resolve) => (endWrites = resolve)),
    previousSettled: new Promise<void>((resolve) => (endCommit = resolve)),
    written: () => (written = true),
  };
  return { turn, endWrites, endCommit, written: () => written };
}

/** Transactions of the test's database open and waiting (each store holds one while in line). */
async function waitingTransactions(): Promise<number> {
  const { rows } = (await t.sql.raw(`select count(*) as n from pg_stat_activity where datname = ? and state = 'idle in transaction'`, [
    t.database,
  ])) as { rows: { n: string }[] };
  return Number(rows[0]!.n);
}

describe('the batch store', () => {
  it('writes once the batch before has written, and makes its rows visible only after that batch committed', async () => {
    const events = [event('edited', { orgId: 'store-order' }), event('created', { orgId: 'store-order' })];
    const held = heldTurn();
    let done = false;
    const storing = store()({ trail: events, decisions: [] }, held.turn).then(() => (done = true));
    // Its transaction is open and waits for the batch before to write.
    await expect.poll(waitingTransactions, { timeout: 10_000 }).toBe(1);
    expect(held.written()).toBe(false);
    held.endWrites();
    // Written, not committed: nothing visible until the batch before has committed.
    await expect.poll(held.written, { timeout: 10_000 }).toBe(true);
    await expect.poll(waitingTransactions, { timeout: 10_000 }).toBe(1);
    expect(await t.stored('store-order')).toBe(0);
    expect(done).toBe(false);
    held.endCommit();
    await storing;
    expect(await t.stored('store-order')).toBe(2);
  });

  it('stores once an event held by two batches in line, neither waiting for the other for ever', async () => {
    const shared = event('edited', { orgId: 'store-twice' });
    const first = heldTurn();
    let written!: () => void;
    const firstWrites = new Promise<void>((resolve) => (written = resolve));
    const settle = store()({ trail: [event('created', { orgId: 'store-twice' }), shared], decisions: [] }, { ...first.turn, written });
    const second = store()(
      { trail: [shared, event('deleted', { orgId: 'store-twice' })], decisions: [] },
      { previousWritten: firstWrites, previousSettled: settle.then(() => undefined), written: () => undefined },
    );
    first.endWrites();
    first.endCommit();
    await Promise.all([settle, second]);
    expect(await t.stored('store-twice')).toBe(3);
  });
});

describe('rows the database refuses', () => {
  const free: Turn = { previousWritten: Promise.resolve(), previousSettled: Promise.resolve(), written: () => undefined };

  it('stores the other rows of the batch and names the refused one (a text PostgreSQL cannot hold)', async () => {
    const good = [event('edited', { orgId: 'store-good-a' }), event('created', { orgId: 'store-good-b' })];
    const bad = event('edited', { orgId: 'store-poison', details: { note: 'nul \u0000 inside' } });
    const outcome = await store()({ trail: [good[0]!, bad, good[1]!], decisions: [] }, free);
    expect(outcome?.unstorable.map((u) => u.item)).toEqual([bad]);
    expect(await t.stored('store-good-a')).toBe(1);
    expect(await t.stored('store-good-b')).toBe(1);
    expect(await t.stored('store-poison')).toBe(0);
  });

  it('makes no partition for a month a message names: an event far from now is refused, the rest stored', async () => {
    const { listPartitions } = await import('../src/repositories/partitions.js');
    const before = await listPartitions(audit.db);
    const old = Array.from({ length: 24 }, (_, i) =>
      event('executed', { orgId: 'store-months', at: new Date(Date.UTC(2000, i, 15)).toISOString() }),
    );
    const ancient = event('executed', { orgId: 'store-months', at: '0001-01-01T00:00:00.000Z' });
    const now = event('executed', { orgId: 'store-months-now' });
    const outcome = await store()({ trail: [...old, ancient, now], decisions: [] }, free);
    expect(outcome?.unstorable.map((u) => u.item)).toEqual([...old, ancient]);
    expect(await listPartitions(audit.db)).toEqual(before);
    expect(await t.stored('store-months-now')).toBe(1);
    expect(await t.stored('store-months')).toBe(0);
  });
});
