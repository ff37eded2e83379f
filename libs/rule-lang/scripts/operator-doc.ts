/**
 * Writes the operator table (§7.1) and the `list_operators` answer (§12.3) of docs/LANGUAGE.md
 * from the operator catalogue (src/operators/catalogue.ts), between their `<!-- operators:… -->`
 * markers. `npm run operators:doc` rewrites the file; `--check` only says whether it is current
 * (test/operator-doc.test.ts fails on any difference).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  CATALOGUE,
  isMeasureEntry,
  isOperatorEntry,
  listOperators,
  type CatalogueRow,
  type OperatorEntry,
} from '../src/operators/index.js';

export const LANGUAGE_DOC = fileURLToPath(new URL('../../../docs/LANGUAGE.md', import.meta.url));

const ROWS: readonly CatalogueRow[] = CATALOGUE;

const OPERAND_TEXT: Record<Exclude<OperatorEntry['operand'], 'string'>, string> = {
  valueOrPath: 'value or path',
  valueListOrPath: 'value, list or path',
  listOrPath: 'list or path',
  none: 'none',
  period: 'period',
};

/** The Operand column: a string operand is named after its placeholder (`"<format_name>"` → format name (string)). */
function operandText(e: OperatorEntry): string {
  if (e.operand !== 'string') return OPERAND_TEXT[e.operand];
  const placeholder = /<([a-z_]+)>/.exec(e.forms[0]);
  if (!placeholder) throw new Error(`${e.name}: a string operand needs a placeholder in its first form`);
  return `${placeholder[1].replace(/_/g, ' ')} (string)`;
}

const spans = (forms: readonly string[]): string => forms.map((f) => `\`${f}\``).join(', ');

/** The rows of the §7.1 table, as Markdown. */
export function operatorTable(): string {
  const rowOf = (name: string): number => ROWS.findIndex((r) => isOperatorEntry(r) && r.name === name) + 1;
  const negationRowOf = (name: string): number => ROWS.findIndex((r) => 'negationOf' in r && r.negationOf === name) + 1;
  const lines = ['| # | Canonical name | Accepted forms | Operand | Negative forms (§7.4) |', '|---|---|---|---|---|'];
  ROWS.forEach((row, i) => {
    let cells: string[];
    if (isOperatorEntry(row)) {
      const negative = row.negation.listedAs !== undefined ? `see row ${negationRowOf(row.name)}` : spans(row.negation.forms);
      cells = [row.name, spans(row.forms), operandText(row), negative];
    } else if (isMeasureEntry(row)) {
      cells = [row.name, spans(row.forms), '(measure, §5.6)', '—'];
    } else {
      const of = ROWS[rowOf(row.negationOf) - 1] as OperatorEntry;
      cells = [of.negation.listedAs ?? '', spans(of.negation.forms), operandText(of), `(negation of row ${rowOf(row.negationOf)})`];
    }
    lines.push(`| ${i + 1} | ${cells.join(' | ')} |`);
  });
  return lines.join('\n');
}

/** The JSON block of §12.3. */
export function operatorList(): string {
  const items = listOperators().map(
    (o) => `  {"operator": ${JSON.stringify(o.operator)}, "forms": [${o.forms.map((f) => JSON.stringify(f)).join(', ')}]}`,
  );
  return ['```json', '[', items.join(',\n'), ']', '```'].join('\n');
}

const BLOCKS = { table: operatorTable, list: operatorList } as const;

/** `text` (docs/LANGUAGE.md) with each generated block replaced by what the catalogue gives. */
export function withGeneratedBlocks(text: string): string {
  let out = text;
  for (const [name, render] of Object.entries(BLOCKS)) {
    const re = new RegExp(`(<!-- operators:${name} [^\\n]*-->\\n)[\\s\\S]*?(\\n<!-- /operators:${name} -->)`);
    if (!re.test(out)) throw new Error(`docs/LANGUAGE.md has no <!-- operators:${name} … --> block`);
    out = out.replace(re, (_m, open: string, close: string) => `${open}${render()}${close}`);
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = readFileSync(LANGUAGE_DOC, 'utf8');
  const fresh = withGeneratedBlocks(text);
  if (process.argv.includes('--check')) {
    if (fresh !== text) {
      console.error('docs/LANGUAGE.md is stale: run `npm run operators:doc -w @arbiter/rule-lang`');
      process.exit(1);
    }
    console.log('docs/LANGUAGE.md: operator blocks are current');
  } else if (fresh !== text) {
    writeFileSync(LANGUAGE_DOC, fresh);
    console.log('docs/LANGUAGE.md: operator blocks rewritten');
  } else {
    console.log('docs/LANGUAGE.md: operator blocks already current');
  }
}
