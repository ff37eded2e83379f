/**
 * No package's src/ has an import cycle, and folders kept apart stay apart. madge reads
 * every import of each package's TypeScript (`import type` included) with that package's own
 * tsconfig; each graph is checked to hold every file of src/ with nothing skipped, so the check
 * cannot pass by reading nothing. Imports of other packages resolve into node_modules and are not
 * followed: each package is judged on its own.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every workspace package with a src/ folder, as `libs/x` or `services/y`. */
const packages = ['libs', 'services'].flatMap((group) =>
  readdirSync(path.join(root, group), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(root, group, d.name, 'src')))
    .map((d) => `${group}/${d.name}`),
);

/**
 * Cycles known and left for now, each with why: the test fails on any other cycle and on an entry here
 * that no longer holds, so the list only shrinks.
 */
const KNOWN_CYCLES: Record<string, string[][]> = {};

/**
 * Imports a package's src/ must not have, as `[importer, imported]` path prefixes under src/. The
 * gateway's `http/` (what every route shares) and `identity/` (orgs, members, keys, authentication)
 * meet only in neutral modules, which import neither: `caller.ts` (the caller and the authenticator
 * the HTTP hooks use) and `errors.ts` (rate counting is `@arbiter/key-auth`, another package).
 */
const FORBIDDEN_IMPORTS: Record<string, Array<[string, string]>> = {
  'services/gateway': [
    ['http/', 'identity/'],
    ['identity/', 'http/'],
    ...['caller.ts', 'errors.ts'].flatMap((neutral): Array<[string, string]> => [
      [neutral, 'http/'],
      [neutral, 'identity/'],
    ]),
  ],
};

/** Each import of `graph` (file → the files it imports) that one of `rules` forbids, as `importer → imported`. */
function forbidden(graph: Record<string, string[]>, rules: Array<[string, string]>): string[] {
  return Object.entries(graph).flatMap(([file, imports]) =>
    imports.filter((to) => rules.some(([a, b]) => file.startsWith(a) && to.startsWith(b))).map((to) => `${file} → ${to}`),
  );
}

/** A bare specifier (a package or one of its subpaths): not resolving one into a file is not a gap in the graph. */
const isPackage = (specifier: string): boolean => !specifier.startsWith('.') && !specifier.startsWith('/');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}

describe('import graph of every package', () => {
  it('finds the packages', () => {
    expect(packages).toEqual(expect.arrayContaining(['libs/contracts', 'libs/rule-lang', 'services/gateway', 'services/console']));
  });

  it('knows the packages its folder rules name', () => {
    expect(packages).toEqual(expect.arrayContaining(Object.keys(FORBIDDEN_IMPORTS)));
  });

  it.each(packages)('%s/src has no import cycle and keeps its folders apart', { timeout: 120_000 }, async (pkg) => {
    const src = path.join(root, pkg, 'src');
    const result = await madge(src, {
      fileExtensions: ['ts', 'tsx'],
      tsConfig: path.join(root, pkg, 'tsconfig.json'),
      // Workspace packages resolve through symlinks to their dist/: not followed.
      dependencyFilter: (file: string) => file.startsWith(src + path.sep),
    });
    const files = Object.keys(result.obj()).filter((f) => /\.tsx?$/.test(f));
    expect(files.sort()).toEqual(sourceFiles(src));
    expect(result.warnings().skipped.filter((s) => !isPackage(s))).toEqual([]);
    expect(result.circular()).toEqual(KNOWN_CYCLES[pkg] ?? []);
    expect(forbidden(result.obj(), FORBIDDEN_IMPORTS[pkg] ?? [])).toEqual([]);
  });
});

/** Each workspace package's name and the workspace packages it depends on (`dependencies`: what ships). */
function workspaceDependencies(): Map<string, string[]> {
  const deps = new Map<string, string[]>();
  for (const pkg of packages) {
    const json = JSON.parse(readFileSync(path.join(root, pkg, 'package.json'), 'utf8')) as {
      name: string;
      dependencies?: Record<string, string>;
    };
    deps.set(
      json.name,
      Object.keys(json.dependencies ?? {}).filter((d) => d.startsWith('@arbiter/')),
    );
  }
  return deps;
}

/** The packages each may depend on at most, bottom up: the run layer sits on the language and flows, below every door. */
const LAYERS: Record<string, string[]> = {
  '@arbiter/contracts': [],
  '@arbiter/rule-lang': [],
  '@arbiter/flow': ['@arbiter/contracts', '@arbiter/rule-lang'],
  '@arbiter/run': ['@arbiter/contracts', '@arbiter/rule-lang', '@arbiter/flow'],
};

describe('package dependencies', () => {
  const deps = workspaceDependencies();

  it('have no circle (no package reaches itself through what it depends on)', () => {
    const reaches = (from: string, seen = new Set<string>()): Set<string> => {
      for (const d of deps.get(from) ?? []) {
        if (seen.has(d)) continue;
        seen.add(d);
        reaches(d, seen);
      }
      return seen;
    };
    expect([...deps.keys()].filter((name) => reaches(name).has(name))).toEqual([]);
  });

  it('point down only: the run layer and what it stands on depend on nothing above them, and no library on a service', () => {
    expect([...deps.keys()]).toEqual(expect.arrayContaining(Object.keys(LAYERS)));
    for (const [name, allowed] of Object.entries(LAYERS)) {
      expect(
        deps.get(name)!.filter((d) => d !== name && !allowed.includes(d)),
        name,
      ).toEqual([]);
    }
    const services = new Set(packages.filter((p) => p.startsWith('services/')).map((p) => `@arbiter/${p.split('/')[1]}`));
    for (const lib of packages.filter((p) => p.startsWith('libs/'))) {
      const name = `@arbiter/${lib.split('/')[1]}`;
      expect(
        deps.get(name)!.filter((d) => services.has(d)),
        name,
      ).toEqual([]);
    }
  });
});
