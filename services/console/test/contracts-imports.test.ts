import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EventKind, EventResourceType } from '@arbiter/contracts';
import { EVENT_KINDS, EVENT_RESOURCE_TYPES } from '@arbiter/contracts/event-kinds';

// The console takes the API's shapes and event kinds from libs/contracts, never its
// own copies, and keeps the contracts' schemas (zod) and anything Node-only out of the browser bundle.
// It calls the API through the SDK's browser entry, `@arbiter/sdk/client`.
const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
const require = createRequire(import.meta.url);

/** Entry points of @arbiter/contracts the browser may import values from: plain data, no zod. */
const CONTRACT_ENTRIES = ['@arbiter/contracts/access', '@arbiter/contracts/event-kinds', '@arbiter/contracts/error-codes'];
/** Every package entry the console's code may import values from. */
const BROWSER_ENTRIES = [...CONTRACT_ENTRIES, '@arbiter/sdk/client'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [path.join(dir, e.name)] : [],
  );
}

/** Every `import … from '<spec>'` (and `export … from`) statement of a module: its specifier and whether it is type-only. */
function imports(text: string): Array<{ spec: string; typeOnly: boolean }> {
  return [...text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?from\s+'([^']+)';/gms)].map((m) => ({
    spec: m[2]!,
    typeOnly: m[1] !== undefined,
  }));
}

describe('the console and libs/contracts', () => {
  it('imports values from @arbiter/contracts only through its browser entries; the rest is types', () => {
    const offenders: string[] = [];
    for (const file of sources(src)) {
      for (const i of imports(readFileSync(file, 'utf8'))) {
        if (!i.spec.startsWith('@arbiter/contracts') && !i.spec.startsWith('@arbiter/sdk')) continue;
        if (!i.typeOnly && !BROWSER_ENTRIES.includes(i.spec)) offenders.push(`${path.relative(src, file)}: ${i.spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('keeps no copy of the API types (src/lib/types.ts is gone)', () => {
    expect(sources(src).map((f) => path.relative(src, f))).not.toContain(path.join('lib', 'types.ts'));
  });

  it('the browser entries import nothing but their own modules and the contracts’ plain entries: no zod, no node: modules', () => {
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const i of imports(readFileSync(file, 'utf8'))) {
        if (i.typeOnly) continue;
        if (i.spec.startsWith('.')) visit(path.resolve(path.dirname(file), i.spec));
        else {
          expect(CONTRACT_ENTRIES, `${file} imports ${i.spec}`).toContain(i.spec);
          visit(require.resolve(i.spec));
        }
      }
    };
    for (const entry of BROWSER_ENTRIES) visit(require.resolve(entry));
    expect([...seen].some((f) => f.endsWith(path.join('sdk', 'dist', 'client.js')))).toBe(true);
    expect([...seen].filter((f) => f.includes(`${path.sep}local${path.sep}`))).toEqual([]);
  });

  it('calls the API through the SDK: no fetch of its own', () => {
    const fetching = sources(src).filter((f) => /\bfetch\(/.test(readFileSync(f, 'utf8')));
    expect(fetching.map((f) => path.relative(src, f))).toEqual([]);
  });

  it('the plain lists are the zod enums’ values', () => {
    expect([...EVENT_KINDS]).toEqual(EventKind.options);
    expect(EVENT_KINDS).toContain('imported');
    expect([...EVENT_RESOURCE_TYPES]).toEqual(EventResourceType.options);
  });
});
