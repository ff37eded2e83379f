import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const committed = path.join(packageDir, 'src/generated');
const fresh = mkdtempSync(path.join(tmpdir(), 'rule-lang-grammar-'));

afterAll(() => rmSync(fresh, { recursive: true, force: true }));

describe('generated parser', () => {
  it('matches what `npm run grammar` produces from grammar/RuleLang.g4', () => {
    const run = spawnSync(process.execPath, ['scripts/generate-parser.mjs', '--out', fresh], {
      cwd: packageDir,
      encoding: 'utf8',
    });
    expect(run.status, `generator failed: ${run.stderr}`).toBe(0);
    const files = readdirSync(fresh).sort();
    expect(files).toEqual(readdirSync(committed).sort());
    for (const f of files) {
      const stale = readFileSync(path.join(committed, f), 'utf8') !== readFileSync(path.join(fresh, f), 'utf8');
      expect(stale, `src/generated/${f} is stale: run \`npm run grammar\` and commit the result`).toBe(false);
    }
  }, 60_000);
});
