/**
 * Lists the language reference (docs/LANGUAGE.md, the repository's copy) states, read from it so
 * that tests of every package compare the code with the document instead of with a second
 * hand-typed copy (`@arbiter/test-kit/language-doc`): the
 * operator table (§7.1), the `list_operators` answer (§12.3), the period units (§6.5) and the
 * format names (§7.3.11). Each reader throws when the document no longer has the shape it reads.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// From src/ and from dist/ alike: libs/test-kit/<dir>/ → the repository root.
const DOC = fileURLToPath(new URL('../../../docs/LANGUAGE.md', import.meta.url));
let cached: string | undefined;
const doc = (): string => (cached ??= readFileSync(DOC, 'utf8'));

/** The body of the section whose heading starts with `heading` (up to the next heading of any level). */
export function section(heading: string): string {
  const lines = doc().split('\n');
  const start = lines.findIndex((l) => /^#{2,4} /.test(l) && l.replace(/^#+ /, '').startsWith(heading));
  if (start < 0) throw new Error(`docs/LANGUAGE.md has no section "${heading}"`);
  const end = lines.findIndex((l, i) => i > start && /^#{1,4} /.test(l) && !inFence(lines, i));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** Whether line `i` is inside a ``` fence (a `#` comment in an example is no heading). */
function inFence(lines: readonly string[], i: number): boolean {
  return lines.slice(0, i).filter((l) => l.startsWith('```')).length % 2 === 1;
}

/** The `code` spans of a piece of Markdown, in order. */
function codeSpans(s: string): string[] {
  return [...s.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
}

/** The rows of the first table of a section, as cells (header and separator dropped). */
function tableRows(body: string): string[][] {
  const rows = body
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .map((l) =>
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  if (rows.length < 3) throw new Error('expected a Markdown table');
  return rows.slice(2);
}

/** One row of the operator table of §7.1. */
export interface OperatorRow {
  canonical: string;
  /** Accepted forms as written, operand placeholders included (`has the format "<format_name>"`). */
  forms: string[];
  /** Negative forms (§7.4) as written; none where the row refers to another row. */
  negative: string[];
}

/** The operator table of §7.1, row by row. */
export function operatorTable(): OperatorRow[] {
  return tableRows(section('7.1 Operator table')).map(([, canonical, forms, , negative]) => ({
    canonical,
    forms: codeSpans(forms),
    negative: codeSpans(negative),
  }));
}

/** A form with its operand dropped, from the first placeholder on: `is within <n> days` → `is within`. */
export function phraseOf(form: string): string {
  return form.replace(/\s+"?<[a-z_]+>.*$/, '');
}

/** Every accepted and negative form of §7.1 as a phrase (placeholders dropped), in table order, once each. */
export function allForms(): string[] {
  return [...new Set(operatorTable().flatMap((r) => [...r.forms, ...r.negative].map(phraseOf)))];
}

/** The measures of §5.6, listed in the table for discoverability (rows whose operand is a measure). */
export function measureForms(): string[] {
  const rows = tableRows(section('7.1 Operator table')).filter((r) => r[3].includes('measure'));
  return rows.flatMap((r) => codeSpans(r[2]));
}

/** The `list_operators` answer of §12.3. */
export function documentedOperatorList(): { operator: string; forms: string[] }[] {
  const fence = /```json\n([\s\S]*?)\n```/.exec(section('12.3 list_operators'));
  if (!fence) throw new Error('§12.3 has no JSON block');
  return JSON.parse(fence[1]) as { operator: string; forms: string[] }[];
}

/** The period units of §6.5 with their plurals (`century` → `centuries`, otherwise + `s`). */
export function periodUnits(): { unit: string; plural: string }[] {
  const line = /Units, singular or plural:([\s\S]*?)\n\n/.exec(section('6.5 Periods'));
  if (!line) throw new Error('§6.5 lists no units');
  const spans = [...line[1].matchAll(/`([a-z]+)`(?:\s*\(`([a-z]+)`\))?/g)];
  return spans.map((m) => ({ unit: m[1], plural: m[2] ?? `${m[1]}s` }));
}

/** The units §6.5 gives calendar arithmetic ("Months, years, decades and centuries use calendar arithmetic"). */
export function calendarUnits(): string[] {
  const bullet = /\* ([A-Z][\w ,]+?) use \*\*calendar arithmetic\*\*/.exec(section('6.5 Periods'));
  if (!bullet) throw new Error('§6.5 names no calendar units');
  const plurals = bullet[1].split(/,\s*|\s+and\s+/).map((w) => w.toLowerCase());
  const units = periodUnits();
  return plurals.map((p) => {
    const unit = units.find((u) => u.plural === p);
    if (!unit) throw new Error(`§6.5: "${p}" is not the plural of a listed unit`);
    return unit.unit;
  });
}

/** The format names of §7.3.11, in table order. */
export function formatNames(): string[] {
  return tableRows(section('7.3.11 Format checks')).map(([name]) => codeSpans(name)[0]);
}
