import { isArbiterError } from '@arbiter/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { FairQueue, type JobOutcome } from '../src/fair-queue.js';
import { rejection } from './helpers.js';

/** A task the test finishes by hand; `order` records the start order. */
function manual(order: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<string>((resolve) => (finish = () => resolve(name)));
  return { start: () => (order.push(name), done), finish: () => finish() };
}

/** A clock the test moves. */
function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

let queues: FairQueue[] = [];
afterEach(() => {
  for (const q of queues) q.close();
  queues = [];
});
function queue(opts: Partial<ConstructorParameters<typeof FairQueue>[0]> = {}) {
  const q = new FairQueue({ slots: 1, perKeyMax: 100, maxQueued: 1000, maxWaitMs: 60_000, ...opts });
  queues.push(q);
  return q;
}

describe('FairQueue', () => {
  it('hands out at most `slots` tasks and takes callers in turn, not in arrival order', async () => {
    const order: string[] = [];
    // A clock that stands still: no task costs worker time, so the turns are plain round robin.
    const q = queue({ slots: 1, now: clock().now });
    const a = [1, 2, 3, 4].map((i) => manual(order, `a${i}`));
    const b = [1, 2].map((i) => manual(order, `b${i}`));
    const results = [...a.map((t) => q.submit('a', t.start)), ...b.map((t) => q.submit('b', t.start))];
    expect(order).toEqual(['a1']);
    expect(q.stats()).toEqual({ queued: 5, running: 1, callers: 2 });
    const byName = new Map([...a, ...b].map((t, i) => [i < 4 ? `a${i + 1}` : `b${i - 3}`, t]));
    for (let n = 0; n < 6; n++) {
      byName.get(order[order.length - 1])!.finish();
      await tick();
    }
    await Promise.all(results);
    // b's first task goes right after the running a1, though three more of a's came first.
    expect(order).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'a4']);
    expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0 });
  });

  it('gives a caller whose tasks take long fewer turns (deficit round robin by worker time)', async () => {
    const order: string[] = [];
    const c = clock();
    const q = queue({ slots: 1, quantumMs: 1, now: c.now });
    const slow = [1, 2, 3].map((i) => manual(order, `slow${i}`));
    const fast = [1, 2, 3, 4, 5].map((i) => manual(order, `fast${i}`));
    const all = [...slow.map((t) => q.submit('slow', t.start)), ...fast.map((t) => q.submit('fast', t.start))];
    const byName = new Map([...slow, ...fast].map((t, i) => [i < 3 ? `slow${i + 1}` : `fast${i - 2}`, t]));
    // Each slow task takes 3 ms of worker time, each fast one nothing.
    for (let n = 0; n < 8; n++) {
      const running = order[order.length - 1];
      if (running.startsWith('slow')) c.advance(3);
      byName.get(running)!.finish();
      await tick();
    }
    await Promise.all(all);
    // slow1 cost 3 ms: slow skips turns until it has earned its deficit back (1 ms a turn).
    expect(order).toEqual(['slow1', 'fast1', 'fast2', 'fast3', 'fast4', 'slow2', 'fast5', 'slow3']);
  });

  it('refuses a caller past perKeyMax with rate_limited (429), others still admitted', async () => {
    const order: string[] = [];
    const q = queue({ slots: 1, perKeyMax: 2 });
    const t = [1, 2, 3].map((i) => manual(order, `a${i}`));
    const first = q.submit('a', t[0].start);
    const second = q.submit('a', t[1].start);
    const err = await rejection(q.submit('a', t[2].start));
    expect([err.code, err.status]).toEqual(['rate_limited', 429]);
    const other = manual(order, 'b1');
    const admitted = q.submit('b', other.start);
    t[0].finish();
    other.finish();
    t[1].finish();
    expect(await Promise.all([first, second, admitted])).toEqual(['a1', 'a2', 'b1']);
  });

  it('refuses with dependency_unavailable (503) when the queue is full', async () => {
    const order: string[] = [];
    const q = queue({ slots: 1, maxQueued: 1 });
    const running = manual(order, 'x');
    const waiting = manual(order, 'y');
    const p1 = q.submit('a', running.start);
    const p2 = q.submit('b', waiting.start);
    const err = await rejection(q.submit('c', manual(order, 'z').start));
    expect([err.code, err.status, err.message]).toEqual(['dependency_unavailable', 503, 'the evaluation queue is full; try again shortly']);
    running.finish();
    await tick();
    waiting.finish();
    await Promise.all([p1, p2]);
  });

  it('passes a task failure through and keeps serving', async () => {
    const q = queue();
    await expect(q.submit('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      q.submit('a', () => {
        throw new Error('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    expect(await q.submit('a', () => Promise.resolve(42))).toBe(42);
  });

  it('fails waiting tasks on close and refuses new ones', async () => {
    const order: string[] = [];
    const q = queue();
    const running = manual(order, 'r');
    const p1 = q.submit('a', running.start);
    const p2 = rejection(q.submit('b', manual(order, 'w').start));
    q.close();
    expect(isArbiterError(await p2, 'dependency_unavailable')).toBe(true);
    expect((await rejection(q.submit('c', () => Promise.resolve(1)))).code).toBe('dependency_unavailable');
    running.finish();
    expect(await p1).toBe('r');
  });

  it('keeps a caller with a task running in its place: one sending request after request does not rejoin ahead of others', async () => {
    const order: string[] = [];
    const q = queue({ slots: 1, now: clock().now });
    const a1 = manual(order, 'a1');
    const p1 = q.submit('a', a1.start);
    // While a1 runs, a's next request arrives, then b's: b still goes first (a just had its turn).
    const a2 = manual(order, 'a2');
    const p3 = q.submit('a', a2.start);
    const b1 = manual(order, 'b1');
    const p2 = q.submit('b', b1.start);
    a1.finish();
    await tick();
    b1.finish();
    await tick();
    a2.finish();
    await Promise.all([p1, p2, p3]);
    expect(order).toEqual(['a1', 'b1', 'a2']);
    expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0 });
  });

  it('keeps no state for callers without work, however many came', async () => {
    const q = queue({ slots: 4 });
    await Promise.all(Array.from({ length: 500 }, (_, i) => q.submit(`caller-${i}`, () => Promise.resolve(i))));
    expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0 });
  });

  describe('jobs (coalesced into batches)', () => {
    /** A batch runner the test finishes by hand; each job costs what `cost` says (ms). */
    function batches(cost: (job: string) => number) {
      const started: string[][] = [];
      const finishers: Array<() => void> = [];
      const run = (jobs: unknown[], settle: (index: number, outcome: JobOutcome) => void) =>
        new Promise<void>((resolve) => {
          started.push(jobs as string[]);
          finishers.push(() => {
            (jobs as string[]).forEach((j, i) => settle(i, { ok: true, value: j, ms: cost(j) }));
            resolve();
          });
        });
      return { started, run, finishNext: () => finishers.shift()!() };
    }

    it("starts one turn's jobs together after the turn, in fair order, and settles each alone", async () => {
      const b = batches(() => 0);
      const q = queue({ slots: 1, now: clock().now, batch: { max: 4, maxCostMs: 100, run: b.run } });
      const all = [q.submitJob('a', 'a1'), q.submitJob('a', 'a2'), q.submitJob('a', 'a3'), q.submitJob('b', 'b1'), q.submitJob('c', 'c1')];
      // Nothing starts within the turn: jobs of the same turn go together.
      expect(b.started).toEqual([]);
      await tick();
      expect(b.started).toEqual([['a1', 'b1', 'c1', 'a2']]);
      b.finishNext();
      await tick();
      expect(b.started[1]).toEqual(['a3']);
      b.finishNext();
      expect(await Promise.all(all)).toEqual(['a1', 'a2', 'a3', 'b1', 'c1']);
      expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0 });
    });

    it('keeps a caller with slow jobs from filling a batch others wait in (jobs prepay their recent cost)', async () => {
      const b = batches((job) => (job.startsWith('slow') ? 50 : 0));
      const q = queue({ slots: 1, quantumMs: 1, now: clock().now, batch: { max: 8, maxCostMs: 20, run: b.run } });
      const first = [q.submitJob('slow', 'slow1'), q.submitJob('fast', 'fast1')];
      await tick();
      expect(b.started).toEqual([['slow1', 'fast1']]);
      // While the first batch runs, both callers queue more.
      const more = [
        ...[2, 3, 4, 5].map((i) => q.submitJob('slow', `slow${i}`)),
        ...[2, 3, 4, 5].map((i) => q.submitJob('fast', `fast${i}`)),
      ];
      b.finishNext();
      await Promise.all(first);
      await tick();
      // slow1 cost 50 ms: slow's deficit is spent, so the next batch is fast's jobs only.
      expect(b.started[1]).toEqual(['fast2', 'fast3', 'fast4', 'fast5']);
      while (q.stats().queued + q.stats().running > 0) {
        b.finishNext();
        await tick();
      }
      await Promise.all(more);
      // Slow's jobs then come one per batch: each prepays 50 ms, past the batch's 20 ms of expected cost.
      expect(b.started.slice(2).every((jobs) => jobs.length === 1)).toBe(true);
    });

    it('passes a failed job to its own caller only, and fails a job the batch left unanswered', async () => {
      const run = async (jobs: unknown[], settle: (index: number, outcome: JobOutcome) => void) => {
        (jobs as string[]).forEach((j, i) => {
          if (j === 'bad') settle(i, { ok: false, error: new Error('bad job'), ms: 0 });
          else if (j !== 'lost') settle(i, { ok: true, value: j, ms: 0 });
        });
      };
      const q = queue({ slots: 1, batch: { max: 8, maxCostMs: 100, run } });
      const [good, bad, lost] = await Promise.allSettled([q.submitJob('a', 'good'), q.submitJob('b', 'bad'), q.submitJob('c', 'lost')]);
      expect(good).toEqual({ status: 'fulfilled', value: 'good' });
      expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'bad job' } });
      expect(lost).toMatchObject({ status: 'rejected', reason: { code: 'internal' } });
      expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0 });
    });
  });

  describe('chunked jobs (exec.run.many)', () => {
    /** A chunked job whose chunks the test finishes by hand; `chunks` records each started chunk. */
    function chunkedRun(log: string[], name: string) {
      const pending: Array<() => void> = [];
      const run = (from: number, to: number) =>
        new Promise<void>((resolve) => {
          log.push(`${name}[${from},${to})`);
          pending.push(resolve);
        });
      return { run, finishNext: () => pending.shift()?.() };
    }

    it("runs a job of many items a chunk per turn, other callers' tasks between its chunks, counted once per caller", async () => {
      const log: string[] = [];
      const q = queue({ slots: 1, perKeyMax: 1, now: clock().now, chunk: { maxItems: 4, firstItems: 4, targetMs: 1 } });
      const big = chunkedRun(log, 'big');
      const done = q.submitChunked('a', 10, big.run);
      const b = manual(log, 'b1');
      const other = q.submit('b', b.start);
      expect(log).toEqual(['big[0,4)']);
      // One job against perKeyMax (1): a second call of the same caller is refused, not its 10 items.
      expect((await rejection(q.submitChunked('a', 1, big.run))).code).toBe('rate_limited');
      const q2 = queue({ slots: 2, perKeyMax: 2, now: clock().now, chunk: { maxItems: 2, firstItems: 2, targetMs: 1 } });
      const two = chunkedRun([], 'two');
      // Two chunks of the first job running at once still count once: a second job is taken.
      const jobs = [q2.submitChunked('a', 10, two.run), q2.submitChunked('a', 10, two.run)];
      expect(q2.stats()).toMatchObject({ running: 2 });
      expect((await rejection(q2.submitChunked('a', 1, two.run))).code).toBe('rate_limited');
      for (let n = 0; n < 10; n++) {
        two.finishNext();
        await tick();
      }
      await Promise.all(jobs);
      big.finishNext();
      await tick();
      expect(log).toEqual(['big[0,4)', 'b1']);
      b.finish();
      await other;
      await tick();
      expect(log[2]).toMatch(/^big\[4,/);
      while (q.stats().running > 0) {
        big.finishNext();
        await tick();
      }
      await done;
      expect(log.filter((l) => l.startsWith('big')).length).toBeGreaterThanOrEqual(3);
      expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0 });
    });

    it('bounds the items a caller and everyone may have queued, and frees them when a job is done', async () => {
      const q = queue({ slots: 0, perKeyItemsMax: 100, maxQueuedItems: 150 });
      const log: string[] = [];
      const first = q.submitChunked('a', 80, chunkedRun(log, 'a').run);
      expect((await rejection(q.submitChunked('a', 21, chunkedRun(log, 'a2').run))).code).toBe('rate_limited');
      const second = q.submitChunked('b', 70, chunkedRun(log, 'b').run);
      expect((await rejection(q.submitChunked('c', 1, chunkedRun(log, 'c').run))).code).toBe('dependency_unavailable');
      q.close();
      await expect(first).rejects.toMatchObject({ code: 'dependency_unavailable' });
      await expect(second).rejects.toMatchObject({ code: 'dependency_unavailable' });
      const q2 = queue({ slots: 1, perKeyItemsMax: 100, chunk: { maxItems: 100, firstItems: 100, targetMs: 1 } });
      await q2.submitChunked('a', 100, async () => undefined);
      await q2.submitChunked('a', 100, async () => undefined);
      expect(q2.stats()).toEqual({ queued: 0, running: 0, callers: 0 });
    });

    it("lets a job wait past maxWaitMs behind its own caller's running work, not behind others'", async () => {
      const c = clock();
      const log: string[] = [];
      const q = queue({ slots: 1, maxWaitMs: 100, now: c.now, chunk: { maxItems: 4, firstItems: 4, targetMs: 1 } });
      const first = chunkedRun(log, 'first');
      const firstDone = q.submitChunked('a', 4, first.run);
      const second = q.submitChunked('a', 4, async () => undefined);
      c.advance(150);
      // The deadline timer (100 ms of real time) fires while the first job still runs.
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(q.stats()).toEqual({ queued: 1, running: 1, callers: 1 });
      // a's first job runs: its second job waits on.
      first.finishNext();
      await firstDone;
      await second;
      // Behind another caller's work, the wait limit holds.
      const other = manual(log, 'b1');
      const running = q.submit('b', other.start);
      const late = q.submitChunked('a', 4, async () => undefined);
      c.advance(150);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect((await rejection(late)).code).toBe('dependency_unavailable');
      other.finish();
      await running;
    });

    it('rejects a job whose chunk failed and drops its chunks not started', async () => {
      const log: string[] = [];
      const q = queue({ slots: 1, chunk: { maxItems: 2, firstItems: 2, targetMs: 1 } });
      const job = q.submitChunked('a', 6, async (from, to) => {
        log.push(`[${from},${to})`);
        if (from === 2) throw new Error('chunk failed');
      });
      await expect(job).rejects.toThrow('chunk failed');
      await tick();
      expect(log).toEqual(['[0,2)', '[2,4)']);
      expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0 });
    });
  });
});
