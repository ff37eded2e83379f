/**
 * The saved tests' coverage in the console, in a real browser (headless Chromium via
 * playwright-core) against the whole stack: on a policy whose saved test sees a condition true
 * only, "Run tests (with coverage)" shows each test's result, the coverage summary and the
 * uncovered condition, and the rule editor underlines that condition (its tooltip saying it was
 * never seen false) until the rule changes; a published version with no draft runs with
 * `?version=N`; on a flow whose second table row no test matches, that row is marked in the grid
 * with a title saying so, until the table changes.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

const AGE_RULE = 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.';
const CONDITION = 'the __age__ of the **applicant** is at least 18';

const DEFINITION = {
  start: 'tier',
  nodes: {
    tier: {
      type: 'table',
      hitPolicy: 'first',
      inputs: [{ name: 'income', path: 'applicant.income' }],
      outputs: [{ name: 'tier' }],
      rules: [
        { when: ['> 1000'], then: { tier: 'gold' } },
        { when: ['-'], then: { tier: 'basic' } },
      ],
      routeOn: 'tier',
      routes: { gold: 'yes' },
      default: 'no',
    },
    yes: { type: 'return', value: true },
    no: { type: 'return', value: false },
  },
};

let stack: Stack;
let browser: Browser;
let page: Page;
let errors: string[] = [];

async function created(url: string, body: unknown): Promise<any> {
  const res = await call(stack, 'POST', url, { key: stack.adminKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** Opens a record page and waits for its tests panel. */
async function open(path: string): Promise<void> {
  await page.goto(`${stack.baseUrl}/console/${path}`);
  await page.getByTestId('run-coverage').waitFor();
}

/** Clicks "Run tests (with coverage)" and answers the URL of the call it made. */
async function runCoverage(): Promise<URL> {
  const request = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname.endsWith('/tests/run'));
  await page.getByTestId('run-coverage').click();
  const url = new URL((await request).url());
  await page.getByTestId('coverage-summary').waitFor();
  return url;
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ services: ['execution', 'registry', 'governance', 'gateway'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${stack.baseUrl}/console`);
  await page.getByTestId('credential').waitFor();
  await page.keyboard.type(stack.adminKey);
  await page.keyboard.press('Enter');
  await page.getByTestId('who').waitFor();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('coverage in the console', () => {
  it('a policy: the tests panel shows the results, the percent and the uncovered condition, underlined in the rule editor', async () => {
    errors = [];
    const policy = await created('/policy', {
      name: 'Adult',
      rule: AGE_RULE,
      tests: [{ name: 'grown-up', data: { applicant: { age: 30 } }, expect: true }],
    });
    await open(`policies/${policy.baseId}`);
    expect(await page.locator('.cm-uncovered').count()).toBe(0);

    const url = await runCoverage();
    expect(url.pathname).toBe(`/policy/${policy.baseId}/tests/run`);
    expect(url.search).toBe('');
    await expect(page.getByTestId('test-run-summary').textContent()).resolves.toBe('all 1 passed');
    await expect(page.getByTestId('test-run-results').locator('tbody tr').first().textContent()).resolves.toBe('grown-uptrue✓ pass');
    await expect(page.getByTestId('coverage-summary').textContent()).resolves.toBe('conditions 0/1 both ways, 50 %');
    await expect(page.getByTestId('uncovered').locator('li').allTextContents()).resolves.toEqual([
      `Line 1, column 30: ${CONDITION} — the saved tests saw this condition true (once) but never false.`,
    ]);

    // the editor underlines the condition over its text, in the coverage style (not a lint warning's)
    const underline = page.getByTestId('rule-editor').locator('.cm-uncovered');
    await underline.first().waitFor();
    await expect(underline.allTextContents()).resolves.toEqual([CONDITION]);
    await expect(underline.first().getAttribute('class')).resolves.not.toContain('cm-lintRange-warning');
    await underline.first().hover();
    await expect(page.locator('.cm-tooltip-lint').textContent()).resolves.toContain('saw this condition true (once) but never false');
    await expect(page.getByTestId('test-run').getAttribute('data-stale')).resolves.toBe('false');

    // a change to the rule clears the underline and marks the report out of date
    const editor = page.getByRole('textbox', { name: 'Rule editor' });
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText(' ');
    await page.getByTestId('test-run-stale').waitFor();
    await underline.first().waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
  });

  it('a published version with no draft runs its own tests with ?version=N', async () => {
    const policy = await created('/policy', {
      name: 'Adult v1',
      rule: AGE_RULE,
      tests: [
        { name: 'grown-up', data: { applicant: { age: 30 } }, expect: true },
        { name: 'child', data: { applicant: { age: 3 } }, expect: false },
      ],
    });
    const published = await call(stack, 'PUT', `/policy/${policy.policyId}`, { key: stack.adminKey, body: { status: 'published' } });
    expect(published.status, JSON.stringify(published.body)).toBe(201);
    await open(`policies/${policy.baseId}`);
    const url = await runCoverage();
    expect(url.searchParams.get('version')).toBe('1');
    await expect(page.getByTestId('test-run-summary').textContent()).resolves.toBe('all 2 passed');
    await expect(page.getByTestId('test-run-results').locator('tbody tr').nth(1).textContent()).resolves.toBe('childfalse✓ pass');
    await expect(page.getByTestId('coverage-summary').textContent()).resolves.toBe('conditions 1/1 both ways, 100 %');
    expect(await page.getByTestId('uncovered').count()).toBe(0);
    expect(await page.locator('.cm-uncovered').count()).toBe(0);
  });

  it('a flow: the table row no test matches is marked in the grid, with a title saying so', async () => {
    errors = [];
    const flow = await created('/flow', {
      name: 'Tiers',
      definition: DEFINITION,
      tests: [{ name: 'rich', data: { applicant: { income: 5000 } }, expect: true }],
    });
    await open(`flows/${flow.baseId}`);
    const rows = page.locator('[data-testid="table-editor-tier"] tbody tr');
    expect(await rows.nth(1).getAttribute('data-uncovered')).toBeNull();

    await runCoverage();
    await expect(page.getByTestId('test-run-summary').textContent()).resolves.toBe('all 1 passed');
    await expect(page.getByTestId('coverage-summary').textContent()).resolves.toBe('rows 1/2, edges 1/2, 50 %');
    await expect(page.getByTestId('uncovered').locator('li').allTextContents()).resolves.toEqual([
      'Table tier, rule 2: - — no test matched it',
      'Edge tier → no (default) — never taken',
    ]);
    await expect(rows.nth(1).getAttribute('data-uncovered')).resolves.toBe('true');
    await expect(rows.nth(1).getAttribute('class')).resolves.toContain('uncovered');
    await expect(rows.nth(1).getAttribute('title')).resolves.toBe('Not covered: no saved test matched rule 2 (-)');
    expect(await rows.nth(0).getAttribute('data-uncovered')).toBeNull();

    // an edit of the table clears the mark
    await page.getByRole('textbox', { name: 'Rule 2 tier' }).fill('"silver"');
    await page.locator('[data-testid="table-editor-tier"] tr[data-uncovered]').waitFor({ state: 'detached' });
    await page.getByTestId('test-run-stale').waitFor();
    expect(errors).toEqual([]);
  });
});
