/**
 * The requirements manifest (requirements.ts) stays true: every requirement names tests, every named
 * file and title exists, and the known gaps are printed on every run. Reads the test sources as text;
 * starts nothing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { KNOWN_GAPS, REQUIREMENTS } from './requirements.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether `source` declares a test or suite with exactly this title (`it`, `test`, `describe`, with `.each(...)` or other modifiers). */
function declaresTitle(source: string, title: string): boolean {
  const call = String.raw`\b(?:it|test|describe)(?:\.\w+)*(?:\([^()]*\))?\(\s*`;
  return new RegExp(`${call}(['"\`])${escapeRegExp(title)}\\1`).test(source);
}

/** Every `*.test.ts` file of the repository, outside node_modules and build output. */
function testFiles(dir = root, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', 'dist-bench', '.git', '.turbo', 'coverage'].includes(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) testFiles(full, out);
    else if (entry.name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

describe('the requirements manifest', () => {
  it('finds titles the way they are written', () => {
    const source = [
      "it('a plain title', async () => {});",
      'it.each(SERVICES)("%s with a twist", async () => {});',
      "describe(\n  'a wrapped suite title',\n  () => {});",
      'it(`a template title`, () => {});',
    ].join('\n');
    for (const title of ['a plain title', '%s with a twist', 'a wrapped suite title', 'a template title']) {
      expect(declaresTitle(source, title), title).toBe(true);
    }
    expect(declaresTitle(source, 'a plain')).toBe(false);
    expect(declaresTitle("const s = 'a plain title';", 'a plain title')).toBe(false);
  });

  it('gives every requirement and known gap its own id', () => {
    const ids = [...REQUIREMENTS.map((r) => r.id), ...KNOWN_GAPS.map((g) => g.id)];
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it('names at least one test for every requirement that is not a known gap', () => {
    const untested = REQUIREMENTS.filter((r) => r.coveredBy.length === 0 || r.coveredBy.some((c) => c.tests.length === 0)).map((r) => r.id);
    expect(untested, 'add tests, or move the requirement to KNOWN_GAPS with the reason').toEqual([]);
  });

  it('names only test files and titles that exist', () => {
    const missing: string[] = [];
    for (const r of REQUIREMENTS) {
      for (const c of r.coveredBy) {
        const file = path.join(root, c.file);
        if (!existsSync(file)) {
          missing.push(`${r.id}: no file ${c.file}`);
          continue;
        }
        const source = readFileSync(file, 'utf8');
        for (const t of c.tests) if (!declaresTitle(source, t)) missing.push(`${r.id}: no test "${t}" in ${c.file}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('prints the known gaps: requirements without a test yet', () => {
    const lines = KNOWN_GAPS.map((g) => `  - ${g.id}: ${g.title} (${g.why})`);
    console.info(`Known gaps, not covered by any test yet (${KNOWN_GAPS.length}):\n${lines.join('\n')}`);
    for (const g of KNOWN_GAPS) expect(g.why.length, g.id).toBeGreaterThan(0);
  });
});

describe('test habits (CONTRIBUTING.md#habits)', () => {
  it('no test mocks a module, skips, or leaves a todo', () => {
    // Built from parts so that this file does not match itself.
    const banned = [
      ['vi', 'mock('],
      ['vi', 'doMock('],
      ['.sk', 'ip('],
      ['.to', 'do('],
      ['.on', 'ly('],
      ['skip', 'If('],
      ['run', 'If('],
    ].map((p) => p.join(p[0] === 'vi' ? '.' : ''));
    const found: string[] = [];
    for (const file of testFiles()) {
      const source = readFileSync(file, 'utf8');
      for (const b of banned) if (source.includes(b)) found.push(`${path.relative(root, file)}: ${b}`);
    }
    expect(found).toEqual([]);
  });
});
