import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EventKind, EventResourceType } from '@arbiter/contracts';
import { EVENT_KINDS, EVENT_RESOURCE_TYPES } from '@arbiter/contracts/event-kinds';

// Issue 21 item 9: the console takes the API's shapes and event kinds from libs/contracts, never its
// own copies, and keeps the contracts' schemas (zod) and anything Node-only out of the browser bundle.
const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');
const require = createRequire(import.meta.url);

/** Entry points of @arbiter/contracts the browser may import values from: plain data, no zod. */
const BROWSER_ENTRIES = ['@arbiter/contracts/access', '@arbiter/contracts/event-kinds'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(path.join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [path.join(dir, e.name)] : [],
  );
}

/** Every `import … from '<spec>'` statement of a module: its specifier and whether it is type-only. */
function imports(text: string): Array<{ spec: string; typeOnly: boolean }> {
  return [...text.matchAll(/^import\s+(type\s+)?[^;]*?from\s+'([^']+)';/gms)].map((m) => ({ spec: m[2]!, typeOnly: m[1] !== undefined }));
}

describe('the console and libs/contracts', () => {
  it('imports values from @arbiter/contracts only through its browser entries; the rest is types', () => {
    const offenders: string[] = [];
    for (const file of sources(src)) {
      for (const i of imports(readFileSync(file, 'utf8'))) {
        if (!i.spec.startsWith('@arbiter/contracts')) continue;
        if (!i.typeOnly && !BROWSER_ENTRIES.includes(i.spec)) offenders.push(`${path.relative(src, file)}: ${i.spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('keeps no copy of the API types (src/lib/types.ts is gone)', () => {
    expect(sources(src).map((f) => path.relative(src, f))).not.toContain(path.join('lib', 'types.ts'));
  });

  it('the browser entries import nothing but each other: no zod, no node: modules', () => {
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const i of imports(readFileSync(file, 'utf8'))) {
        expect(i.spec.startsWith('.'), `${file} imports ${i.spec}`).toBe(true);
        visit(path.resolve(path.dirname(file), i.spec));
      }
    };
    for (const entry of BROWSER_ENTRIES) visit(require.resolve(entry));
    expect(seen.size).toBeGreaterThanOrEqual(BROWSER_ENTRIES.length);
  });

  it('the plain lists are the zod enums’ values', () => {
    expect([...EVENT_KINDS]).toEqual(EventKind.options);
    expect(EVENT_KINDS).toContain('imported');
    expect([...EVENT_RESOURCE_TYPES]).toEqual(EventResourceType.options);
  });
});
