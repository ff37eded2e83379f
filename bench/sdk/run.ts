/**
 * `npm run bench:sdk`: local evaluation against baselines measured in the same run.
 *
 * 1. local `run` vs the compiled rule-lang policy called directly (the 7-rule licence policy,
 *    same trace setting), as 200 interleaved pairs of 25 ms slices (paired, so load drifting on this
 *    shared machine hits both alike; the median of the pairs' ratios); target >= 90 %. A runtime
 *    keeps the last base it ran at hand: a row alternating two bases shows the map look-up's cost. And local `run` against `POST /run/policy/{baseId}`
 *    (16 connections, autocannon): the ratio of their throughputs.
 * 2. publish → 3 connected runtimes serving the new version: per publish, the time from sending the
 *    `PUT` until each runtime answers with the new version; p50/p99 over 20 publishes (target p99
 *    <= 1 s); and a deleted base stopping (answering 404) in all three, over 5 deletes.
 * 3. 1,000 local runs → `executed` events (via sdk) whose counts add up to exactly 1,000.
 * 4. memory per 1,000 small policies held by a runtime (heap after GC, run with --expose-gc).
 * The machine is shared with other work: compare the ratios within one run.
 */

import { compile } from '@arbiter/rule-lang';
import { Arbiter, type LocalRuntime } from '@arbiter/sdk';
import { startStack } from '../../test/e2e/harness.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';
import { BENCH_STACK_ENV, formatRow, jsonLine, measure } from '../load.js';

const PAIRS = Number(process.env.BENCH_SDK_PAIRS ?? 200);
const SLICE_MS = Number(process.env.BENCH_SDK_SLICE_MS ?? 25);
const PUBLISHES = Number(process.env.BENCH_SDK_PUBLISHES ?? 20);
const DELETES = Number(process.env.BENCH_SDK_DELETES ?? 5);
const SMALL_POLICIES = Number(process.env.BENCH_SDK_POLICIES ?? 1000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const median = (values: number[]) => pct(values, 50);
const rule = (age: number) => `An **applicant** is adult if the __age__ of the **applicant** is at least ${age}.`;
const date = new Date().toISOString();

/** Calls per second of `fn` over one slice of `ms`, checking each answer. */
function rate(fn: () => { result: boolean }, ms: number, expected: boolean): number {
  let calls = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 200; i++) if (fn().result !== expected) throw new Error('wrong answer');
    calls += 200;
    now = performance.now();
  }
  return (calls * 1000) / (now - start);
}

async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

/** Resolves once `check` holds for `runtime`, polled on each of its updates and every 2 ms. */
async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the runtimes');
    await sleep(2);
  }
}

async function main(): Promise<void> {
  const stack = await startStack({ services: ['execution', 'registry', 'audit', 'gateway'], env: { ...BENCH_STACK_ENV } });
  const admin = new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey });
  const opened: LocalRuntime[] = [];
  const say = (line: string) => console.log(line);
  const json: string[] = [];
  try {
    // ---- 1. local run vs the compiled policy, and vs the service ----
    const draft = await admin.policies.create({ name: 'licence', rule: LICENCE_POLICY });
    const published = await admin.policies.update(draft.policyId, { status: 'published' });
    if (published.outcome !== 'published') throw new Error('expected a version');
    const baseId = published.record.baseId;
    const runtime = await admin.local({ bases: [baseId], reportIntervalMs: 1000 });
    opened.push(runtime);
    const policy = compile(LICENCE_POLICY);
    const data = LICENCE_DATA as Record<string, unknown>;
    const expected = policy.evaluate(data, { trace: false }).result;
    if (JSON.stringify(runtime.run(baseId, data)) !== JSON.stringify(await admin.policies.run(baseId, data))) {
      throw new Error('local and remote answers differ');
    }
    say(`local run vs the compiled policy called directly (licence policy, ${PAIRS} interleaved pairs of ${SLICE_MS} ms slices):`);
    const localRates: Record<string, number> = {};
    for (const trace of [false, true]) {
      const direct = { trace, stepBudget: trace ? 10_000 : 1_000_000 };
      const ratios: number[] = [];
      const d: number[] = [];
      const l: number[] = [];
      const runDirect = () => rate(() => policy.evaluate(data, direct), SLICE_MS, expected);
      const runLocal = () => rate(() => runtime.run(baseId, data, { trace }), SLICE_MS, expected);
      for (let i = 0; i < 5; i++) {
        runDirect();
        runLocal();
      }
      for (let i = 0; i < PAIRS; i++) {
        // alternate which goes first, so neither always follows the other
        let a: number;
        let b: number;
        if (i % 2 === 0) {
          a = runDirect();
          b = runLocal();
        } else {
          b = runLocal();
          a = runDirect();
        }
        d.push(a);
        l.push(b);
        ratios.push(b / a);
      }
      const label = trace ? 'trace on ' : 'trace off';
      localRates[label] = median(l);
      say(
        `  ${label}: direct ${Math.round(median(d)).toLocaleString('en')} /s, local ${Math.round(median(l)).toLocaleString('en')} /s, ` +
          `local / direct ${(median(ratios) * 100).toFixed(1)} % (median of pair ratios)   (target >= 90 %)`,
      );
      json.push(JSON.stringify({ bench: 'sdk', name: `local vs direct, ${label.trim()}`, date, ratio: median(ratios) }));
    }
    // The runtime keeps the last base it ran at hand; runs alternating between two bases look each up.
    const twin = await admin.policies.create({ name: 'licence twin', rule: LICENCE_POLICY });
    const both = await admin.local({ bases: [baseId, twin.baseId], reportIntervalMs: 1000 });
    opened.push(both);
    const off = { trace: false };
    const directOff = { trace: false, stepBudget: 1_000_000 };
    const pair = [baseId, twin.baseId];
    let turn = 0;
    const alternating: number[] = [];
    for (let i = 0; i < PAIRS / 2; i++) {
      const a = rate(() => policy.evaluate(data, directOff), SLICE_MS, expected);
      const b = rate(() => both.run(pair[turn++ & 1], data, off), SLICE_MS, expected);
      alternating.push(b / a);
    }
    say(`  trace off, alternating between two bases: local / direct ${(median(alternating) * 100).toFixed(1)} %`);
    json.push(
      JSON.stringify({ bench: 'sdk', name: 'local vs direct, trace off, two bases alternating', date, ratio: median(alternating) }),
    );
    const http = await measure('POST /run/policy/{baseId} (trace on)', {
      url: `${stack.baseUrl}/run/policy/${baseId}`,
      body: JSON.stringify(data),
      headers: { 'x-api-key': stack.adminKey },
    });
    say(formatRow(http));
    say(
      `  local run (one thread, trace on) / POST /run/policy/{baseId}: ${(localRates['trace on '] / http.rps).toFixed(0)} x ` +
        `(trace off: ${(localRates['trace off'] / http.rps).toFixed(0)} x)`,
    );
    json.push(jsonLine('sdk', http, date));

    // ---- 2. publish → 3 connected runtimes; delete → stopped ----
    const viewKey = (await admin.apiKeys.create({ name: 'bench runtimes', scopes: ['view'] })).key;
    const target = await admin.policies.create({ name: 'published often', rule: rule(1) });
    let current = await admin.policies.update(target.policyId, { status: 'published' });
    if (current.outcome !== 'published') throw new Error('expected a version');
    const three: LocalRuntime[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await new Arbiter({ baseUrl: stack.baseUrl, apiKey: viewKey }).local({ bases: [target.baseId] });
      three.push(r);
      opened.push(r);
    }
    const adult = { applicant: { age: 50 } };
    const publishTimes: number[] = [];
    const eachTimes: number[] = [];
    for (let n = 0; n < PUBLISHES; n++) {
      const next = await admin.policies.draft(current.record.policyId);
      await admin.policies.update(next.record.policyId, { status: 'draft', rule: rule(n + 2) });
      const version = current.record.version! + 1;
      const started = performance.now();
      const seen = three.map(() => 0);
      const publishing = admin.policies.update(next.record.policyId, { status: 'published' });
      await until(() => {
        three.forEach((r, i) => {
          if (seen[i] === 0 && r.run(target.baseId, adult, { trace: false }).version === version) seen[i] = performance.now() - started;
        });
        return seen.every((t) => t > 0);
      });
      const done = await publishing;
      if (done.outcome !== 'published') throw new Error('expected a version');
      current = done;
      eachTimes.push(...seen);
      publishTimes.push(Math.max(...seen));
    }
    say(`\npublish → 3 connected runtimes serving the new version (${PUBLISHES} publishes, from sending the PUT):`);
    say(
      `  all three: p50 ${median(publishTimes).toFixed(0)} ms, p99 ${pct(publishTimes, 99).toFixed(0)} ms; ` +
        `each runtime: p50 ${median(eachTimes).toFixed(0)} ms, p99 ${pct(eachTimes, 99).toFixed(0)} ms   (target p99 <= 1000 ms)`,
    );
    json.push(JSON.stringify({ bench: 'sdk', name: 'publish to 3 runtimes', date, p50: median(publishTimes), p99: pct(publishTimes, 99) }));

    const deleteTimes: number[] = [];
    for (let n = 0; n < DELETES; n++) {
      const doomed = await admin.policies.create({ name: `deleted ${n}`, rule: rule(18) });
      const held = await Promise.all(
        three.map(() => new Arbiter({ baseUrl: stack.baseUrl, apiKey: viewKey }).local({ bases: [doomed.baseId] })),
      );
      opened.push(...held);
      const started = performance.now();
      const stopped = held.map(() => 0);
      const deleting = admin.policies.delete(doomed.policyId);
      await until(() => {
        held.forEach((r, i) => {
          if (stopped[i] > 0) return;
          try {
            r.run(doomed.baseId, adult, { trace: false });
          } catch {
            stopped[i] = performance.now() - started;
          }
        });
        return stopped.every((t) => t > 0);
      });
      await deleting;
      deleteTimes.push(Math.max(...stopped));
      await Promise.all(held.map((r) => r.close()));
    }
    say(
      `  a deleted base stops in all three: p50 ${median(deleteTimes).toFixed(0)} ms, max ${Math.max(...deleteTimes).toFixed(0)} ms over ${DELETES} deletes   (target <= 1000 ms)`,
    );

    // ---- 3. 1,000 local runs → executed events ----
    const counted = await admin.policies.create({ name: 'counted', rule: rule(18) });
    const reporter = await admin.local({ bases: [counted.baseId], reportIntervalMs: 250 });
    for (let i = 0; i < 1000; i++)
      reporter.run(counted.baseId, i % 10 === 0 ? {} : { applicant: { age: i % 2 === 0 ? 40 : 4 } }, { trace: false });
    const closedAt = performance.now();
    await reporter.close();
    let sum = 0;
    let events = 0;
    for (;;) {
      const found = await admin.audit.list({ kind: ['executed'], resourceId: counted.policyId }).toArray();
      sum = found.reduce((n, e) => n + (e.details.count as number), 0);
      events = found.length;
      if (sum >= 1000 || performance.now() - closedAt > 30_000) break;
      await sleep(100);
    }
    say(
      `\n1,000 local runs → ${events} executed event(s) (via sdk) counting ${sum} runs, in the audit trail ${(performance.now() - closedAt).toFixed(0)} ms after close()   (target: exactly 1,000)`,
    );
    json.push(JSON.stringify({ bench: 'sdk', name: 'executed events for 1,000 local runs', date, runs: sum, events }));

    // ---- 4. memory per 1,000 small policies ----
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:sdk does)');
    const group = await admin.groups.create({ name: 'small policies' });
    let created = 0;
    await inParallel(
      Array.from({ length: SMALL_POLICIES }, (_, i) => i),
      8,
      async (i) => {
        const p = await admin.policies.create({ name: `small ${i}`, rule: rule(i) });
        await admin.groups.addMember(group.groupId, { memberId: p.baseId, memberType: 'policy' });
        created++;
      },
    );
    await sleep(200);
    gc();
    const before = process.memoryUsage();
    const small = await admin.local({ group: group.groupId });
    opened.push(small);
    gc();
    const after = process.memoryUsage();
    const held = small.stats().policies;
    const perThousand = ((after.heapUsed - before.heapUsed) / held) * 1000;
    say(
      `\nmemory: ${held} small policies held (of ${created} created): heap +${(perThousand / 1024 / 1024).toFixed(1)} MiB per 1,000 policies ` +
        `(rss +${((((after.rss - before.rss) / held) * 1000) / 1024 / 1024).toFixed(1)} MiB per 1,000)`,
    );
    json.push(JSON.stringify({ bench: 'sdk', name: 'heap per 1,000 small policies', date, bytes: Math.round(perThousand) }));

    say('\nThe machine is shared with other work: figures are noisy; compare the ratios within one run.');
    for (const line of json) say(line);
  } finally {
    await Promise.all(opened.map((r) => r.close().catch(() => undefined)));
    await stack.stop();
  }
}

await main();
