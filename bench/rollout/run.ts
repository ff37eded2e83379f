/**
 * `npm run bench:rollout`: staged rollouts (docs/design/canary.md), measured in one run.
 *
 * 1. The split: `rolloutChoosesNew` over 10,000 distinct `customer.id` values at 10 % (the pure
 *    function), then the same 10,000 through `POST /run/policy/{baseId}/batch`: the new version's
 *    share (target 10 % ± 1 %) and whether the service and an SDK runtime chose alike for each.
 * 2. The choice's cost: an SDK runtime's local run of a base in a rollout against the same run of a
 *    base without one (trace off, interleaved slices; the ratio of their rates).
 * 3. Propagation: a stack with 2 execution replicas and 3 SDK runtimes; a rollout flipped between
 *    0 % and 100 % `CHANGES` times: per change, the time from sending `POST .../rollout` until each
 *    runtime answers the new version (p50/p99, target p99 <= 1 s), and the runs through the gateway
 *    (both replicas, queue group) sent after the change was acknowledged that still answered the old
 *    version (target 0: replicas read the runnable index at each run).
 */

import { rolloutChoosesNew } from '@arbiter/run';
import { Arbiter, type LocalRuntime } from '@arbiter/sdk';
import { call, startStack } from '../../test/e2e/harness.js';
import { BENCH_STACK_ENV } from '../load.js';

const CHANGES = Number(process.env.BENCH_ROLLOUT_CHANGES ?? 20);
const RUNS_AFTER_ACK = Number(process.env.BENCH_ROLLOUT_RUNS_AFTER_ACK ?? 20);
const PAIRS = Number(process.env.BENCH_ROLLOUT_PAIRS ?? 40);
const SLICE_MS = Number(process.env.BENCH_ROLLOUT_SLICE_MS ?? 25);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const rule = (age: number) => `An **applicant** is adult if the __age__ of the **applicant** is at least ${age}.`;
const customer = (i: number) => ({ applicant: { age: 30 }, customer: { id: `customer-${i}` } });

/** Calls per second of `fn` over one slice. */
function rate(fn: () => unknown, ms: number): number {
  let calls = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 200; i++) fn();
    calls += 200;
    now = performance.now();
  }
  return (calls * 1000) / (now - start);
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the runtimes');
    await sleep(2);
  }
}

async function main(): Promise<void> {
  const say = (line: string) => console.log(line);
  const items = Array.from({ length: 10_000 }, (_, i) => customer(i));

  // ---- 1a. the pure split ----
  const chosen = items.map((d) => rolloutChoosesNew({ percent: 10, by: 'customer.id' }, d));
  const pureShare = chosen.filter(Boolean).length / items.length;
  say(`split over 10,000 distinct customer ids at 10 % (rolloutChoosesNew): ${(pureShare * 100).toFixed(2)} %   (target 10 % ± 1 %)`);

  const stack = await startStack({ services: ['execution', 'registry', 'gateway'], env: { ...BENCH_STACK_ENV } });
  const opened: LocalRuntime[] = [];
  try {
    await stack.startService('execution', { replica: 2 });
    const admin = new Arbiter({ baseUrl: stack.baseUrl, apiKey: stack.adminKey });
    const publish = async (name: string) => {
      const created = await admin.policies.create({ name, rule: rule(18) });
      await admin.policies.update(created.policyId, { status: 'published' });
      const draft = await admin.policies.draft(created.baseId);
      const res = await call(stack, 'PUT', `/policy/${draft.record.policyId}`, {
        key: stack.adminKey,
        body: { status: 'published', rule: rule(21), rollout: { percent: 10, by: 'customer.id' } },
      });
      if (res.status !== 201) throw new Error(`publish with rollout: ${res.status} ${JSON.stringify(res.body)}`);
      return created.baseId;
    };
    const baseId = await publish('split');

    // ---- 1b. the service's split, and the SDK's agreement ----
    const versions: number[] = [];
    for (let at = 0; at < items.length; at += 1000) {
      const res = await call(stack, 'POST', `/run/policy/${baseId}/batch?trace=false`, {
        key: stack.adminKey,
        body: { items: items.slice(at, at + 1000) },
      });
      if (res.status !== 200) throw new Error(`batch: ${res.status}`);
      for (const r of (res.body as { results: Array<{ version: number }> }).results) versions.push(r.version);
    }
    const serviceShare = versions.filter((v) => v === 2).length / versions.length;
    const sameAsPure = versions.every((v, i) => (v === 2) === chosen[i]);
    const runtime = await admin.local({ bases: [baseId] });
    opened.push(runtime);
    const sdkSame = items.every((d, i) => runtime.run(baseId, d, { trace: false }).version === versions[i]);
    say(
      `split through the service (2 execution replicas, batches of 1,000): ${(serviceShare * 100).toFixed(2)} %; ` +
        `same version as the pure function for all 10,000: ${sameAsPure}; SDK runtime agrees on all 10,000: ${sdkSame}`,
    );

    // ---- 2. the choice's cost in a local run ----
    const plain = await admin.policies.create({ name: 'plain', rule: rule(21) });
    await admin.policies.update(plain.policyId, { status: 'published' });
    const both = await admin.local({ bases: [baseId, plain.baseId] });
    opened.push(both);
    const ratios: number[] = [];
    let k = 0;
    for (let p = 0; p < PAIRS; p++) {
      const withRollout = rate(() => both.run(baseId, items[k++ % 10_000], { trace: false }), SLICE_MS);
      const without = rate(() => both.run(plain.baseId, items[k++ % 10_000], { trace: false }), SLICE_MS);
      ratios.push(withRollout / without);
    }
    say(
      `local run of a base in a rollout (by customer.id) / of a base without one, trace off: ${pct(ratios, 50).toFixed(2)} ` +
        `(median of ${PAIRS} interleaved pairs of ${SLICE_MS} ms slices)`,
    );

    // ---- 3. propagation to 2 replicas and 3 runtimes ----
    const flip = await publish('flipped');
    const three: LocalRuntime[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await admin.local({ bases: [flip] });
      three.push(r);
      opened.push(r);
    }
    const probe = { applicant: { age: 30 } };
    const times: number[] = [];
    const each: number[] = [];
    let staleAfterAck = 0;
    let runsAfterAck = 0;
    for (let n = 0; n < CHANGES; n++) {
      const percent = n % 2 === 0 ? 100 : 0;
      const want = percent === 100 ? 2 : 1;
      const started = performance.now();
      const seen = three.map(() => 0);
      const changing = call(stack, 'POST', `/policy/${flip}/rollout`, { key: stack.adminKey, body: { percent } });
      await until(() => {
        three.forEach((r, i) => {
          if (seen[i] === 0 && r.run(flip, probe, { trace: false }).version === want) seen[i] = performance.now() - started;
        });
        return seen.every((t) => t > 0);
      });
      const ack = await changing;
      if (ack.status !== 200) throw new Error(`rollout change: ${ack.status}`);
      times.push(Math.max(...seen));
      each.push(...seen);
      const after = await Promise.all(
        Array.from({ length: RUNS_AFTER_ACK }, () =>
          call(stack, 'POST', `/run/policy/${flip}?trace=false`, { key: stack.adminKey, body: probe }),
        ),
      );
      runsAfterAck += after.length;
      staleAfterAck += after.filter((r) => (r.body as { version: number }).version !== want).length;
    }
    say(`\nrollout change (0 % <-> 100 %) → 3 connected runtimes serving the new choice (${CHANGES} changes, from sending the POST):`);
    say(
      `  all three: p50 ${pct(times, 50).toFixed(0)} ms, p99 ${pct(times, 99).toFixed(0)} ms; ` +
        `each runtime: p50 ${pct(each, 50).toFixed(0)} ms, p99 ${pct(each, 99).toFixed(0)} ms   (target p99 <= 1000 ms)`,
    );
    say(
      `  runs through the gateway after each acknowledgement (2 execution replicas): ${staleAfterAck} of ${runsAfterAck} on the old choice   (target 0)`,
    );
  } finally {
    await Promise.all(opened.map((r) => r.close()));
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
