/**
 * Every relative link and anchor of the project's Markdown resolves: the README, CONTRIBUTING,
 * docs/ (but not docs/_pending/, notes waiting to be placed), deploy/README.md, bench/RESULTS.md and
 * each package's README. Anchors are GitHub's heading slugs (github-slugger). Starts nothing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { Lexer, type Token, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';

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

/** Every token of a document, nested ones included (list items, table cells, emphasis…). */
function* walk(tokens: readonly Token[]): Generator<Token> {
  for (const t of tokens) {
    yield t;
    const any = t as Token & { tokens?: Token[]; items?: Tokens.ListItem[]; header?: Tokens.TableCell[]; rows?: Tokens.TableCell[][] };
    if (any.tokens) yield* walk(any.tokens);
    if (any.items) yield* walk(any.items);
    if (any.header) for (const cell of any.header) yield* walk(cell.tokens);
    if (any.rows) for (const row of any.rows) for (const cell of row) yield* walk(cell.tokens);
  }
}

/** The text a heading shows (what GitHub slugs): inline markup removed, code spans kept as text. */
function plainText(tokens: readonly Token[]): string {
  return tokens
    .map((t) => {
      const any = t as Token & { tokens?: Token[]; text?: string };
      if (any.tokens && any.tokens.length > 0) return plainText(any.tokens);
      return t.type === 'escape' || t.type === 'codespan' || t.type === 'text' ? (any.text ?? '') : (any.text ?? t.raw);
    })
    .join('');
}

/** The anchors GitHub makes for a document's headings (duplicates get `-1`, `-2`, …). */
export function anchorsOf(markdown: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const t of walk(Lexer.lex(markdown))) {
    if (t.type === 'heading') anchors.add(slugger.slug(plainText((t as Tokens.Heading).tokens)));
  }
  return anchors;
}

/** The link and image targets of a document, in order. */
export function linksOf(markdown: string): string[] {
  const out: string[] = [];
  for (const t of walk(Lexer.lex(markdown))) {
    if (t.type === 'link' || t.type === 'image') out.push((t as Tokens.Link | Tokens.Image).href);
  }
  return out;
}

/** What is wrong with `href` in `file` (relative to the root), or null when it resolves. */
function brokenLink(file: string, href: string, anchorCache: Map<string, Set<string>>): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return null; // http:, https:, mailto: — not checked here
  const [rawPath = '', anchor] = href.split('#', 2);
  const target = rawPath === '' ? path.join(root, file) : path.resolve(path.dirname(path.join(root, file)), decodeURIComponent(rawPath));
  if (!target.startsWith(root)) return `${href}: points outside the repository`;
  if (!existsSync(target)) return `${href}: no such file`;
  if (anchor === undefined || anchor === '') return null;
  if (statSync(target).isDirectory() || !target.endsWith('.md')) return `${href}: an anchor into something that is not a Markdown file`;
  let anchors = anchorCache.get(target);
  if (!anchors) {
    anchors = anchorsOf(readFileSync(target, 'utf8'));
    anchorCache.set(target, anchors);
  }
  return anchors.has(decodeURIComponent(anchor)) ? null : `${href}: no heading with the anchor #${anchor}`;
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
        const problem = brokenLink(file, href, cache);
        if (problem) broken.push(`${file}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
