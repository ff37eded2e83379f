/**
 * The decision table of `npm run bench:tables` and its data, apart so that other benches
 * (bench:coverage) measure the very same table: 100 rules on 4 inputs under `first`, the last a
 * catch-all, and 1,000 applicants, from fixed seeds.
 */

import type { FlowTableNode, TableOutputObject } from '@arbiter/contracts';

export const ROWS = 100;
export const ITEMS = 1000;
const COUNTRIES = ['NL', 'BE', 'DE', 'FR', 'ES', 'IT', 'PL', 'SE'];
const SEGMENTS = ['retail', 'business', 'public'];

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

/** One rule as plain conditions: the source both engines' cells are written from. */
export interface Cond {
  age: { op: '>=' | '<'; n: number } | null;
  countries: string[] | null;
  score: number | null;
  segment: string | null;
}

function makeRules(): Cond[] {
  const rnd = prng(24);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const rules: Cond[] = [];
  for (let i = 0; i < ROWS - 1; i++) {
    rules.push({
      age: rnd() < 0.9 ? { op: rnd() < 0.6 ? '>=' : '<', n: 18 + Math.floor(rnd() * 50) } : null,
      countries: rnd() < 0.9 ? [pick(COUNTRIES), pick(COUNTRIES)] : null,
      score: rnd() < 0.8 ? 300 + Math.floor(rnd() * 500) : null,
      segment: rnd() < 0.8 ? pick(SEGMENTS) : null,
    });
  }
  rules.push({ age: null, countries: null, score: null, segment: null });
  return rules;
}

function makeData(): { applicant: { age: number; country: string; score: number; segment: string } }[] {
  const rnd = prng(7);
  return Array.from({ length: ITEMS }, () => ({
    applicant: {
      age: 16 + Math.floor(rnd() * 60),
      country: COUNTRIES[Math.floor(rnd() * COUNTRIES.length)],
      score: 250 + Math.floor(rnd() * 600),
      segment: SEGMENTS[Math.floor(rnd() * SEGMENTS.length)],
    },
  }));
}

export const rules = makeRules();
export const data = makeData();
export const outputOf = (i: number): TableOutputObject => ({ tier: `t${i}`, discount: i % 20 });

export const table: FlowTableNode = {
  type: 'table',
  hitPolicy: 'first',
  inputs: [
    { name: 'age', path: 'applicant.age' },
    { name: 'country', path: 'applicant.country' },
    { name: 'score', path: 'applicant.score' },
    { name: 'segment', path: 'applicant.segment' },
  ],
  outputs: [{ name: 'tier' }, { name: 'discount' }],
  rules: rules.map((r, i) => ({
    when: [
      r.age ? `${r.age.op} ${r.age.n}` : '-',
      r.countries ? `is in ${JSON.stringify(r.countries)}` : '-',
      r.score !== null ? `>= ${r.score}` : '-',
      r.segment ? JSON.stringify(r.segment) : '-',
    ],
    then: outputOf(i),
  })),
};
