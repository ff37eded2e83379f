/**
 * `npm run bench:coverage`: what coverage and static checks cost, in one process.
 *
 * 1. Coverage of the 7-rule licence policy over 1,000 test cases (data varied so every condition
 *    is seen both ways), in alternating rounds: as `rules test` runs them without `--coverage`
 *    (`answerPolicy` per case, its answer compared with the case's expectation), and as it runs
 *    them with it (`PolicyCoverage.run` per case, compared alike, then the report). Likewise the
 *    100-rule table of bench:tables over its 1,000 applicants, as the registry runs a flow's saved
 *    tests: `runFlow` per case and its result compared, without and with `FlowCoverage` counting
 *    the rows matched (then its report). Target: with coverage ≤ 2× the time without.
 * 2. Static checks of a 1,000-rule × 10-input decision table (`checkTable`: overlaps by interval
 *    reasoning per column, gaps, unreachable rules, impossible cells), under `unique`, `first` and
 *    `any`. Target: each ≤ 1 s.
 *
 * A round runs the cases `BENCH_REPEAT` times (default 20: a single pass over 1,000 cases takes about
 * a millisecond, too short to time on a busy machine); times are given per pass. Prints medians of the
 * rounds and the ratios; one JSON line at the end. `BENCH_ROUNDS` (default 9).
 */

import type { FlowDefinition, FlowTableNode } from '@arbiter/contracts';
import { checkTable, FlowCoverage, runFlow } from '@arbiter/flow';
import { compile, PolicyCoverage } from '@arbiter/rule-lang';
import { answerPolicy, RUN_DEFAULTS, resolveRun, type PolicyAnswer } from '@arbiter/run';
import { cpus, loadavg } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';
import { data as TABLE_DATA, table as TIERS } from '../tables/table.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 20);
const CASES = 1000;
const TABLE_ROWS = 1000;
const TABLE_INPUTS = 10;

/** A small deterministic PRNG (mulberry32), so every run measures the same cases and table. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** 1,000 variations of the licence data: each field that a condition reads moves both ways. */
function licenceCases(): unknown[] {
  const rnd = prng(34);
  const base = LICENCE_DATA.applicant;
  return Array.from({ length: CASES }, () => ({
    applicant: {
      ...base,
      dateOfBirth: rnd() < 0.5 ? base.dateOfBirth : '2015-01-01',
      visionScore: rnd() < 0.5 ? 0.7 : 0.3,
      correctedVision: rnd() < 0.5 ? 0.9 : 0.4,
      exams: { theory: { score: rnd() < 0.7 ? 47 : 30, date: base.exams.theory.date } },
      offences: rnd() < 0.8 ? base.offences : [{ points: 5 }, { points: 1 }, { points: 1 }],
      ...(rnd() < 0.2 ? { ban: 'until 2030' } : {}),
      address: { ...base.address, country: rnd() < 0.8 ? 'NL' : 'US' },
    },
  }));
}

/** A saved case as `rules test` reads one: data and the expected result (and error code, if any). */
interface Case {
  name: string;
  data: Record<string, unknown>;
  expect: { result: boolean; errorCode?: string };
}

/** What `rules test` keeps of each case. */
interface CaseResult {
  name: string;
  passed: boolean;
  got: { result: boolean; errorCode: string | null };
}

function judged(c: Case, r: PolicyAnswer): CaseResult {
  const got = { result: r.result, errorCode: r.errorCode ?? null };
  const passed = got.result === c.expect.result && (c.expect.errorCode === undefined || c.expect.errorCode === got.errorCode);
  return { name: c.name, passed, got };
}

interface Ratio {
  plainMs: number;
  coveredMs: number;
  ratio: number;
  percent: number;
}

/** Medians of the rounds after the first (which warms both paths up), and of the per-round ratios. */
function summary(plain: number[], covered: number[], percent: number): Ratio {
  const ratios = plain.map((p, i) => covered[i] / p);
  return { plainMs: median(plain), coveredMs: median(covered), ratio: median(ratios), percent };
}

/** The licence policy's cases, run as `rules test` runs them (libs/cli/src/commands.ts `runTests`) without and with `--coverage`. */
function policyCoverage(): Ratio {
  const compiled = { policy: compile(LICENCE_POLICY) };
  // Expectations as written by someone who ran the policy: every case passes.
  const cases: Case[] = licenceCases().map((data, i) => {
    const r = compiled.policy.evaluate(data);
    return {
      name: `case ${i}`,
      data: data as Record<string, unknown>,
      expect: { result: r.result, ...(r.errorCode !== undefined && { errorCode: r.errorCode }) },
    };
  });
  const limits = { maxTraceBytes: Infinity };
  const plain: number[] = [];
  const covered: number[] = [];
  let percent = 0;
  let failed = 0;
  for (let round = 0; round < ROUNDS + 1; round++) {
    let t = performance.now();
    const plainResults: CaseResult[] = [];
    for (let pass = 0; pass < REPEAT; pass++) {
      for (const c of cases) {
        const run = resolveRun({ trace: false }, limits);
        plainResults.push(judged(c, answerPolicy(compiled, c.data, run)));
      }
    }
    const plainMs = (performance.now() - t) / REPEAT;
    t = performance.now();
    const coverage = new PolicyCoverage(compiled.policy, LICENCE_POLICY);
    const coveredResults: CaseResult[] = [];
    for (let pass = 0; pass < REPEAT; pass++) {
      for (const c of cases) {
        const run = resolveRun({ trace: false }, limits);
        coveredResults.push(judged(c, coverage.run(c.data, { stepBudget: run.stepBudget })));
      }
    }
    percent = coverage.report().summary.percent;
    const coveredMs = (performance.now() - t) / REPEAT;
    failed += [...plainResults, ...coveredResults].filter((r) => !r.passed).length;
    if (round > 0) {
      plain.push(plainMs);
      covered.push(coveredMs);
    }
  }
  if (failed > 0) throw new Error(`${failed} policy cases failed: the two runs must answer alike`);
  return summary(plain, covered, percent);
}

/** The bench:tables table's cases, run as the registry runs a flow's saved tests, without and with `FlowCoverage`. */
async function tableCoverage(): Promise<Ratio> {
  const def: FlowDefinition = { start: 'tiers', nodes: { tiers: TIERS } };
  const noPolicies = () => Promise.reject(new Error('no policy nodes'));
  const budget = RUN_DEFAULTS.stepBudget;
  const cases: Array<{ data: Record<string, unknown>; expect: unknown }> = [];
  for (const data of TABLE_DATA) cases.push({ data, expect: (await runFlow(def, data, noPolicies, budget, { trace: false })).result });
  const plain: number[] = [];
  const covered: number[] = [];
  let percent = 0;
  let failed = 0;
  for (let round = 0; round < ROUNDS + 1; round++) {
    let t = performance.now();
    for (let pass = 0; pass < REPEAT; pass++) {
      for (const c of cases) {
        const out = await runFlow(def, c.data, noPolicies, budget, { trace: false });
        if (out.error !== undefined || !isDeepStrictEqual(out.result, c.expect)) failed++;
      }
    }
    const plainMs = (performance.now() - t) / REPEAT;
    t = performance.now();
    const coverage = new FlowCoverage(def);
    for (let pass = 0; pass < REPEAT; pass++) {
      for (const c of cases) {
        const out = await runFlow(def, c.data, noPolicies, budget, { trace: false });
        coverage.record(out);
        if (out.error !== undefined || !isDeepStrictEqual(out.result, c.expect)) failed++;
      }
    }
    percent = coverage.report().summary.percent;
    const coveredMs = (performance.now() - t) / REPEAT;
    if (round > 0) {
      plain.push(plainMs);
      covered.push(coveredMs);
    }
  }
  if (failed > 0) throw new Error(`${failed} table cases failed: the two runs must answer alike`);
  return summary(plain, covered, percent);
}

/** A 1,000-rule × 10-input table: numeric ranges, enumerations and don't-cares, seeded. */
function bigTable(hitPolicy: FlowTableNode['hitPolicy']): FlowTableNode {
  const rnd = prng(1000);
  const colours = ['"red"', '"green"', '"blue"', '"black"', '"white"'];
  const inputs = Array.from({ length: TABLE_INPUTS }, (_, i) => ({ name: `in${i}`, path: `x.in${i}` }));
  const rules = Array.from({ length: TABLE_ROWS }, (_, r) => ({
    when: inputs.map((_, c) => {
      if (rnd() < 0.3) return '-';
      if (c % 3 === 2) return `is in [${colours[Math.floor(rnd() * colours.length)]}, ${colours[Math.floor(rnd() * colours.length)]}]`;
      const lo = Math.floor(rnd() * 1000);
      return rnd() < 0.5 ? `>= ${lo}` : `< ${lo}`;
    }),
    then: { out: r },
  }));
  return { type: 'table', hitPolicy, inputs, outputs: [{ name: 'out' }], rules };
}

function tableChecks(): Array<{ hitPolicy: string; ms: number; findings: number; complete: boolean }> {
  return (['unique', 'first', 'any'] as const).map((hitPolicy) => {
    const node = bigTable(hitPolicy);
    const times: number[] = [];
    let findings = 0;
    let complete = false;
    for (let round = 0; round < Math.max(3, Math.ceil(ROUNDS / 3)); round++) {
      const t = performance.now();
      const result = checkTable('big', node);
      times.push(performance.now() - t);
      findings = result.checks.length;
      complete = result.complete;
    }
    return { hitPolicy, ms: median(times), findings, complete };
  });
}

async function main(): Promise<void> {
  console.log(`bench:coverage on node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(2)}`);
  const cov = policyCoverage();
  console.log(
    `\n7-rule policy, ${CASES} cases as \`rules test\` runs them (per pass, median of ${ROUNDS} rounds of ${REPEAT}): plain ${cov.plainMs.toFixed(1)} ms, with coverage ${cov.coveredMs.toFixed(1)} ms` +
      ` → ${cov.ratio.toFixed(2)}× (target ≤ 2×); coverage reached ${cov.percent} %`,
  );
  const rows = await tableCoverage();
  console.log(
    `${TIERS.rules.length}-rule table, ${TABLE_DATA.length} cases as a flow's saved tests run (per pass, median of ${ROUNDS} rounds of ${REPEAT}): plain ${rows.plainMs.toFixed(1)} ms, with row coverage ${rows.coveredMs.toFixed(1)} ms` +
      ` → ${rows.ratio.toFixed(2)}× (target ≤ 2×); coverage reached ${rows.percent} %`,
  );
  const checks = tableChecks();
  console.log(`\nstatic checks of a ${TABLE_ROWS}-rule × ${TABLE_INPUTS}-input table (target ≤ 1,000 ms each):`);
  for (const c of checks) {
    console.log(`  ${c.hitPolicy.padEnd(7)} ${c.ms.toFixed(0).padStart(6)} ms   ${c.findings} findings, complete: ${c.complete}`);
  }
  const met = cov.ratio <= 2 && rows.ratio <= 2 && checks.every((c) => c.ms <= 1000 && c.complete);
  console.log(`\ntargets → ${met ? 'met' : 'NOT met'}`);
  console.log(
    JSON.stringify({
      bench: 'coverage',
      node: process.version,
      date: new Date().toISOString(),
      load: loadavg()[0],
      policy: cov,
      table: rows,
      tables: checks,
    }),
  );
}

await main();
