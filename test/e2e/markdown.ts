/**
 * What the Markdown checks read from a document: the anchors GitHub makes for its headings, and its
 * link targets. Shared by docs-links.test.ts and doc-refs.test.ts.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import { Lexer, type Token, type Tokens } from 'marked';

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

/**
 * What is wrong with `href`, a link in `file` (relative to `root`), or null when it resolves: the
 * file exists inside the repository and, with `#anchor`, is Markdown with that heading. A URL with a
 * scheme (http:, mailto:) is not checked. `anchorCache` keeps each target's anchors between calls.
 */
export function brokenLink(root: string, file: string, href: string, anchorCache: Map<string, Set<string>>): string | null {
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
