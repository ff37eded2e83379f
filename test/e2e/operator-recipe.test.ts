/**
 * Walks CONTRIBUTING.md's "Adding an operator": the files its table names exist, at most four of
 * them are edited by hand outside the tests, and every entry of the operator catalogue reaches each
 * place the recipe says derives from it — the grammar, LANGUAGE.md's table and list, the console's
 * highlighting and MCP's `list_operators` (through the gateway, on a stack of execution, mcp and
 * gateway).
 */

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { StringStream, type StreamParser } from '@codemirror/language';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { validate } from '@arbiter/rule-lang';
import { CATALOGUE, isOperatorEntry, listOperators, phraseOf, type CatalogueRow, type OperandKind } from '@arbiter/rule-lang/operators';
import { documentedOperatorList, operatorTable } from '@arbiter/test-kit/language-doc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ROWS: readonly CatalogueRow[] = CATALOGUE;

let stack: Stack;
/** The console's highlighter, loaded from its source (the console package exports nothing). */
let ruleParser: StreamParser<unknown>;

beforeAll(async () => {
  const syntax = pathToFileURL(path.join(root, 'services/console/src/lib/rule-syntax.ts')).href;
  ({ ruleParser } = (await import(syntax)) as { ruleParser: StreamParser<unknown> });
  stack = await startStack({ services: ['execution', 'mcp', 'gateway'] });
});

afterAll(async () => {
  await stack?.stop();
});

/** The body of CONTRIBUTING.md's "## Adding an operator" section. */
function recipe(): string {
  const text = readFileSync(path.join(root, 'CONTRIBUTING.md'), 'utf8');
  const start = text.indexOf('\n## Adding an operator\n');
  expect(start, 'CONTRIBUTING.md has no "Adding an operator" section').toBeGreaterThan(0);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The rows of the recipe's table: the file (or folder) and what is done to it. */
function steps(): { file: string; what: string }[] {
  return [...recipe().matchAll(/^\| \d+ \| `([^`]+)` \| (.+) \|$/gm)].map((m) => ({ file: m[1], what: m[2] }));
}

/** The words of a line as the console's highlighter styles them. */
function styles(line: string): (string | null)[] {
  const state = ruleParser.startState!(2);
  const stream = new StringStream(line, 2, 2);
  const out: (string | null)[] = [];
  while (!stream.eol()) {
    stream.start = stream.pos;
    const style = ruleParser.token(stream, state);
    if (stream.current().trim() !== '') out.push(style);
  }
  return out;
}

const OPERAND: Record<OperandKind, string> = {
  valueOrPath: ' 1',
  valueListOrPath: ' 1',
  listOrPath: ' [1]',
  none: '',
  string: ' "date"',
  period: ' 3 days',
};

describe('CONTRIBUTING.md: adding an operator', () => {
  it('names files that exist, at most four of them edited by hand besides tests and generated parts', () => {
    const table = steps();
    expect(table.length).toBeGreaterThanOrEqual(5);
    expect(table.filter((s) => !existsSync(path.join(root, s.file))).map((s) => s.file)).toEqual([]);
    const byHand = table.filter((s) => s.what.includes('by hand') && !s.what.startsWith('tests'));
    expect(byHand.length).toBeLessThanOrEqual(4);
    const derived = [...recipe().matchAll(/`((?:libs|services|grammar|docs)\/[^`]+)`/g)].map((m) => m[1]);
    expect(derived.filter((f) => !existsSync(path.join(root, f)))).toEqual([]);
  });

  it('the catalogue entry reaches the grammar: every form of every operator parses', () => {
    for (const row of ROWS.filter(isOperatorEntry)) {
      for (const form of [...row.forms, ...row.negation.forms]) {
        const rule = `if x.y ${phraseOf(form)}${OPERAND[row.operand]} -> ok.`;
        expect(validate(rule), rule).toEqual({ valid: true, error: null });
      }
    }
  });

  it('LANGUAGE.md has a table row and a list entry for every catalogue row, in catalogue order', () => {
    const listed = listOperators();
    expect(listed).toHaveLength(ROWS.length);
    expect(operatorTable().map((r) => ({ operator: r.canonical, forms: r.forms }))).toEqual(listed);
    expect(documentedOperatorList()).toEqual(listed);
  });

  it("the console's highlighting marks every word and symbol of every operator phrase", () => {
    for (const { forms } of listOperators()) {
      for (const form of forms) {
        const phrase = phraseOf(form);
        expect(styles(phrase), phrase).toEqual(phrase.split(' ').map((w) => (/^[a-z]+$/.test(w) ? 'keyword' : 'operator')));
      }
    }
  });

  it("MCP's list_operators answers every catalogue row, in catalogue order", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/mcp`), {
      requestInit: { headers: { 'x-mcp-api-key': stack.adminKey } },
    });
    const client = new Client({ name: 'operator-recipe', version: '1.0.0' });
    await client.connect(transport);
    try {
      const res = await client.callTool({ name: 'list_operators', arguments: {} });
      expect(res.isError).toBeFalsy();
      expect(res.structuredContent).toEqual({ operators: listOperators() });
    } finally {
      await client.close();
    }
  });
});
