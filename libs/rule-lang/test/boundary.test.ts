/**
 * The library entry stays pure (the language library does no I/O: docs/architecture.md#the-rule-engine): walking the static import graph of
 * src/index.ts never reaches node:fs, node:net, nats, pg or ioredis; the `rules` executable lives in
 * another package (libs/cli).
 */

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
const FORBIDDEN = ['fs', 'fs/promises', 'net', 'nats', 'pg', 'ioredis'];
/** The only packages the library may load; a new one must be added here on purpose. */
const ALLOWED_PACKAGES = ['antlr4ng', 're2js', 'ajv', 'ajv-formats'];

/** Every module specifier of a TypeScript file: static imports/exports, `import type` excluded, dynamic imports and require. */
function specifiers(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  const patterns = [
    /(?:^|[;\n}])\s*import\s+(?!type\s)(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/g,
    /(?:^|[;\n}])\s*export\s+(?!type\s)(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
    /\brequire\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) out.push(m[1]);
  return out;
}

/** Package name of a bare specifier (`node:` prefix dropped, `@scope/name`, subpaths dropped). */
function packageOf(spec: string): string {
  const s = spec.replace(/^node:/, '');
  const parts = s.split('/');
  return s.startsWith('@') ? parts.slice(0, 2).join('/') : FORBIDDEN.includes(s) ? s : parts[0];
}

function walk(entry: string): { files: Set<string>; packages: Map<string, string[]> } {
  const files = new Set<string>();
  const packages = new Map<string, string[]>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) {
        const resolved = path.resolve(path.dirname(file), spec).replace(/\.js$/, '.ts');
        const target = existsSync(resolved) ? resolved : path.join(resolved, 'index.ts');
        expect(existsSync(target), `${path.relative(srcDir, file)} imports ${spec}, which does not resolve`).toBe(true);
        queue.push(target);
      } else {
        const pkg = packageOf(spec);
        packages.set(pkg, [...(packages.get(pkg) ?? []), path.relative(srcDir, file)]);
      }
    }
  }
  return { files, packages };
}

describe('library boundary', () => {
  const { files, packages } = walk(path.join(srcDir, 'index.ts'));

  it('the specifier scanner sees the imports it should', () => {
    expect(
      specifiers(
        "import { a } from './a.js';\nimport type { B } from 'b';\nexport * from \"node:fs\";\nexport { c } from 'nats';\nconst x = await import('pg');\nimport 'ioredis';",
      ),
    ).toEqual(['./a.js', 'ioredis', 'node:fs', 'nats', 'pg']);
    expect(files.size).toBeGreaterThan(10);
  });

  it('has no command-line code: the `rules` executable is libs/cli', () => {
    expect(existsSync(path.join(srcDir, 'cli'))).toBe(false);
    expect([...files].filter((f) => path.relative(srcDir, f).split(path.sep)[0] === 'cli')).toEqual([]);
  });

  it('never imports node:fs, node:net, nats, pg or ioredis', () => {
    const hits = FORBIDDEN.filter((p) => packages.has(p)).map((p) => `${p} (from ${packages.get(p)!.join(', ')})`);
    expect(hits).toEqual([]);
  });

  it('loads only the allowed packages and no Node built-ins', () => {
    const unexpected = [...packages.keys()].filter((p) => !ALLOWED_PACKAGES.includes(p));
    expect(unexpected.map((p) => `${p} (from ${packages.get(p)!.join(', ')})`)).toEqual([]);
  });
});
