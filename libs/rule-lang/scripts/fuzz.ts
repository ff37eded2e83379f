/**
 * The long metamorphic fuzz run: `npm run fuzz -- --count 1000000 [--seed N] [--relation NAME]`.
 * Generates `count` cases in all, shared evenly among the relations (each relation its own seeded
 * fast-check run), checks every pair each relation makes of them, prints a progress line now and
 * then and a summary line with the pairs checked and the failures, and exits 1 on any failure after
 * printing each failing relation's counterexample shrunk to a minimal case.
 */

import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { RELATIONS } from '../test/support/metamorphic/relations.js';
import { caseArb, checkCase, type Tally } from '../test/support/metamorphic/run.js';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    seed: { type: 'string' },
    relation: { type: 'string', multiple: true },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log('usage: npm run fuzz -- [--count N] [--seed N] [--relation NAME]…');
  console.log('relations:');
  for (const r of RELATIONS) console.log(`  ${r.name.padEnd(26)} ${r.says}`);
  process.exit(0);
}

const count = Number(values.count);
const seed = values.seed === undefined ? Date.now() ^ (process.pid << 8) : Number(values.seed);
if (!Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(seed)) {
  console.error('--count must be a positive integer and --seed an integer');
  process.exit(2);
}
const chosen = values.relation?.length ? RELATIONS.filter((r) => values.relation!.includes(r.name)) : RELATIONS;
if (!chosen.length) {
  console.error(`no such relation: ${values.relation?.join(', ')}; --help lists them`);
  process.exit(2);
}

const perRelation = Math.max(1, Math.ceil(count / chosen.length));
const total: Tally = { cases: 0, pairs: 0 };
const failed: { relation: string; replay: string; report: string }[] = [];
const started = Date.now();
let lastProgress = started;

console.log(`metamorphic fuzz: seed ${seed}, ${perRelation} cases for each of ${chosen.length} relations`);
for (const [i, relation] of chosen.entries()) {
  const tally: Tally = { cases: 0, pairs: 0 };
  // Derived from the relation's place in RELATIONS, so `--seed S --relation NAME` replays the same cases.
  const relationSeed = (seed + RELATIONS.indexOf(relation) * 0x9e3779b1) | 0;
  const property = fc.property(caseArb, (c) => {
    checkCase(relation, c, tally);
    if (tally.cases % 100 === 0 && Date.now() - lastProgress > 10_000) {
      lastProgress = Date.now();
      console.log(
        `[${((lastProgress - started) / 1000).toFixed(1)}s] ${i + 1}/${chosen.length} ${relation.name}: ${tally.cases} cases, ${tally.pairs} pairs so far`,
      );
    }
  });
  const details = fc.check(property, {
    seed: relationSeed,
    numRuns: perRelation,
    endOnFailure: false,
  });
  // Cases and pairs include those checked while shrinking a failure.
  total.cases += tally.cases;
  total.pairs += tally.pairs;
  lastProgress = Date.now();
  const status = details.failed ? `FAILED after ${details.numRuns} cases (${details.numShrinks} shrinks)` : 'ok';
  console.log(
    `[${((lastProgress - started) / 1000).toFixed(1)}s] ${i + 1}/${chosen.length} ${relation.name}: ${tally.pairs} pairs, ${status}; total ${total.pairs} pairs`,
  );
  if (details.failed) {
    failed.push({
      relation: relation.name,
      replay: `npm run fuzz -- --seed ${seed} --relation ${relation.name} --count ${perRelation}`,
      report: String(details.errorInstance),
    });
  }
}

for (const f of failed) {
  console.log(`\n=== ${f.relation}: shrunk counterexample (replay: ${f.replay}) ===`);
  console.log(f.report.replace(/^Error: /, ''));
}
console.log(
  `\nmetamorphic fuzz: seed ${seed}, ${total.cases} cases, ${total.pairs} pairs checked, ${failed.length} failures` +
    (failed.length ? ` (${failed.map((f) => f.relation).join(', ')})` : '') +
    `, ${((Date.now() - started) / 1000).toFixed(1)}s`,
);
process.exit(failed.length ? 1 : 0);
