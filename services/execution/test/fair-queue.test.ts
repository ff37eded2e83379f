import { afterEach, describe, expect, it } from 'vitest';
import { FairQueue, type CallerId, type Chunk } from '../src/queue/fair-queue.js';
import { LOW_PRIORITY } from '../src/queue/callers.js';
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

/** Key `k` of person `p` (`p` defaults to the key: one key per person). */
const caller = (k: string, p = k): CallerId => ({ key: `key:${k}`, person: p });

/**
 * A chunk runner the test drives: records each worker task as the chunks it carries (`name[from,to)`),
 * and finishes the oldest task on `finishNext`, charging each item `cost(name)` ms of worker time.
 */
function runner(cost: (name: string) => number = () => 0) {
  const tasks: string[][] = [];
  const finishers: Array<() => void> = [];
  return {
    tasks,
    run: (chunks: Chunk[], done: (index: number, ms: number) => void) =>
      new Promise<void>((resolve) => {
        tasks.push(chunks.map((c) => `${c.job.spec as string}[${c.from},${c.to})`));
        finishers.push(() => {
          chunks.forEach((c, i) => done(i, cost(c.job.spec as string) * (c.to - c.from)));
          resolve();
        });
      }),
    finishNext: () => finishers.shift()?.(),
    pending: () => finishers.length,
  };
}

/** Submits an eval job named `name` of `total` items; resolves with the items dropped and why. */
function evalJob(q: FairQueue, who: CallerId, name: string, total: number, deadline?: number) {
  const dropped: string[] = [];
  const done = q.submitEval(who, {
    spec: name,
    total,
    ...(deadline !== undefined ? { deadline } : {}),
    drop: (from, to, err) => dropped.push(`[${from},${to}) ${err.code}`),
  });
  return { done, dropped };
}

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

describe('FairQueue: tasks', () => {
  it('hands out at most `slots` tasks and takes persons in turn, not in arrival order', async () => {
    const order: string[] = [];
    // A clock that stands still: no task costs worker time, so the turns are plain round robin.
    const q = queue({ slots: 1, now: clock().now });
    const a = [1, 2, 3, 4].map((i) => manual(order, `a${i}`));
    const b = [1, 2].map((i) => manual(order, `b${i}`));
    const results = [...a.map((t) => q.submit(caller('a'), t.start)), ...b.map((t) => q.submit(caller('b'), t.start))];
    expect(order).toEqual(['a1']);
    expect(q.stats()).toEqual({ queued: 5, running: 1, callers: 2, persons: 2 });
    const byName = new Map([...a, ...b].map((t, i) => [i < 4 ? `a${i + 1}` : `b${i - 3}`, t]));
    for (let n = 0; n < 6; n++) {
      byName.get(order[order.length - 1])!.finish();
      await tick();
    }
    await Promise.all(results);
    // b's first task goes right after the running a1, though three more of a's came first.
    expect(order).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'a4']);
    expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0, persons: 0 });
  });

  it('gives a person whose tasks take long fewer turns (deficit round robin by worker time)', async () => {
    const order: string[] = [];
    const c = clock();
    const q = queue({ slots: 1, quantumMs: 1, now: c.now });
    const slow = [1, 2, 3].map((i) => manual(order, `slow${i}`));
    const fast = [1, 2, 3, 4, 5].map((i) => manual(order, `fast${i}`));
    const all = [...slow.map((t) => q.submit(caller('slow'), t.start)), ...fast.map((t) => q.submit(caller('fast'), t.start))];
    const byName = new Map([...slow, ...fast].map((t, i) => [i < 3 ? `slow${i + 1}` : `fast${i - 2}`, t]));
    for (let n = 0; n < 8; n++) {
      const running = order[order.length - 1];
      c.advance(running.startsWith('slow') ? 4 : 0);
      byName.get(running)!.finish();
      await tick();
    }
    await Promise.all(all);
    // Each slow task costs 4 ms: after one, slow sits out while fast's free tasks go.
    expect(order).toEqual(['slow1', 'fast1', 'fast2', 'fast3', 'fast4', 'fast5', 'slow2', 'slow3']);
  });

  it('refuses a key past perKeyMax with rate_limited (429), others still admitted', async () => {
    const order: string[] = [];
    const q = queue({ slots: 1, perKeyMax: 2 });
    const t = [1, 2, 3].map((i) => manual(order, `a${i}`));
    const first = q.submit(caller('a'), t[0].start);
    const second = q.submit(caller('a'), t[1].start);
    const err = await rejection(q.submit(caller('a'), t[2].start));
    expect(err.code).toBe('rate_limited');
    const other = manual(order, 'b1');
    const admitted = q.submit(caller('b'), other.start);
    t[0].finish();
    t[1].finish();
    other.finish();
    await Promise.all([first, second, admitted]);
  });

  it('refuses with dependency_unavailable (503) when the queue is full', async () => {
    const order: string[] = [];
    const q = queue({ slots: 1, maxQueued: 1 });
    const running = manual(order, 'x');
    const waiting = manual(order, 'y');
    const p1 = q.submit(caller('a'), running.start);
    const p2 = q.submit(caller('b'), waiting.start);
    const err = await rejection(q.submit(caller('c'), manual(order, 'z').start));
    expect(err.code).toBe('dependency_unavailable');
    running.finish();
    await p1;
    waiting.finish();
    await p2;
  });

  it('passes a task failure through and keeps serving', async () => {
    const q = queue();
    await expect(q.submit(caller('a'), () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      q.submit(caller('a'), () => {
        throw new Error('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    expect(await q.submit(caller('a'), () => Promise.resolve(42))).toBe(42);
  });

  it('fails waiting work on close and refuses new work', async () => {
    const order: string[] = [];
    const q = queue({ slots: 1, runner: runner() });
    const running = manual(order, 'r');
    const p1 = q.submit(caller('a'), running.start);
    const p2 = rejection(q.submit(caller('b'), manual(order, 'w').start));
    const job = evalJob(q, caller('c'), 'c', 3);
    q.close();
    expect((await p2).code).toBe('dependency_unavailable');
    await job.done;
    expect(job.dropped).toEqual(['[0,3) dependency_unavailable']);
    expect((await rejection(q.submit(caller('c'), () => Promise.resolve(1)))).code).toBe('dependency_unavailable');
    running.finish();
    await p1;
  });

  it('keeps a person with a task running in its place: one sending request after request does not rejoin ahead of others', async () => {
    const order: string[] = [];
    const q = queue({ slots: 1, now: clock().now });
    const a1 = manual(order, 'a1');
    const p1 = q.submit(caller('a'), a1.start);
    const a2 = manual(order, 'a2');
    const b1 = manual(order, 'b1');
    const p3 = q.submit(caller('a'), a2.start);
    const p2 = q.submit(caller('b'), b1.start);
    a1.finish();
    await tick();
    expect(order).toEqual(['a1', 'b1']);
    b1.finish();
    await tick();
    a2.finish();
    await Promise.all([p1, p2, p3]);
    expect(order).toEqual(['a1', 'b1', 'a2']);
  });

  it('keeps no state for callers without work, however many came', async () => {
    const q = queue({ slots: 4 });
    await Promise.all(Array.from({ length: 500 }, (_, i) => q.submit(caller(`caller-${i}`), () => Promise.resolve(i))));
    expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0, persons: 0 });
  });
});

describe('FairQueue: eval jobs', () => {
  it("starts one turn's jobs together after the turn, chunks of several persons in one task, in fair order", async () => {
    const r = runner();
    const q = queue({ slots: 1, now: clock().now, runner: r, chunk: { targetMs: 5, maxItems: 4, firstItems: 1 } });
    const jobs = [evalJob(q, caller('a'), 'a1', 1), evalJob(q, caller('a'), 'a2', 1), evalJob(q, caller('b'), 'b1', 1)];
    // Nothing starts within the turn: jobs of the same turn go together.
    expect(r.tasks).toEqual([]);
    await tick();
    expect(r.tasks).toEqual([['a1[0,1)', 'b1[0,1)', 'a2[0,1)']]);
    r.finishNext();
    await Promise.all(jobs.map((j) => j.done));
    expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0, persons: 0 });
  });

  it("cuts a job of many items into chunks sized by their measured cost, other persons' work between them, counted once per key", async () => {
    const c = clock();
    const r = runner((name) => (name.startsWith('big') ? 2 : 0));
    const q = queue({ slots: 1, perKeyMax: 1, now: c.now, runner: r, chunk: { targetMs: 5, maxItems: 64, firstItems: 1 } });
    const big = evalJob(q, caller('a'), 'big', 10);
    await tick();
    // Nothing known of its cost: a first chunk of one item.
    expect(r.tasks).toEqual([['big[0,1)']]);
    // One job against perKeyMax (1), whatever its items: a second job of the same key is refused.
    expect((await rejection(q.submitEval(caller('a'), { spec: 'x', total: 1, drop: () => undefined }))).code).toBe('rate_limited');
    const other = evalJob(q, caller('b'), 'b1', 1);
    r.finishNext();
    await tick();
    // a's first item cost 2 ms: b's job goes next, before a's deficit is back.
    expect(r.tasks[1]).toEqual(['b1[0,1)']);
    while (r.pending() > 0) {
      c.advance(1);
      r.finishNext();
      await tick();
    }
    await Promise.all([big.done, other.done]);
    // Then 2 ms an item: two items fill a 5 ms task.
    expect(r.tasks.slice(2).map((t) => t.join(' '))).toEqual(['big[1,3)', 'big[3,5)', 'big[5,7)', 'big[7,9)', 'big[9,10)']);
    expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0, persons: 0 });
  });

  it('keeps a person with slow items from filling a task others wait in: tasks stay near their target', async () => {
    const c = clock();
    const r = runner((name) => (name.startsWith('slow') ? 3 : 0.01));
    const q = queue({ slots: 1, now: c.now, runner: r, chunk: { targetMs: 5, maxItems: 256, firstItems: 1 } });
    const slow = evalJob(q, caller('slow'), 'slow', 100);
    const fast = [1, 2, 3, 4, 5].map((i) => evalJob(q, caller('fast'), `fast${i}`, 1));
    await tick();
    for (let n = 0; n < 4; n++) {
      r.finishNext();
      await tick();
    }
    // Once slow's cost is known (3 ms an item), no task carries more than about 5 ms of its items.
    const slowItems = r.tasks.slice(1).map((t) => t.filter((x) => x.startsWith('slow')).reduce((n, x) => n + chunkSize(x), 0));
    expect(Math.max(...slowItems)).toBeLessThanOrEqual(2);
    // Fast's five jobs all ran within those first tasks.
    expect(
      r.tasks
        .slice(0, 3)
        .flat()
        .filter((x) => x.startsWith('fast')),
    ).toHaveLength(5);
    while (r.pending() > 0) {
      r.finishNext();
      await tick();
    }
    await Promise.all([slow.done, ...fast.map((f) => f.done)]);
  });

  it('gives low-priority work (replays) at most `lowPriorityTargetMs` of a task: live runs of others wait behind little of it', async () => {
    const r = runner((name) => (name.startsWith('replay') ? 0.3 : 0.01));
    const q = queue({
      slots: 1,
      now: clock().now,
      runner: r,
      chunk: { targetMs: 5, maxItems: 256, firstItems: 1, lowPriorityTargetMs: 1 },
    });
    const replay = evalJob(q, { key: `${LOW_PRIORITY}key:auditor`, person: 'auditor' }, 'replay', 200);
    await tick();
    r.finishNext();
    await tick();
    const live = [1, 2, 3].map((i) => evalJob(q, caller(`live${i}`), `live${i}`, 1));
    while (r.pending() > 0) {
      r.finishNext();
      await tick();
    }
    await Promise.all([replay.done, ...live.map((l) => l.done)]);
    // Once a replay item is known to cost 0.3 ms, no task carries more than 1 ms of them (3 items), not 5 ms (16).
    const replayItems = r.tasks.slice(1).map((t) => t.filter((x) => x.startsWith('replay')).reduce((n, x) => n + chunkSize(x), 0));
    expect(Math.max(...replayItems)).toBe(3);
    expect(replayItems.reduce((a, b) => a + b, 0)).toBe(199);
    // The live jobs went in the first task after they came, beside at most 3 replay items.
    const withLive = r.tasks.find((t) => t.some((x) => x.startsWith('live')))!;
    expect(withLive.filter((x) => x.startsWith('live'))).toHaveLength(3);
  });

  it('drops the items of a chunk the runner left unanswered', async () => {
    const q = queue({
      slots: 1,
      chunk: { firstItems: 2 },
      runner: { run: async (chunks, done) => chunks.forEach((c, i) => c.job.spec !== 'lost' && done(i, 0)) },
    });
    const [good, lost] = [evalJob(q, caller('a'), 'good', 2), evalJob(q, caller('b'), 'lost', 2)];
    await Promise.all([good.done, lost.done]);
    expect(good.dropped).toEqual([]);
    expect(lost.dropped).toEqual(['[0,2) internal']);
    expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0, persons: 0 });
  });

  it("tells a person's jobs and items in progress (low-priority keys included) against its limits", async () => {
    const q = queue({ slots: 0, perKeyMax: 10, perPersonMax: 20, perKeyItemsMax: 100, perPersonItemsMax: 150, runner: runner() });
    expect(q.personLoad('alice')).toEqual({ jobs: 0, items: 0, maxJobs: 20, maxItems: 150 });
    const live = evalJob(q, caller('a1', 'alice'), 'live', 30);
    const low = evalJob(q, { key: `${LOW_PRIORITY}key:a1`, person: 'alice' }, 'shadow', 5);
    expect(q.personLoad('alice')).toEqual({ jobs: 2, items: 35, maxJobs: 20, maxItems: 150 });
    expect(q.personLoad('bob')).toMatchObject({ jobs: 0, items: 0 });
    q.close();
    await Promise.all([live.done, low.done]);
  });

  it('bounds the items a key, a person and everyone may have in progress, and frees them when a job is over', async () => {
    const q = queue({ slots: 0, perKeyItemsMax: 100, perPersonItemsMax: 150, maxQueuedItems: 250, runner: runner() });
    const first = evalJob(q, caller('a1', 'alice'), 'a1', 80);
    expect((await rejection(q.submitEval(caller('a1', 'alice'), { spec: 'x', total: 21, drop: () => undefined }))).code).toBe(
      'rate_limited',
    );
    // Alice's second key: its own 100 are free, but alice has 70 of 150 left.
    const second = evalJob(q, caller('a2', 'alice'), 'a2', 70);
    const refused = await rejection(q.submitEval(caller('a3', 'alice'), { spec: 'x', total: 1, drop: () => undefined }));
    expect(refused.code).toBe('rate_limited');
    expect(refused.message).toMatch(/person/);
    const third = evalJob(q, caller('b'), 'b', 100);
    expect((await rejection(q.submitEval(caller('c'), { spec: 'x', total: 1, drop: () => undefined }))).code).toBe(
      'dependency_unavailable',
    );
    q.close();
    await Promise.all([first.done, second.done, third.done]);
    expect(first.dropped).toEqual(['[0,80) dependency_unavailable']);
  });

  it('counts evaluations in progress per person across keys (perPersonMax)', async () => {
    const q = queue({ slots: 0, perKeyMax: 2, perPersonMax: 3, runner: runner() });
    const jobs = [evalJob(q, caller('k1', 'p'), 'a', 1), evalJob(q, caller('k1', 'p'), 'b', 1), evalJob(q, caller('k2', 'p'), 'c', 1)];
    const refused = await rejection(q.submitEval(caller('k3', 'p'), { spec: 'x', total: 1, drop: () => undefined }));
    expect(refused.code).toBe('rate_limited');
    expect(refused.message).toMatch(/person/);
    // Another person is not affected.
    jobs.push(evalJob(q, caller('k4', 'q'), 'd', 1));
    q.close();
    await Promise.all(jobs.map((j) => j.done));
  });

  it("lets a job of several items wait past maxWaitMs behind its own key's running work, not behind others'", async () => {
    const c = clock();
    const r = runner();
    const q = queue({ slots: 1, maxWaitMs: 100, now: c.now, runner: r, chunk: { targetMs: 5, maxItems: 4, firstItems: 4 } });
    const first = evalJob(q, caller('a'), 'first', 4);
    await tick();
    const second = evalJob(q, caller('a'), 'second', 4);
    // Another person's job, waiting behind `a`'s work: the wait limit holds for it, so its drop
    // shows that the wait timer (100 ms of real time) fired while the first job still ran.
    const witness = evalJob(q, caller('w'), 'witness', 4);
    c.advance(150);
    await witness.done;
    expect(witness.dropped).toEqual(['[0,4) dependency_unavailable']);
    expect(q.stats()).toMatchObject({ queued: 1, running: 1 });
    r.finishNext();
    await first.done;
    await tick();
    r.finishNext();
    await second.done;
    expect(second.dropped).toEqual([]);
    // Behind another person's work, the wait limit holds.
    const order: string[] = [];
    const other = manual(order, 'b1');
    const running = q.submit(caller('b'), other.start);
    const late = evalJob(q, caller('a'), 'late', 4);
    c.advance(150);
    // Resolves when the wait timer (100 ms of real time) drops it.
    await late.done;
    expect(late.dropped).toEqual(['[0,4) dependency_unavailable']);
    other.finish();
    await running;
  });

  // Work whose caller has gone is dropped before it runs.
  it('drops the items of a job whose deadline passed before they started, and runs none of them', async () => {
    const c = clock();
    const r = runner(() => 1);
    const q = queue({ slots: 1, now: c.now, runner: r, chunk: { targetMs: 2, maxItems: 256, firstItems: 1 } });
    const blocker = evalJob(q, caller('b'), 'blocker', 1);
    await tick();
    const abandoned = evalJob(q, caller('a'), 'abandoned', 50, c.now() + 100);
    const partly = evalJob(q, caller('p'), 'partly', 6, c.now() + 100);
    await tick();
    c.advance(150);
    r.finishNext();
    await Promise.all([blocker.done, abandoned.done, partly.done]);
    expect(abandoned.dropped).toEqual(['[0,50) timeout']);
    expect(partly.dropped).toEqual(['[0,6) timeout']);
    expect(r.tasks.flat()).toEqual(['blocker[0,1)']);
    expect(q.stats()).toEqual({ queued: 0, running: 0, callers: 0, persons: 0 });
  });

  // Shares are per person, however many keys they send with.
  it("gives a person one share over all their keys: five keys' jobs take turns with another person's one", async () => {
    const c = clock();
    const r = runner(() => 1);
    const q = queue({ slots: 1, quantumMs: 1, now: c.now, runner: r, chunk: { targetMs: 1, maxItems: 1, firstItems: 1 } });
    const flood = [1, 2, 3, 4, 5].flatMap((k) => [1, 2, 3, 4].map((i) => evalJob(q, caller(`k${k}`, 'flooder'), `f${k}.${i}`, 1)));
    const victim = [1, 2, 3, 4].map((i) => evalJob(q, caller('v', 'victim'), `v${i}`, 1));
    await tick();
    for (let n = 0; n < 8; n++) {
      c.advance(1);
      r.finishNext();
      await tick();
    }
    const firstEight = r.tasks.slice(0, 8).flat();
    // Half the turns go to the victim, not one in six.
    expect(firstEight.filter((t) => t.startsWith('v')).length).toBeGreaterThanOrEqual(3);
    while (r.pending() > 0) {
      c.advance(1);
      r.finishNext();
      await tick();
    }
    await Promise.all([...flood, ...victim].map((j) => j.done));
  });
});

/** Items of a chunk named `name[from,to)`. */
function chunkSize(chunk: string): number {
  const m = /\[(\d+),(\d+)\)/.exec(chunk)!;
  return Number(m[2]) - Number(m[1]);
}
