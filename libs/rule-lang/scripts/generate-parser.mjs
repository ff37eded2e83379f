#!/usr/bin/env node
// Regenerates the ANTLR parser of grammar/RuleLang.g4 into src/generated (or --out DIR) with
// antlr4ng-cli. Needs Java 17+. The output is committed; test/grammar-stale.test.ts fails when it
// differs from what this script produces.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outFlag = process.argv.indexOf('--out');
const outDir = outFlag > 0 ? path.resolve(process.argv[outFlag + 1]) : path.join(packageDir, 'src/generated');
const cli = createRequire(import.meta.url).resolve('antlr4ng-cli/index.js');

mkdirSync(outDir, { recursive: true });
for (const f of readdirSync(outDir)) rmSync(path.join(outDir, f));

// Relative grammar path and fixed cwd keep the generated header identical on every machine.
const run = spawnSync(
  process.execPath,
  [cli, '-Dlanguage=TypeScript', '-no-listener', '-no-visitor', '-Xexact-output-dir', '-o', outDir, '../../grammar/RuleLang.g4'],
  { cwd: packageDir, stdio: 'inherit' },
);
if (run.status !== 0) {
  console.error('antlr4ng-cli failed (is Java 17+ on PATH?)');
  process.exit(run.status ?? 1);
}
for (const f of readdirSync(outDir)) if (!f.endsWith('.ts')) rmSync(path.join(outDir, f));
console.log(`generated ${readdirSync(outDir).join(', ')} in ${path.relative(process.cwd(), outDir) || '.'}`);
