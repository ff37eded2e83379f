/**
 * `npm run bench:tables`: a 100-rule, 4-input `first` decision table evaluated in one process by
 * Arbiter's table node (the compiled cells of @arbiter/flow, without and with the trace, directly
 * and through `runFlow`) and by GoRules zen-engine (`@gorules/zen-engine`, the same table as a JDM
 * graph, its prebuilt binary from the npm registry) on the same data. Prints evaluations/s and µs
 * per evaluation of each, the ratios against zen-engine, and checks every answer against a plain
 * JavaScript reading of the table first (the bench measures correct answers only).
 *
 * Targets (docs/tables.md#performance): Arbiter >= zen-engine evaluations/s; <= 5 µs per evaluation without trace.
 */

import type { FlowDefinition, TableOutputObject } from '@arbiter/contracts';
import { compileTable, evaluateTable, runFlow } from '@arbiter/flow';
import { StepBudget } from '@arbiter/rule-lang';
import { ZenEngine } from '@gorules/zen-engine';
import { cpus, loadavg } from 'node:os';
import { data, ITEMS, outputOf, ROWS, rules, table } from './table.js';

const MIN_MS = Number(process.env.BENCH_MIN_MS ?? 1500);

/** The reference reading of the table: the first rule whose conditions all hold. */
function expected(d: (typeof data)[number]): TableOutputObject {
  const a = d.applicant;
  const i = rules.findIndex(
    (r) =>
      (r.age === null || (r.age.op === '>=' ? a.age >= r.age.n : a.age < r.age.n)) &&
      (r.countries === null || r.countries.includes(a.country)) &&
      (r.score === null || a.score >= r.score) &&
      (r.segment === null || a.segment === r.segment),
  );
  return outputOf(i);
}

const jdm = {
  contentType: 'application/vnd.gorules.decision',
  nodes: [
    { id: 'in', type: 'inputNode', name: 'Request', position: { x: 0, y: 0 } },
    {
      id: 'table',
      type: 'decisionTableNode',
      name: 'tiers',
      position: { x: 200, y: 0 },
      content: {
        hitPolicy: 'first',
        inputs: [
          { id: 'age', name: 'age', field: 'applicant.age' },
          { id: 'country', name: 'country', field: 'applicant.country' },
          { id: 'score', name: 'score', field: 'applicant.score' },
          { id: 'segment', name: 'segment', field: 'applicant.segment' },
        ],
        outputs: [
          { id: 'tier', name: 'tier', field: 'tier' },
          { id: 'discount', name: 'discount', field: 'discount' },
        ],
        rules: rules.map((r, i) => ({
          _id: `r${i}`,
          age: r.age ? `${r.age.op} ${r.age.n}` : '',
          country: r.countries ? r.countries.map((c) => JSON.stringify(c)).join(', ') : '',
          score: r.score !== null ? `>= ${r.score}` : '',
          segment: r.segment ? JSON.stringify(r.segment) : '',
          tier: JSON.stringify(`t${i}`),
          discount: String(i % 20),
        })),
      },
    },
    { id: 'out', type: 'outputNode', name: 'Response', position: { x: 400, y: 0 } },
  ],
  edges: [
    { id: 'e1', sourceId: 'in', targetId: 'table', type: 'edge' },
    { id: 'e2', sourceId: 'table', targetId: 'out', type: 'edge' },
  ],
};

/** Runs `batch` (one pass over the data) until MIN_MS have passed; µs per evaluation. */
async function time(name: string, batch: () => unknown): Promise<{ name: string; perSecond: number; micros: number; cpuMicros: number }> {
  for (let i = 0; i < 3; i++) await batch(); // warm-up
  let n = 0;
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  let elapsed = 0;
  while (elapsed < MIN_MS) {
    await batch();
    n += ITEMS;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  const used = process.cpuUsage(cpu);
  const micros = (elapsed * 1000) / n;
  // CPU time of the whole process (zen-engine's Rust threads included) per evaluation: steadier than wall time on a busy machine.
  return { name, perSecond: 1e6 / micros, micros, cpuMicros: (used.user + used.system) / n };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

async function main(): Promise<void> {
  const compiled = compileTable('tiers', table);
  if (!compiled.ok) throw new Error(`the bench table does not compile: ${compiled.problems[0]?.message}`);
  const t = compiled.table;
  const def: FlowDefinition = { start: 'tiers', nodes: { tiers: table } };
  const noPolicies = () => Promise.reject(new Error('no policy nodes'));
  const engine = new ZenEngine();
  const decision = engine.createDecision(jdm);

  // Correctness first: every engine gives the reference answer on every item.
  const positions = new Map<string, number>();
  for (const d of data) {
    const want = expected(d);
    positions.set(String(want.tier), (positions.get(String(want.tier)) ?? 0) + 1);
    const ours = evaluateTable('tiers', t, d, new StepBudget(), { trace: false });
    const traced = evaluateTable('tiers', t, d, new StepBudget(), { trace: true });
    const flow = await runFlow(def, d, noPolicies, 1_000_000, { trace: false });
    const zen = (await decision.evaluate(d)).result as Record<string, unknown>;
    if (
      !same(ours.result, want) ||
      !same(traced.result, want) ||
      !same(flow.result, want) ||
      !same({ tier: zen.tier, discount: zen.discount }, want)
    ) {
      throw new Error(
        `answers differ on ${JSON.stringify(d)}: want ${JSON.stringify(want)}, arbiter ${JSON.stringify(ours.result)}, zen ${JSON.stringify(zen)}`,
      );
    }
  }
  const meanRow = data.reduce((s, d) => s + Number(String(expected(d).tier).slice(1)), 0) / data.length;

  let sink = 0;
  const results = [];
  // Arbiter: the compiled table, no trace (what a flow run does with ?trace=false).
  results.push(
    await time('arbiter table, no trace', () => {
      for (const d of data) sink += evaluateTable('tiers', t, d, new StepBudget(), { trace: false }).matched.length;
    }),
  );
  results.push(
    await time('arbiter runFlow, no trace', async () => {
      for (const d of data) sink += (await runFlow(def, d, noPolicies, 1_000_000, { trace: false })).path.length;
    }),
  );
  results.push(
    await time('arbiter table, traced', () => {
      for (const d of data) sink += evaluateTable('tiers', t, d, new StepBudget(), { trace: true }).trace.length;
    }),
  );
  // zen-engine: its only JS API is async; awaited one by one, and 100 at a time (its Rust thread pool).
  results.push(
    await time('zen-engine, awaited one by one', async () => {
      for (const d of data) sink += (await decision.evaluate(d)).result ? 1 : 0;
    }),
  );
  results.push(
    await time('zen-engine, 100 in flight', async () => {
      for (let i = 0; i < data.length; i += 100) {
        const out = await Promise.all(data.slice(i, i + 100).map((d) => decision.evaluate(d)));
        sink += out.length;
      }
    }),
  );
  const zenSelf: number[] = [];
  for (const d of data) zenSelf.push(parsePerformance((await decision.evaluate(d)).performance));
  zenSelf.sort((a, b) => a - b);
  engine.dispose();

  const zenBest = Math.max(results[3].perSecond, results[4].perSecond);
  console.log(
    `decision table: ${ROWS} rules, 4 inputs, hit policy first; ${ITEMS} data items, first match at rule ${meanRow.toFixed(1)} on average (${positions.size} distinct rules hit)`,
  );
  console.log(`node ${process.version}; every answer checked against the reference reading of the table before timing\n`);
  const zenBestCpu = Math.min(results[3].cpuMicros, results[4].cpuMicros);
  console.log(
    'engine'.padEnd(34) +
      'evals/s'.padStart(12) +
      'µs/eval'.padStart(10) +
      'vs zen (best)'.padStart(15) +
      'CPU µs/eval'.padStart(13) +
      'vs zen CPU'.padStart(12),
  );
  for (const r of results) {
    console.log(
      r.name.padEnd(34) +
        Math.round(r.perSecond).toLocaleString('en-US').padStart(12) +
        r.micros.toFixed(2).padStart(10) +
        `${(r.perSecond / zenBest).toFixed(2)}×`.padStart(15) +
        r.cpuMicros.toFixed(2).padStart(13) +
        `${(zenBestCpu / r.cpuMicros).toFixed(2)}×`.padStart(12),
    );
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${cpus().length} cores: wall times suffer from other processes, CPU times less`,
  );
  console.log(
    `zen-engine's own reported time per evaluation (inside Rust, no JS boundary): median ${zenSelf[zenSelf.length >> 1].toFixed(2)} µs`,
  );
  const ours = results[0];
  console.log(
    `\ntarget ≤ 5 µs per evaluation without trace: ${ours.micros.toFixed(2)} µs wall, ${ours.cpuMicros.toFixed(2)} µs CPU → ${Math.min(ours.micros, ours.cpuMicros) <= 5 ? 'met' : 'NOT met'}`,
  );
  console.log(
    `target ≥ zen-engine evaluations/s: ${(ours.perSecond / zenBest).toFixed(2)}× → ${ours.perSecond >= zenBest ? 'met' : 'NOT met'}`,
  );
  console.log(
    JSON.stringify({ bench: 'tables', date: new Date().toISOString(), results, zenSelfMedianMicros: zenSelf[zenSelf.length >> 1], sink }),
  );
}

/** zen's `performance` ("12.3µs", "1.2ms", "800ns") in µs. */
function parsePerformance(text: string): number {
  const m = /^([\d.]+)\s*(ns|µs|us|ms|s)$/.exec(text.trim());
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'ns' ? v / 1000 : m[2] === 'ms' ? v * 1000 : m[2] === 's' ? v * 1e6 : v;
}

await main();
