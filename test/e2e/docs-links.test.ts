/**
 * Every relative link and anchor of the project's Markdown resolves: the README, CONTRIBUTING,
 * docs/ (but not docs/_pending/, notes waiting to be placed), deploy/README.md, bench/RESULTS.md and
 * each package's README. Anchors are GitHub's heading slugs (github-slugger). Starts nothing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchorsOf, brokenLink, linksOf } from './markdown.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The Markdown files whose links are checked, relative to the root. */
function documents(): string[] {
  const files = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'deploy/README.md', 'bench/RESULTS.md'];
  files.push(
    ...readdirSync(path.join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  );
  for (const dir of ['libs', 'services']) {
    for (const pkg of readdirSync(path.join(root, dir))) {
      if (existsSync(path.join(root, dir, pkg, 'README.md'))) files.push(`${dir}/${pkg}/README.md`);
    }
  }
  return files;
}

describe('links in the Markdown', () => {
  it('finds links in tables and lists, and anchors as GitHub slugs them', () => {
    const md = [
      '# Title',
      '## 8.1 The step budget  [D-step-budget]',
      '## `and`, `or`, and **more**',
      '## Title',
      '',
      '| a | b |',
      '|---|---|',
      '| [x](one.md) | ![y](two.png) |',
      '',
      '* [z](three.md#part)',
      '',
      '```sh',
      'echo "[not](a-link.md)"',
      '```',
    ].join('\n');
    expect(linksOf(md)).toEqual(['one.md', 'two.png', 'three.md#part']);
    expect([...anchorsOf(md)]).toEqual(['title', '81-the-step-budget--d-step-budget', 'and-or-and-more', 'title-1']);
  });

  it('resolves every relative link and anchor of the README, CONTRIBUTING, docs/ and the package READMEs', () => {
    const cache = new Map<string, Set<string>>();
    const broken: string[] = [];
    const files = documents();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/getting-started.md', 'deploy/README.md']));
    for (const file of files) {
      for (const href of linksOf(readFileSync(path.join(root, file), 'utf8'))) {
        const problem = brokenLink(root, file, href, cache);
        if (problem) broken.push(`${file}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
