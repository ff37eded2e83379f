/**
 * The console's decision-table editor in a real browser (headless Chromium via
 * playwright-core) against the whole stack: a flow with a table node shows the table in its graph
 * and as a grid; a cell that does not parse is underlined with the language's message and position
 * as it is typed, and the underline goes when it is fixed; rules and inputs are added, moved and
 * deleted and the hit policy picked, each written back into the definition; a test run highlights
 * the matched rule and the evaluated cells; the draft saves the grid's definition. The screen is
 * saved to docs/console/tables.png.
 */

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SHOTS = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(root, 'docs/console');

const DEFINITION = {
  start: 'tier',
  nodes: {
    tier: {
      type: 'table',
      hitPolicy: 'first',
      inputs: [
        { name: 'age', path: 'applicant.age' },
        { name: 'country', path: 'applicant.country' },
      ],
      outputs: [{ name: 'tier' }, { name: 'discount', default: 0 }],
      rules: [
        { when: ['>= 18', 'is in ["NL", "BE"]'], then: { tier: 'gold', discount: 10 } },
        { when: ['>= 18', '-'], then: { tier: 'silver', discount: 5 } },
        { when: ['-', '-'], then: { tier: 'basic' } },
      ],
      routeOn: 'tier',
      routes: { gold: 'yes' },
      default: 'review',
    },
    yes: { type: 'return', value: true },
    review: { type: 'custom', outcome: 'manual review' },
  },
};

let stack: Stack;
let browser: Browser;
let page: Page;
let flowBase: string;

/** The definition in the JSON editor, as the page holds it. */
async function editorDefinition(): Promise<any> {
  const text = await page.getByRole('textbox', { name: 'Flow definition' }).textContent();
  return JSON.parse(text ?? '');
}

async function setEditor(label: string, text: string): Promise<void> {
  const editor = page.getByRole('textbox', { name: label });
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchChromium();
  stack = await startStack({ services: ['execution', 'registry', 'governance', 'gateway'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const flow = await call(stack, 'POST', '/flow', { key: stack.adminKey, body: { name: 'Tiers', definition: DEFINITION } });
  expect(flow.status).toBe(201);
  flowBase = flow.body.baseId;
  await page.goto(`${stack.baseUrl}/console`);
  await page.getByTestId('credential').waitFor();
  await page.keyboard.type(stack.adminKey);
  await page.keyboard.press('Enter');
  await page.getByTestId('who').waitFor();
  await page.goto(`${stack.baseUrl}/console/flows/${flowBase}`);
  await page.getByTestId('table-editor-tier').waitFor();
  expect(errors).toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('decision tables in the console', () => {
  it('draws the table node in the graph with its routes', async () => {
    const graph = page.getByTestId('flow-graph');
    const node = graph.locator('[data-node="tier"]');
    await expect(node.getAttribute('class')).resolves.toContain('table');
    await expect(node.textContent()).resolves.toContain('table first');
    await expect(graph.locator('.edge text').allTextContents()).resolves.toEqual(expect.arrayContaining(['gold', 'default']));
  });

  it('underlines a cell that does not parse as it is typed, with the message and position, and clears it when fixed', async () => {
    const cell = page.getByRole('textbox', { name: 'Rule 1 country' });
    await cell.fill('is in "NL"');
    const td = page.locator('td.cell-error');
    await td.first().waitFor();
    await expect(cell.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(cell.getAttribute('title')).resolves.toBe('line 1, column 7: `is in` needs a list or a path, not a string');
    await expect(page.locator('.cell-problem').first().textContent()).resolves.toContain('needs a list or a path');
    await cell.fill('is in ["NL", "BE"]');
    await expect(cell.getAttribute('aria-invalid')).resolves.toBe('false');
    expect(await td.count()).toBe(0);
  });

  it('adds, moves and deletes rules and inputs, and picks the hit policy, writing each into the definition', async () => {
    await page.getByTestId('add-rule').click();
    await page.getByRole('textbox', { name: 'Rule 4 age' }).fill('< 18');
    await page.getByRole('textbox', { name: 'Rule 4 tier' }).fill('"junior"');
    await page.getByRole('button', { name: 'Move rule 4 up' }).click();
    let def = await editorDefinition();
    expect(def.nodes.tier.rules.map((r: any) => r.then.tier)).toEqual(['gold', 'silver', 'junior', 'basic']);
    expect(def.nodes.tier.rules[2]).toEqual({ when: ['< 18', '-'], then: { tier: 'junior' } });

    await page.getByTestId('add-input').click();
    await page.getByRole('textbox', { name: 'Input 3 path' }).fill('applicant.segment');
    await page.getByRole('button', { name: 'Move input 3 left' }).click();
    def = await editorDefinition();
    expect(def.nodes.tier.inputs.map((i: any) => i.path)).toEqual(['applicant.age', 'applicant.segment', 'applicant.country']);
    expect(def.nodes.tier.rules[0].when).toEqual(['>= 18', '-', 'is in ["NL", "BE"]']);
    await page.getByRole('button', { name: 'Delete input 2' }).click();
    await page.getByRole('button', { name: 'Delete rule 3' }).click();
    def = await editorDefinition();
    expect(def.nodes.tier.inputs.map((i: any) => i.name)).toEqual(['age', 'country']);
    expect(def.nodes.tier.rules).toEqual(DEFINITION.nodes.tier.rules);

    await page.getByTestId('hit-policy').selectOption('unique');
    expect((await editorDefinition()).nodes.tier.hitPolicy).toBe('unique');
    await page.getByTestId('hit-policy').selectOption('first');
  });

  it('a test run highlights the matched rule and the evaluated cells', async () => {
    await setEditor('Data editor', '{"applicant": {"age": 40, "country": "DE"}}');
    await page.getByTestId('run').click();
    await expect(page.getByTestId('run-value').textContent()).resolves.toBe('"manual review"');
    await expect(page.getByTestId('matched-tier').textContent()).resolves.toBe('Table tier: rule 2 matched');
    const rows = page.locator('[data-testid="table-editor-tier"] tbody tr');
    await expect(rows.nth(1).getAttribute('data-matched')).resolves.toBe('true');
    await expect(rows.nth(0).getAttribute('data-matched')).resolves.toBe('false');
    // rule 1: age held, country did not; rule 2: age held (its `-` cell is not evaluated)
    await expect(rows.nth(0).locator('td').nth(0).getAttribute('class')).resolves.toContain('cell-true');
    await expect(rows.nth(0).locator('td').nth(1).getAttribute('class')).resolves.toContain('cell-false');
    await expect(page.getByTestId('flow-graph').locator('[data-node="review"]').getAttribute('data-on-path')).resolves.toBe('true');
    await page.screenshot({ path: path.join(SHOTS, 'tables.png'), fullPage: true });
  });

  it('saves the grid as the draft definition', async () => {
    await page.getByRole('textbox', { name: 'Rule 3 tier' }).fill('"standard"');
    await page.getByTestId('save').click();
    await page.getByTestId('notice').filter({ hasText: 'Draft saved.' }).waitFor();
    const saved = await call(stack, 'GET', `/flow/${flowBase}`, { key: stack.adminKey });
    expect(saved.body.definition.nodes.tier.rules[2].then).toEqual({ tier: 'standard' });
  });
});
