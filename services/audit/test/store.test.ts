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
      { previousWritten: firstWrites, previousSettled: settle, written: () => undefined },
    );
    first.endWrites();
    first.endCommit();
    await Promise.all([settle, second]);
    expect(await t.stored('store-twice')).toBe(3);
  });
});
