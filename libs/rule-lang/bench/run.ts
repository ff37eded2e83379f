/**
 * `npm run bench -w @arbiter/rule-lang`: evaluation against a hand-written function,
 * json-rules-engine and cel-js in the same run; trace vs no-trace; parse+compile for 1/20/200
 * rules; two pathological inputs; the per-call overhead on a policy of cheap comparisons. Prints a table, the ratios against the language targets (docs/performance.md#the-rule-language-benchmark), and
 * one JSON line per figure (`grep '^{'`). Never fails on speed; fails if any answer is wrong.
 */

import { readFileSync } from 'node:fs';
import { compile, type CompiledPolicy, type EvaluateOptions } from '../src/index.js';
import {
  DEPTH,
  GENERATED_DATA,
  ITEMS,
  LARGE_ARRAY_POLICY,
  deepData,
  deepHandWritten,
  deepPolicy,
  generatePolicy,
  largeArrayData,
  largeArrayHandWritten,
} from './generate.js';
import { formatNs, measureInterleaved, median, table, timeRuns, type Measurement } from './harness.js';
import { LOAN_POLICY, loanData, loanHandWritten } from './overhead.js';
import { POLICY, buildCel, buildJsonRulesEngine, handWritten, passingData } from './policy.js';

const started = Date.now();
const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const date = new Date().toISOString();
const jsonLines: string[] = [];
const emit = (row: Record<string, unknown>) => jsonLines.push(JSON.stringify({ ...row, date, version, node: process.version }));
const log = (s = '') => process.stdout.write(`${s}\n`);

log(`@arbiter/rule-lang ${version} benchmark, node ${process.version}, ${date}`);
log('times are CPU time of this process (bench/harness.ts); "wall" is the wall-clock median of the same samples');
log();

// ---------------------------------------------------------------------------------------------
// 1–2. Evaluation of the driving-licence policy, four ways.

const data = passingData();
const policy: CompiledPolicy = compile(POLICY);
const OFF: EvaluateOptions = { trace: false };
const ON: EvaluateOptions = { trace: true };
/** The 10k-element trace takes more steps than the traced default budget (LANGUAGE.md §8.1) allows: measured with the untraced one. */
const BIG_TRACED: EvaluateOptions = { trace: true, stepBudget: 1_000_000 };
const engine = buildJsonRulesEngine();
const cel = buildCel();

// Sanity before timing: every variant says "granted" for the bench data.
if (!policy.evaluate(data, OFF).result || !handWritten(data).result || !(await engine.run(data)) || !cel(data)) {
  throw new Error('the bench data must pass the policy in every implementation');
}
if (policy.evaluate(data, ON).trace.length === 0) throw new Error('trace mode produced no trace');

log('evaluation of the 7-rule policy (median of 9 interleaved samples)');
const evalRows: Measurement[] = await measureInterleaved([
  {
    name: 'hand-written JS',
    loop: (n) => {
      let ok = 0;
      for (let i = 0; i < n; i++) if (handWritten(data).result) ok++;
      return ok;
    },
  },
  {
    name: 'rule-lang evaluate (trace:false)',
    loop: (n) => {
      let ok = 0;
      for (let i = 0; i < n; i++) if (policy.evaluate(data, OFF).result) ok++;
      return ok;
    },
  },
  {
    name: 'rule-lang evaluate (trace:true)',
    loop: (n) => {
      let ok = 0;
      for (let i = 0; i < n; i++) {
        const r = policy.evaluate(data, ON);
        if (r.result && r.trace.length > 0) ok++;
      }
      return ok;
    },
  },
  {
    name: '@marcbachmann/cel-js',
    loop: (n) => {
      let ok = 0;
      for (let i = 0; i < n; i++) if (cel(data)) ok++;
      return ok;
    },
  },
  {
    name: 'json-rules-engine (awaited)',
    loop: async (n) => {
      let ok = 0;
      for (let i = 0; i < n; i++) if (await engine.run(data)) ok++;
      return ok;
    },
  },
]);

const ns = (name: string) => evalRows.find((m) => m.name === name)!.nsPerOp;
const rl = ns('rule-lang evaluate (trace:false)');
log(
  table(
    ['implementation', 'ns/op', 'min', 'max', 'wall', 'ops/s', 'vs rule-lang'],
    evalRows.map((m) => [
      m.name,
      m.nsPerOp.toFixed(0),
      m.minNsPerOp.toFixed(0),
      m.maxNsPerOp.toFixed(0),
      m.wallNsPerOp.toFixed(0),
      Math.round(1e9 / m.nsPerOp).toLocaleString('en-US'),
      `${(m.nsPerOp / rl).toFixed(2)}×`,
    ]),
  ),
);
for (const m of evalRows)
  emit({
    name: `eval/${m.name}`,
    nsPerOp: Math.round(m.nsPerOp * 10) / 10,
    minNsPerOp: Math.round(m.minNsPerOp),
    maxNsPerOp: Math.round(m.maxNsPerOp),
    wallNsPerOp: Math.round(m.wallNsPerOp * 10) / 10,
    ops: m.ops,
  });
log();

// ---------------------------------------------------------------------------------------------
// 2b. Per-call overhead: 7 rules of 9 cheap comparisons, where the setup of a call shows.

log('per-call overhead: 7 rules, 9 comparisons, no trace (median of 21 interleaved samples)');
const loan = loanData();
const loanPolicy: CompiledPolicy = compile(LOAN_POLICY);
if (JSON.stringify(loanPolicy.evaluate(loan).outcomes) !== JSON.stringify(loanHandWritten(loan).outcomes)) {
  throw new Error('the loan policy and its hand-written function must agree on the bench data');
}
// Each answer goes to a sink the loop keeps, as a caller would keep it: no side can have its
// result objects optimised away.
let sink: unknown = null;
const overheadRows: Measurement[] = await measureInterleaved(
  [
    {
      name: 'hand-written JS',
      loop: (n) => {
        let ok = 0;
        for (let i = 0; i < n; i++) {
          const r = loanHandWritten(loan);
          sink = r;
          if (r.result) ok++;
        }
        return ok;
      },
    },
    {
      name: 'rule-lang evaluate (no options)',
      loop: (n) => {
        let ok = 0;
        for (let i = 0; i < n; i++) {
          const r = loanPolicy.evaluate(loan);
          sink = r;
          if (r.result) ok++;
        }
        return ok;
      },
    },
    {
      name: 'rule-lang evaluate (trace:false)',
      loop: (n) => {
        let ok = 0;
        for (let i = 0; i < n; i++) {
          const r = loanPolicy.evaluate(loan, OFF);
          sink = r;
          if (r.result) ok++;
        }
        return ok;
      },
    },
  ],
  { totalMs: 1500, samples: 21 },
);
if (sink === null) throw new Error('no answer kept');
const loanHand = overheadRows[0].nsPerOp;
log(
  table(
    ['implementation', 'ns/op', 'min', 'max', 'wall', 'vs hand-written'],
    overheadRows.map((m) => [
      m.name,
      m.nsPerOp.toFixed(0),
      m.minNsPerOp.toFixed(0),
      m.maxNsPerOp.toFixed(0),
      m.wallNsPerOp.toFixed(0),
      `${(m.nsPerOp / loanHand).toFixed(2)}×`,
    ]),
  ),
);
const overheadRatio = overheadRows[2].nsPerOp / loanHand;
log(`evaluate / hand-written, 7 rules, 9 comparisons, no trace: ${overheadRatio.toFixed(2)}× (target ≤ 3×), node ${process.version}`);
for (const m of overheadRows)
  emit({
    name: `overhead/${m.name}`,
    nsPerOp: Math.round(m.nsPerOp * 10) / 10,
    minNsPerOp: Math.round(m.minNsPerOp),
    maxNsPerOp: Math.round(m.maxNsPerOp),
    wallNsPerOp: Math.round(m.wallNsPerOp * 10) / 10,
    ops: m.ops,
  });
log();

// ---------------------------------------------------------------------------------------------
// 3. Parse + compile for 1, 20 and 200 rules.

log('parse + check + compile (median of warm runs; first = first call for that text)');
const compileRows: { rules: number; medianNs: number; firstNs: number; runs: number; chars: number }[] = [];
const generatedNow = { now: Date.parse('2025-06-15T12:00:00Z') };
for (const [rules, runs, warmup] of [
  [1, 400, 100],
  [20, 60, 20],
  [200, 25, 5],
] as const) {
  const text = generatePolicy(rules);
  const t = timeRuns(
    () => compile(text),
    runs,
    warmup,
    (p) => {
      if (p.outcomes.length !== rules) throw new Error(`generated policy: ${p.outcomes.length} rules, want ${rules}`);
    },
  );
  // The generated policy must also evaluate cleanly (it is a real policy, not just text).
  const r = compile(text).evaluate(GENERATED_DATA, generatedNow);
  if (r.error !== undefined) throw new Error(`generated ${rules}-rule policy: ${r.error}`);
  compileRows.push({ rules, medianNs: median(t.runs), firstNs: t.first, runs, chars: text.length });
}
const c20 = compileRows.find((r) => r.rules === 20)!.medianNs;
const c200 = compileRows.find((r) => r.rules === 200)!.medianNs;
log(
  table(
    ['rules', 'chars', 'median', 'per rule', 'first call', 'runs'],
    compileRows.map((r) => [
      String(r.rules),
      String(r.chars),
      formatNs(r.medianNs),
      formatNs(r.medianNs / r.rules),
      formatNs(r.firstNs),
      String(r.runs),
    ]),
  ),
);
log(`growth 200 rules / 20 rules: ${(c200 / c20).toFixed(2)}× (10× = linear)`);
for (const r of compileRows) {
  emit({
    name: `compile/${r.rules}-rules`,
    nsPerOp: Math.round(r.medianNs),
    nsPerRule: Math.round(r.medianNs / r.rules),
    firstNs: Math.round(r.firstNs),
    runs: r.runs,
  });
}
log();

// ---------------------------------------------------------------------------------------------
// 4. Pathological inputs: 64-deep data, 10k-element array.

log('pathological inputs (median of interleaved samples)');
const deep = deepData();
const deepCompiled = compile(deepPolicy());
const big = largeArrayData();
const bigCompiled = compile(LARGE_ARRAY_POLICY);
if (!deepCompiled.evaluate(deep, OFF).result || !deepHandWritten(deep)) throw new Error('deep data must pass');
if (!bigCompiled.evaluate(big, OFF).result || !largeArrayHandWritten(big)) throw new Error('large array must pass');
const deepCompile = timeRuns(
  () => compile(deepPolicy()),
  50,
  10,
  () => {},
);
const patho: Measurement[] = [
  ...(await measureInterleaved(
    [
      {
        name: `${DEPTH}-deep path: rule-lang`,
        loop: (n) => {
          let ok = 0;
          for (let i = 0; i < n; i++) if (deepCompiled.evaluate(deep, OFF).result) ok++;
          return ok;
        },
      },
      {
        name: `${DEPTH}-deep path: hand-written`,
        loop: (n) => {
          let ok = 0;
          for (let i = 0; i < n; i++) if (deepHandWritten(deep)) ok++;
          return ok;
        },
      },
    ],
    { totalMs: 500, samples: 7 },
  )),
  ...(await measureInterleaved(
    [
      {
        name: `${ITEMS / 1000}k-element all+any: rule-lang`,
        loop: (n) => {
          let ok = 0;
          for (let i = 0; i < n; i++) if (bigCompiled.evaluate(big, OFF).result) ok++;
          return ok;
        },
      },
      {
        name: `${ITEMS / 1000}k-element all+any: hand-written`,
        loop: (n) => {
          let ok = 0;
          for (let i = 0; i < n; i++) if (largeArrayHandWritten(big)) ok++;
          return ok;
        },
      },
      {
        name: `${ITEMS / 1000}k-element all+any: rule-lang trace:true`,
        loop: (n) => {
          let ok = 0;
          for (let i = 0; i < n; i++) if (bigCompiled.evaluate(big, BIG_TRACED).result) ok++;
          return ok;
        },
      },
    ],
    { totalMs: 700, samples: 5, warmupMs: 300 },
  )),
];
log(
  table(
    ['input', 'ns/op', 'per element / level', 'min', 'max', 'wall'],
    patho.map((m) => [
      m.name,
      formatNs(m.nsPerOp),
      formatNs(m.nsPerOp / (m.name.startsWith(`${DEPTH}`) ? DEPTH : ITEMS)),
      formatNs(m.minNsPerOp),
      formatNs(m.maxNsPerOp),
      formatNs(m.wallNsPerOp),
    ]),
  ),
);
log(`compile of the ${DEPTH}-deep rule: ${formatNs(median(deepCompile.runs))}`);
for (const m of patho)
  emit({
    name: `pathological/${m.name}`,
    nsPerOp: Math.round(m.nsPerOp * 10) / 10,
    minNsPerOp: Math.round(m.minNsPerOp),
    maxNsPerOp: Math.round(m.maxNsPerOp),
    wallNsPerOp: Math.round(m.wallNsPerOp * 10) / 10,
    ops: m.ops,
  });
emit({ name: `pathological/compile ${DEPTH}-deep rule`, nsPerOp: Math.round(median(deepCompile.runs)) });
log();

// ---------------------------------------------------------------------------------------------
// Ratios against the language and SDK targets (docs/performance.md).

const ratios: { name: string; value: number; target: string; met: boolean }[] = [
  { name: 'rule-lang / hand-written', value: rl / ns('hand-written JS'), target: '≤ 3×', met: rl / ns('hand-written JS') <= 3 },
  { name: 'rule-lang / hand-written, 9 comparisons', value: overheadRatio, target: '≤ 3×', met: overheadRatio <= 3 },
  {
    name: 'json-rules-engine / rule-lang',
    value: ns('json-rules-engine (awaited)') / rl,
    target: '≥ 10×',
    met: ns('json-rules-engine (awaited)') / rl >= 10,
  },
  { name: 'cel-js / rule-lang', value: ns('@marcbachmann/cel-js') / rl, target: '> 1×', met: ns('@marcbachmann/cel-js') / rl > 1 },
  {
    name: 'trace / no-trace',
    value: ns('rule-lang evaluate (trace:true)') / rl,
    target: '≤ 5×',
    met: ns('rule-lang evaluate (trace:true)') / rl <= 5,
  },
  { name: 'compile 200 rules (ms)', value: c200 / 1e6, target: '≤ 50 ms', met: c200 / 1e6 <= 50 },
  { name: 'compile growth 200/20 rules', value: c200 / c20, target: '≈10× or less', met: c200 / c20 <= 11 },
];
log(`targets (node ${process.version})`);
log(
  table(
    ['ratio', 'value', 'target', 'met'],
    ratios.map((r) => [r.name, r.value.toFixed(2), r.target, r.met ? 'yes' : 'NO']),
  ),
);
for (const r of ratios) emit({ name: `ratio/${r.name}`, value: Math.round(r.value * 100) / 100, target: r.target, met: r.met });
log();

log('machine-readable rows');
for (const line of jsonLines) log(line);
log();
log(`total bench time: ${((Date.now() - started) / 1000).toFixed(1)} s`);
