/**
 * The import graph of src/ has no cycle: stages depend one way (api-types ← evaluate ←
 * compile ← index). madge reads every import, `import type` included, and resolves the `.js`
 * specifiers to the TypeScript files; the graph is checked to be the whole of src/ and a planted
 * cycle to be found, so the check cannot pass by reading nothing.
 */

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The import graph of the TypeScript files under `dir`, with madge's own view of what it skipped. */
async function graphOf(dir: string, tsConfig: string) {
  const result = await madge(dir, { fileExtensions: ['ts'], tsConfig });
  return { cycles: result.circular(), files: Object.keys(result.obj()), graph: result.obj(), skipped: result.warnings().skipped };
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}

describe('import graph', () => {
  const tsConfig = path.join(root, 'tsconfig.json');

  it('src/ has no import cycle', { timeout: 60_000 }, async () => {
    const src = path.join(root, 'src');
    const { cycles, files, graph, skipped } = await graphOf(src, tsConfig);
    expect(files.sort()).toEqual(tsFiles(src));
    expect(skipped).toEqual([]);
    // Type-only imports are edges too: an import circle once ran through one.
    expect(graph['api-types.ts']).toEqual([]);
    expect(graph['compile/policy.ts']).toContain('evaluate/evaluate.ts');
    expect(cycles).toEqual([]);
  });

  const fixture = mkdtempSync(path.join(tmpdir(), 'rule-lang-cycle-'));
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it('finds a cycle when there is one (a.ts → b.ts → a.ts, through an import type)', { timeout: 60_000 }, async () => {
    writeFileSync(path.join(fixture, 'a.ts'), "import type { B } from './b.js';\nexport type A = B | 1;\n");
    writeFileSync(
      path.join(fixture, 'b.ts'),
      "import { c } from './c.js';\nimport type { A } from './a.js';\nexport type B = A | typeof c;\n",
    );
    writeFileSync(path.join(fixture, 'c.ts'), 'export const c = 3;\n');
    const { cycles } = await graphOf(fixture, tsConfig);
    expect(cycles).toEqual([['a.ts', 'b.ts']]);
  });
});
