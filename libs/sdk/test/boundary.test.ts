/**
 * The client runs in browsers: its entry and the local runtime reach no Node built-in
 * and no package but the workspace's contracts, rule-lang, flow and run (its pure entry), and esbuild bundles them for
 * the browser. The only Node use, the cache file, imports `node:fs/promises` by a name bundlers do
 * not follow, and only when a `cacheFile` is given.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
const ALLOWED = ['@arbiter/contracts', '@arbiter/rule-lang', '@arbiter/flow', '@arbiter/run'];

/** Module specifiers of a TypeScript file: static imports and exports (`import type` excluded) and literal dynamic imports. */
function specifiers(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  const patterns = [
    /(?:^|[;\n}])\s*import\s+(?!type\s)(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/g,
    /(?:^|[;\n}])\s*export\s+(?!type\s)(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) out.push(m[1]);
  return out;
}

function reach(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) {
        const target = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
        expect(existsSync(target), `${file} imports ${spec}`).toBe(true);
        queue.push(target);
      } else packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec);
    }
  }
  return { files, packages };
}

describe('the browser client entry (@arbiter/sdk/client)', () => {
  it('reaches no local runtime, and of the packages only the zod-free error codes at run time', () => {
    const { files, packages } = reach(path.join(srcDir, 'client-entry.ts'));
    expect([...files].filter((f) => f.includes(`${path.sep}local${path.sep}`))).toEqual([]);
    expect([...packages]).toEqual(['@arbiter/contracts']);
    const valueImports = [...files].flatMap((f) => specifiers(readFileSync(f, 'utf8')).filter((s) => !s.startsWith('.')));
    expect([...new Set(valueImports)]).toEqual(['@arbiter/contracts/error-codes']);
  });

  it('bundles for the browser without zod, the rule language or a Node built-in', async () => {
    const result = await build({
      entryPoints: [path.join(srcDir, 'client-entry.ts')],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      metafile: true,
      outdir: 'out',
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((i) => /node_modules[\\/](zod|antlr4ng|ajv|re2js)[\\/]|rule-lang|libs[\\/]flow/.test(i))).toEqual([]);
    expect(inputs.some((i) => i.endsWith(path.join('contracts', 'dist', 'error-codes.js')))).toBe(true);
    const code = result.outputFiles.map((f) => f.text).join('\n');
    expect(code).not.toMatch(/from\s*["']node:/);
    expect(code).toMatch(/export \{[^}]*\bArbiterClient\b/);
  });
});

describe('the client entry', () => {
  it('reaches the local runtime (loaded on demand) and nothing outside the four workspace packages', () => {
    const { files, packages } = reach(path.join(srcDir, 'index.ts'));
    expect([...files].some((f) => f.endsWith(path.join('local', 'runtime.ts')))).toBe(true);
    expect([...packages].filter((p) => !ALLOWED.includes(p))).toEqual([]);
  });

  it('bundles for the browser with esbuild', async () => {
    const result = await build({
      entryPoints: [path.join(srcDir, 'index.ts'), path.join(srcDir, 'local', 'index.ts')],
      bundle: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      splitting: true,
      outdir: 'out',
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    const code = result.outputFiles.map((f) => f.text).join('\n');
    expect(code).not.toMatch(/from\s*["']node:/);
    expect(code).toContain('startLocalRuntime');
  });
});
