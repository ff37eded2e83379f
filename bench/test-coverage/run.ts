/**
 * `npm run bench:coverage`: what coverage and static checks cost, in one process.
 *
 * 1. Coverage of the 7-rule licence policy over 1,000 test cases (data varied so every condition
 *    is seen both ways): the cases run plainly (untraced, as `rules test` runs them without
 *    `--coverage`), and again counting coverage (`PolicyCoverage`), in alternating rounds.
 *    Target: with coverage ≤ 2× the time without.
 * 2. Static checks of a 1,000-rule × 10-input decision table (`checkTable`: overlaps by interval
 *    reasoning per column, gaps, unreachable rules, impossible cells), under `unique`, `first` and
 *    `any`. Target: each ≤ 1 s.
 *
 * Prints medians of the rounds and the ratios; one JSON line at the end. `BENCH_ROUNDS` (default 9).
 */

import type { FlowTableNode } from '@arbiter/contracts';
import { checkTable } from '@arbiter/flow';
import { compile, PolicyCoverage } from '@arbiter/rule-lang';
import { cpus, loadavg } from 'node:os';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
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

function policyCoverage(): { plainMs: number; coveredMs: number; ratio: number; percent: number } {
  const policy = compile(LICENCE_POLICY);
  const cases = licenceCases();
  const plain: number[] = [];
  const covered: number[] = [];
  let percent = 0;
  for (let round = 0; round < ROUNDS + 1; round++) {
    let t = performance.now();
    for (const data of cases) policy.evaluate(data, { trace: false });
    const plainMs = performance.now() - t;
    t = performance.now();
    const coverage = new PolicyCoverage(policy, LICENCE_POLICY);
    for (const data of cases) coverage.run(data);
    percent = coverage.report().summary.percent;
    const coveredMs = performance.now() - t;
    // The first round warms both paths up.
    if (round > 0) {
      plain.push(plainMs);
      covered.push(coveredMs);
    }
  }
  const ratios = plain.map((p, i) => covered[i] / p);
  return { plainMs: median(plain), coveredMs: median(covered), ratio: median(ratios), percent };
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

console.log(`bench:coverage on node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0].toFixed(2)}`);
const cov = policyCoverage();
console.log(
  `\n7-rule policy, ${CASES} cases (median of ${ROUNDS} rounds): plain ${cov.plainMs.toFixed(1)} ms, with coverage ${cov.coveredMs.toFixed(1)} ms` +
    ` → ${cov.ratio.toFixed(2)}× (target ≤ 2×); coverage reached ${cov.percent} %`,
);
const checks = tableChecks();
console.log(`\nstatic checks of a ${TABLE_ROWS}-rule × ${TABLE_INPUTS}-input table (target ≤ 1,000 ms each):`);
for (const c of checks) {
  console.log(`  ${c.hitPolicy.padEnd(7)} ${c.ms.toFixed(0).padStart(6)} ms   ${c.findings} findings, complete: ${c.complete}`);
}
const met = cov.ratio <= 2 && checks.every((c) => c.ms <= 1000);
console.log(`\ntargets → ${met ? 'met' : 'NOT met'}`);
console.log(JSON.stringify({ bench: 'coverage', node: process.version, date: new Date().toISOString(), policy: cov, tables: checks }));
