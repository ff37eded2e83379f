/**
 * `npm run bench:reasons`: what asking why costs (docs/LANGUAGE.md §10.4). Paired ratios, measured
 * in one run by alternating the two sides of each pair in short rounds (so that the load of the
 * machine falls on both alike), CPU time per evaluation (process.cpuUsage):
 *
 * - reasons off vs the code before: `evaluate` with the run layer's untraced options in this tree
 *   and in the rule language at {@link BASELINE} (the commit the generated reasons were built on,
 *   its source extracted once into bench/reasons/.baseline/, both read through tsx alike);
 * - reasons on vs traced: `evaluate({reasons: true, trace: false})` vs `evaluate({trace: true})`;
 * - reasons on vs untraced: the same vs `evaluate({trace: false})`;
 * - reasons on vs reasons on before: this tree vs {@link BASELINE}, whose reasons ran on closures
 *   (a policy) or on a traced run of every row (a table);
 *
 * for the 7-rule policy of the other benches (bench/fixtures.ts), a 100-row policy (one `or` of
 * 100 conditions, the last one holding) and a 100-row decision table (`first`, 4 inputs, as
 * bench/tables: `evaluateTable` of libs/flow, this tree's and the baseline's) over 200 data items.
 * Every answer is checked before timing (the reasons equal the baseline's, byte for byte), and the
 * results are kept alive (`sink`).
 *
 * Targets: off/before ≈ 1 (no change); on/traced ≤ 1; on/untraced ≤ 3.
 */

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FlowTableNode } from '@arbiter/contracts';
import * as current from '../../libs/rule-lang/src/index.js';
import * as currentFlow from '../../libs/flow/src/index.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';

/** The commit the generated reasons were built on: its rule language and flow are "the code before". */
const BASELINE = '0967387';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 120);

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

/**
 * The baseline's rule-lang and flow sources, extracted once (git archive) beside this file; their
 * imports resolve from the repo's node_modules (the flow's `@arbiter/rule-lang` is this tree's
 * build, whose cells the generated reasons did not change).
 */
async function baseline(): Promise<{ lang: typeof current; flow: typeof currentFlow }> {
  const dir = path.join(here, '.baseline', BASELINE);
  const lang = path.join(dir, 'libs/rule-lang/src/index.ts');
  const flow = path.join(dir, 'libs/flow/src/index.ts');
  if (!existsSync(lang) || !existsSync(flow)) {
    mkdirSync(dir, { recursive: true });
    const tar = execFileSync('git', ['-C', root, 'archive', BASELINE, 'libs/rule-lang/src', 'libs/flow/src'], {
      maxBuffer: 64 * 1024 * 1024,
    });
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
  }
  return {
    lang: (await import(pathToFileURL(lang).href)) as typeof current,
    flow: (await import(pathToFileURL(flow).href)) as typeof currentFlow,
  };
}

/** A small deterministic PRNG (mulberry32), so every run measures the same table and data. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 100-rule `first` table over 4 inputs (the last rule catches all) and 200 data items, as bench/tables makes them. */
function hundredRowTable(): { node: FlowTableNode; items: Array<Record<string, unknown>> } {
  const rnd = prng(24);
  const countries = ['NL', 'BE', 'DE', 'FR', 'ES', 'IT', 'PL', 'SE'];
  const segments = ['retail', 'business', 'public'];
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const rules = Array.from({ length: 99 }, (_, i) => ({
    when: [
      rnd() < 0.9 ? `${rnd() < 0.6 ? '>=' : '<'} ${18 + Math.floor(rnd() * 50)}` : '-',
      rnd() < 0.9 ? `is in ${JSON.stringify([pick(countries), pick(countries)])}` : '-',
      rnd() < 0.8 ? `>= ${300 + Math.floor(rnd() * 500)}` : '-',
      rnd() < 0.8 ? JSON.stringify(pick(segments)) : '-',
    ],
    then: { tier: `t${i}` },
  }));
  rules.push({ when: ['-', '-', '-', '-'], then: { tier: 't99' } });
  const node: FlowTableNode = {
    type: 'table',
    hitPolicy: 'first',
    inputs: [
      { name: 'age', path: 'applicant.age' },
      { name: 'country', path: 'applicant.country' },
      { name: 'score', path: 'applicant.score' },
      { name: 'segment', path: 'applicant.segment' },
    ],
    outputs: [{ name: 'tier' }],
    rules,
  };
  const data = prng(7);
  const items = Array.from({ length: 200 }, () => ({
    applicant: {
      age: 16 + Math.floor(data() * 60),
      country: countries[Math.floor(data() * countries.length)],
      score: 250 + Math.floor(data() * 600),
      segment: segments[Math.floor(data() * segments.length)],
    },
  }));
  return { node, items };
}

type Run = () => number;

/** CPU µs per call of `run` over about `ms` milliseconds (at least one batch). */
function measure(run: Run, batch: number, ms: number, sink: { n: number }): number {
  const start = performance.now();
  const cpu = process.cpuUsage();
  let calls = 0;
  do {
    for (let i = 0; i < batch; i++) sink.n += run();
    calls += batch;
  } while (performance.now() - start < ms);
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / calls;
}

/** The median of `a / b` over paired rounds (a and b alternate, which goes first alternates too), and each side's median. */
function paired(a: Run, b: Run, batch: number, sink: { n: number }): { ratio: number; a: number; b: number } {
  for (let i = 0; i < 3; i++) {
    measure(a, batch, 30, sink);
    measure(b, batch, 30, sink);
  }
  const ratios: number[] = [];
  const as: number[] = [];
  const bs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let x: number;
    let y: number;
    if (r % 2 === 0) {
      x = measure(a, batch, ROUND_MS, sink);
      y = measure(b, batch, ROUND_MS, sink);
    } else {
      y = measure(b, batch, ROUND_MS, sink);
      x = measure(a, batch, ROUND_MS, sink);
    }
    ratios.push(x / y);
    as.push(x);
    bs.push(y);
  }
  const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[xs.length >> 1];
  return { ratio: median(ratios), a: median(as), b: median(bs) };
}

/** A 100-row policy: one rule whose conditions are 100 rows joined by `or`, the last one matching. */
function hundredRows(): { text: string; data: Record<string, unknown> } {
  const rows = Array.from(
    { length: 100 },
    (_, i) =>
      `(the __age__ of the **applicant** is at least ${18 + (i % 50)} and the __score__ of the **applicant** is greater than ${900 + i})`,
  );
  rows[99] = '(the __country__ of the **applicant** is in ["NL", "BE"])';
  return {
    text: `A **applicant** gets a tier\n  if ${rows.join('\n  or ')}.`,
    data: { applicant: { age: 40, score: 500, country: 'NL' } },
  };
}

type Pair = { ratio: number; a: number; b: number };

/** The four ratios of a subject, one line each, with the targets. */
function report(name: string, off: Pair, onTraced: Pair, onUntraced: Pair, onBefore: Pair): void {
  const line = (what: string, p: Pair, target: string, met: boolean | null) =>
    console.log(
      `${name.padEnd(15)} ${what.padEnd(28)} ${p.a.toFixed(3).padStart(8)} µs vs ${p.b.toFixed(3).padStart(8)} µs  ` +
        `ratio ${p.ratio.toFixed(2).padStart(5)}  target ${target.padEnd(6)} ${met === null ? '' : met ? 'met' : 'NOT met'}`,
    );
  line('reasons off / code before', off, '≈ 1', off.ratio >= 0.97 && off.ratio <= 1.03);
  line('reasons on / traced', onTraced, '≤ 1', onTraced.ratio <= 1);
  line('reasons on / untraced', onUntraced, '≤ 3', onUntraced.ratio <= 3);
  line('reasons on / on before', onBefore, '', null);
}

async function main(): Promise<void> {
  const { lang: before, flow: flowBefore } = await baseline();
  const sink = { n: 0 };
  const table = hundredRows();
  const subjects = [
    { name: '7-rule policy', text: LICENCE_POLICY, data: LICENCE_DATA as Record<string, unknown>, want: true, batch: 2000 },
    { name: '100-row policy', text: table.text, data: table.data, want: true, batch: 200 },
  ];
  const untraced = { trace: false, stepBudget: 1_000_000 };
  const traced = { trace: true, stepBudget: 10_000 };
  const reasons = { trace: false, stepBudget: 1_000_000, reasons: true };
  const rows: Array<Record<string, unknown>> = [];
  console.log(`bench:reasons — node ${process.version}, ${cpus().length} cores, ${ROUNDS} paired rounds of ${ROUND_MS} ms a side`);
  console.log(
    `load average at the start ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}\n`,
  );
  for (const s of subjects) {
    const now = current.compile(s.text);
    const old = before.compile(s.text);
    // Correct answers only: every mode gives the wanted result, and reasons that say it.
    for (const options of [untraced, traced, reasons]) {
      const r = now.evaluate(s.data, options);
      if (r.result !== s.want || r.error !== undefined) throw new Error(`${s.name}: ${JSON.stringify(r).slice(0, 300)}`);
    }
    if (old.evaluate(s.data, untraced).result !== s.want) throw new Error(`${s.name}: the baseline answers otherwise`);
    if (JSON.stringify(now.evaluate(s.data, reasons)) !== JSON.stringify(old.evaluate(s.data, reasons)))
      throw new Error(`${s.name}: the reasons differ from the baseline's`);
    const why = now.evaluate(s.data, reasons).reasons!;
    if (why.result !== s.want || why.because.length === 0) throw new Error(`${s.name}: reasons ${JSON.stringify(why).slice(0, 300)}`);
    const bytes = Buffer.byteLength(JSON.stringify(why));

    const off = paired(
      () => (now.evaluate(s.data, untraced).result ? 1 : 0),
      () => (old.evaluate(s.data, untraced).result ? 1 : 0),
      s.batch,
      sink,
    );
    const onTraced = paired(
      () => now.evaluate(s.data, reasons).reasons!.because.length,
      () => now.evaluate(s.data, traced).trace.length,
      s.batch,
      sink,
    );
    const onUntraced = paired(
      () => now.evaluate(s.data, reasons).reasons!.because.length,
      () => (now.evaluate(s.data, untraced).result ? 1 : 0),
      s.batch,
      sink,
    );
    const onBefore = paired(
      () => now.evaluate(s.data, reasons).reasons!.because.length,
      () => old.evaluate(s.data, reasons).reasons!.because.length,
      s.batch,
      sink,
    );
    report(s.name, off, onTraced, onUntraced, onBefore);
    console.log(
      `${s.name.padEnd(15)} reasons: ${why.because.length} top entries, ${bytes} bytes of JSON; "${why.sentence.slice(0, 110)}…"\n`,
    );
    rows.push({
      subject: s.name,
      offVsBefore: off,
      onVsTraced: onTraced,
      onVsUntraced: onUntraced,
      onVsOnBefore: onBefore,
      reasonsBytes: bytes,
    });
  }
  // The 100-row decision table: evaluateTable over the items, each call one evaluation.
  {
    const { node, items } = hundredRowTable();
    const now = currentFlow.compileTable('t', node);
    const old = flowBefore.compileTable('t', node);
    if (!now.ok || !old.ok) throw new Error('the table does not compile');
    const table = now.table;
    const oldTable = old.table;
    let at = 0;
    const next = () => items[(at = (at + 1) % items.length)];
    const run = (options: { trace: boolean; reasons?: boolean }, d: unknown) =>
      currentFlow.evaluateTable('t', table, d, { limit: 1_000_000, used: 0 }, options);
    const runOld = (options: { trace: boolean; reasons?: boolean }, d: unknown) =>
      flowBefore.evaluateTable('t', oldTable, d, { limit: 1_000_000, used: 0 }, options);
    for (const d of items) {
      const plain = run({ trace: false }, d);
      const why = run({ trace: false, reasons: true }, d);
      if (JSON.stringify(plain.result) !== JSON.stringify(runOld({ trace: false }, d).result))
        throw new Error('the table answers otherwise');
      if (why.reasons === undefined || JSON.stringify(why.result) !== JSON.stringify(plain.result)) throw new Error('table reasons');
      if (JSON.stringify(why) !== JSON.stringify(runOld({ trace: false, reasons: true }, d)))
        throw new Error("the table's reasons differ from the baseline's");
    }
    const why = run({ trace: false, reasons: true }, items[0]).reasons!;
    const name = '100-row table';
    const off = paired(
      () => run({ trace: false }, next()).matched.length,
      () => runOld({ trace: false }, next()).matched.length,
      500,
      sink,
    );
    const onTraced = paired(
      () => run({ trace: false, reasons: true }, next()).reasons!.because.length,
      () => run({ trace: true }, next()).trace.length,
      200,
      sink,
    );
    const onUntraced = paired(
      () => run({ trace: false, reasons: true }, next()).reasons!.because.length,
      () => run({ trace: false }, next()).matched.length,
      200,
      sink,
    );
    const onBefore = paired(
      () => run({ trace: false, reasons: true }, next()).reasons!.because.length,
      () => runOld({ trace: false, reasons: true }, next()).reasons!.because.length,
      200,
      sink,
    );
    report(name, off, onTraced, onUntraced, onBefore);
    console.log(
      `${name.padEnd(15)} reasons of item 0: ${Buffer.byteLength(JSON.stringify(why))} bytes; "${why.sentence.slice(0, 110)}…"\n`,
    );
    rows.push({ subject: name, offVsBefore: off, onVsTraced: onTraced, onVsUntraced: onUntraced, onVsOnBefore: onBefore });
  }
  console.log(
    `load average at the end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    JSON.stringify({ bench: 'reasons', date: new Date().toISOString(), node: process.version, baseline: BASELINE, rows, sink: sink.n }),
  );
}

await main();
