/**
 * No reference in the repository points at a document it lacks. Every tracked text file is read as
 * text (CHANGELOG.md excepted: it is history) and may not cite the architecture notes or the product
 * spec the project started from, a style guide, or an issue number: the decision is cited from
 * docs/design/ or docs/, or the reason is said in words. Every path to a Markdown file a text names
 * (`docs/api.md#conventions`, `../../docs/sdk.md`) and every relative link of every Markdown file
 * must resolve, anchors included. scripts/rewrite-doc-refs.mjs rewrites most references of the old
 * kinds. Starts nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokenLink, linksOf } from './markdown.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Not scanned: history, not references to follow; and the rewriting script, which has to name what
 * it rewrites and holds paths relative to the files it writes them into.
 */
const NOT_SCANNED = new Set(['CHANGELOG.md', 'scripts/rewrite-doc-refs.mjs']);

const TEXT =
  /\.(?:ts|tsx|mts|cts|js|mjs|cjs|json|md|ya?ml|sh|sql|g4|conf|html|css|example)$|(?:^|\/)(?:Dockerfile|\.gitignore|\.dockerignore|\.prettierignore|\.editorconfig)$/;

/**
 * References to documents the repository does not hold. Built from parts so that this file does not
 * match itself: the notes' file names, a spec or design section sign, an issue number.
 */
const OLD_REFERENCES: ReadonlyArray<[RegExp, string]> = [
  [new RegExp(`\\b${'DESIGN'}\\.md\\b`), 'the architecture notes are not in the repository: cite docs/design/*.md or docs/*.md'],
  [new RegExp(`\\b${'STYLE'}\\.md\\b`), 'the style guide is not in the repository: say the reason in words'],
  [new RegExp(`\\b(?:spec|design) ${'§'}`, 'i'), 'the spec and the notes are not in the repository: cite the doc that states it'],
  [new RegExp(`\\bspec/service-${'spec'}\\.md\\b`), 'the product spec is not in the repository: cite docs/api.md or docs/*.md'],
  [new RegExp(`\\b[Ii]ssues?[ -]#?${'\\d'}+`), 'issue numbers mean nothing in a clone: say the reason in words or cite the doc'],
];

/**
 * A path to a Markdown file in a text: from a top-level folder or `../`, or a root document, with an
 * optional `#anchor`. Not inside a longer path or URL (`…/blob/main/docs/x.md`).
 */
const MARKDOWN_PATH =
  /(?<![\w/.@-])((?:\.\.\/)+[\w./-]*?[\w-]+\.md|(?:docs|libs|services|bench|deploy|test|scripts|grammar)\/[\w./-]*?[\w-]+\.md|(?:README|CONTRIBUTING|REVIEW|CHANGELOG)\.md)(#[\w-]+)?\b/g;

/** The repository's tracked files (every file outside build output when git is not there). */
function trackedFiles(): string[] {
  try {
    return execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  } catch {
    const out: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
        if (['node_modules', 'dist', 'dist-bench', '.git', '.turbo', 'coverage'].includes(entry.name)) continue;
        const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
        if (entry.isDirectory()) walk(rel);
        else out.push(rel);
      }
    };
    walk('');
    return out;
  }
}

/** Every tracked text file that is scanned, with its text. */
function scannedFiles(): Array<{ file: string; text: string }> {
  return trackedFiles()
    .filter((f) => TEXT.test(f) && !NOT_SCANNED.has(f) && f !== 'package-lock.json' && existsSync(path.join(root, f)))
    .map((file) => ({ file, text: readFileSync(path.join(root, file), 'utf8') }));
}

/** Each line of `text` that cites a document the repository lacks, with the reason. */
export function oldReferences(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const [pattern, why] of OLD_REFERENCES) if (pattern.test(line)) found.push(`${i + 1}: ${line.trim()} (${why})`);
  });
  return found;
}

/** The Markdown paths `text` names, as links relative to the file (a path from the root made relative). */
export function markdownPaths(text: string, file: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(MARKDOWN_PATH)) {
    const [, target = '', anchor = ''] = m;
    const fromRoot = !target.startsWith('../');
    const rel = fromRoot ? path.relative(path.dirname(path.join(root, file)), path.join(root, target)) : target;
    out.push(`${rel.split(path.sep).join('/')}${anchor}`);
  }
  return out;
}

describe('references to documents', () => {
  it('finds the old kinds of reference, and the Markdown paths a text names', () => {
    const notes = ['DESIGN', 'md'].join('.');
    const sign = '§';
    expect(oldReferences(`/** Keys (${notes} ${sign}3). */`)).toHaveLength(1);
    expect(oldReferences(`// the limits (spec ${sign}8)`)).toHaveLength(1);
    expect(oldReferences(`it('forged cursors (is${'sue'} 20 item 7)')`)).toHaveLength(1);
    expect(oldReferences(`// see ${['STYLE', 'md'].join('.')}`)).toHaveLength(1);
    expect(oldReferences(`the is${'sue'}-19 target`)).toHaveLength(1);
    expect(oldReferences('/** Keys (docs/design/identity.md); LANGUAGE.md §8.1; tissue 3. */')).toEqual([]);
    // Spelt in pieces: this file is scanned too, and these paths are relative to another file.
    const up = '../'.repeat(3);
    expect(markdownPaths(`see ${'docs'}/api.md#conventions, ../../${'docs'}/sdk.md and ${'README'}.md`, 'libs/sdk/src/x.ts')).toEqual([
      `${up}docs/api.md#conventions`,
      '../../docs/sdk.md',
      `${up}README.md`,
    ]);
    expect(markdownPaths('https://github.com/o/r/blob/main/docs/x.md and a@docs/y.md', 'README.md')).toEqual([]);
  });

  it('no tracked text cites a document the repository lacks', () => {
    const found: string[] = [];
    for (const { file, text } of scannedFiles()) {
      for (const line of oldReferences(text)) found.push(`${file}:${line}`);
    }
    expect(found, 'node scripts/rewrite-doc-refs.mjs rewrites most of these').toEqual([]);
  });

  it('every Markdown path a text names, and every relative link of a Markdown file, resolves', () => {
    const cache = new Map<string, Set<string>>();
    const broken: string[] = [];
    for (const { file, text } of scannedFiles()) {
      const targets = markdownPaths(text, file);
      if (file.endsWith('.md')) targets.push(...linksOf(text));
      for (const href of new Set(targets)) {
        const problem = brokenLink(root, file, href, cache);
        if (problem) broken.push(`${file}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
