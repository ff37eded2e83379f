/**
 * The web console in a real browser: headless Chromium driven by playwright-core,
 * against the whole stack started by the harness (gateway serving /console, registry,
 * governance, audit, execution). A user signs in, writes a rule with a typo and sees it
 * underlined, fixes and runs it, saves a policy with a test, publishes it, runs it by base id and
 * finds it in the list; flows show their graph with the run's path. Each main screen is saved to
 * docs/console/ (shown in docs/getting-started.md).
 */

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '@arbiter/test-kit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SHOTS = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(root, 'docs/console');

const TYPO_RULE = 'A **driver** gets a licence if the __age__ of the **driver** is old.';
const RULE =
  'A **driver** gets a licence if the __age__ of the **driver** is at least 17 and the **driver** passes the eyesight test.\n' +
  'A **driver** passes the eyesight test if the __vision score__ of the **driver** is greater than 0.5.';
const DATA = '{"driver": {"age": 18, "visionScore": 0.8}}';

let stack: Stack;
let browser: Browser;
let page: Page;

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** Replaces the whole text of the CodeMirror editor labelled `label`, typing as a user would paste. */
async function setEditor(label: string, text: string): Promise<void> {
  const editor = page.getByRole('textbox', { name: label });
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

async function signIn(key: string): Promise<void> {
  await page.goto(`${stack.baseUrl}/console`);
  // keyboard only: the field has the focus, Enter submits
  await page.getByTestId('credential').waitFor();
  await page.keyboard.type(key);
  await page.keyboard.press('Enter');
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchChromium();
  stack = await startStack({ services: ['execution', 'registry', 'governance', 'audit', 'gateway'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(15_000);
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('web console', () => {
  it('is served at /console with a content security policy, and client routes get the page', async () => {
    const res = await fetch(`${stack.baseUrl}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await res.text()).toContain('<div id="root">');
    const deep = await fetch(`${stack.baseUrl}/console/policies/some-id`);
    expect(deep.status).toBe(200);
    const missing = await fetch(`${stack.baseUrl}/console/assets/missing.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('not_found');
  });

  it('refuses a wrong key with the API problem detail, and never puts the key in the URL', async () => {
    await signIn('arb_not_a_real_key');
    await expect(page.getByRole('alert').textContent()).resolves.toContain('the API key is not valid');
    expect(page.url()).not.toContain('arb_');
    await shot('sign-in');
  });

  it('signs in with an API key (keyboard only), checked through the SDK client', async () => {
    await page.getByTestId('credential').fill('');
    const me = page.waitForRequest((r) => new URL(r.url()).pathname === '/me');
    await signIn(stack.adminKey);
    await expect(page.getByTestId('who').textContent()).resolves.toContain('admin · admin · acme');
    expect(page.url()).not.toContain(stack.adminKey);
    // @arbiter/sdk/client signs the call and names it with a request id
    const headers = (await me).headers();
    expect(headers['x-api-key']).toBe(stack.adminKey);
    expect(headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('underlines a typo at the line and column /validate reports, and clears it when fixed', async () => {
    await setEditor('Rule editor', TYPO_RULE);
    const underline = page.locator('.cm-lintRange-error');
    await underline.first().waitFor();
    await expect(underline.first().textContent()).resolves.toBe('old');
    await expect(page.getByTestId('validation').textContent()).resolves.toContain('Parse error: line 1, column 65');
    await shot('editor-error');

    await setEditor('Rule editor', RULE);
    await page.getByTestId('validation').filter({ hasText: '✓ Valid' }).waitFor();
    expect(await underline.count()).toBe(0);
  });

  it('completes operator phrases from /operators', async () => {
    await setEditor('Rule editor', 'A **driver** gets a licence if the __age__ of the **driver** is at');
    await page.keyboard.press('Control+Space');
    const option = page.locator('.cm-tooltip-autocomplete li', { hasText: 'is at least' }).first();
    await option.waitFor();
    await option.click();
    await expect(page.getByRole('textbox', { name: 'Rule editor' }).textContent()).resolves.toBe(
      'A **driver** gets a licence if the __age__ of the **driver** is at least',
    );
    await setEditor('Rule editor', RULE);
  });

  it('runs the rule on the data pane and links trace lines to rule lines', async () => {
    await setEditor('Data editor', DATA);
    await page.getByTestId('run').click();
    await expect(page.getByTestId('run-value').textContent()).resolves.toBe('true');
    const links = page.getByTestId('trace').locator('.trace-link');
    expect(await links.count()).toBeGreaterThan(0);
    // the golden rule's header links to line 1, the eyesight test's to line 2
    await expect(page.getByRole('button', { name: /L2 rule "the eyesight test"/ }).count()).resolves.toBe(1);
    await expect(page.getByRole('button', { name: /L1 rule "a licence"/ }).count()).resolves.toBe(1);
    // following a trace line (by keyboard) puts the cursor on its rule's line
    await page.getByRole('button', { name: /L2 rule "the eyesight test"/ }).focus();
    await page.keyboard.press('Enter');
    await expect(page.locator('.cm-activeLine').first().textContent()).resolves.toContain('passes the eyesight test if');
    await page.getByRole('button', { name: 'Explain' }).click();
    await expect(page.getByTestId('explanation').textContent()).resolves.toContain('licence');
    await shot('editor-run');
  });

  let baseId = '';

  it('saves a policy with a test, runs the tests, publishes it and runs it by base id', async () => {
    await page.getByRole('link', { name: 'Policies' }).click();
    await page.getByTestId('new-name').fill('Driving licence');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByTestId('record-title').filter({ hasText: 'Driving licence' }).waitFor();
    baseId = (await page.getByTestId('base-id').textContent()) ?? '';
    expect(baseId).toMatch(/^[0-9a-f-]{36}$/);
    expect(page.url()).toBe(`${stack.baseUrl}/console/policies/${baseId}`);

    await setEditor('Rule editor', RULE);
    await setEditor('Data editor', DATA);
    await page.getByTestId('add-test').click();
    await page.getByTestId('save').click();
    await page.getByTestId('notice').filter({ hasText: 'Draft saved.' }).waitFor();

    const saved = await call(stack, 'GET', `/policy/${baseId}`, { key: stack.adminKey });
    expect(saved.body.rule).toBe(RULE);
    expect(saved.body.tests).toEqual([{ name: 'test 1', data: JSON.parse(DATA), expect: true }]);

    await page.getByTestId('run-tests').click();
    await expect(page.getByTestId('tests-summary').textContent()).resolves.toBe('all 1 passed');

    await page.getByTestId('publish').click();
    await page.getByTestId('notice').filter({ hasText: 'Version 1 published.' }).waitFor();
    const published = await call(stack, 'GET', `/policy/${baseId}`, { key: stack.adminKey });
    expect(published.body).toMatchObject({ status: 'published', version: 1 });

    await page.getByTestId('run-stored').click();
    await expect(page.getByTestId('stored-result').getByTestId('run-value').textContent()).resolves.toBe('true');
    await expect(page.getByTestId('stored-result').textContent()).resolves.toContain('version 1');
    await shot('policy');
  });

  it('shows a failing saved test as failed', async () => {
    await page.getByRole('button', { name: 'Edit: new draft from v1' }).click();
    await page.getByTestId('notice').waitFor();
    await page.getByRole('combobox', { name: 'Expected result of test 1' }).selectOption('false');
    await page.getByTestId('run-tests').click();
    await expect(page.getByTestId('tests-summary').textContent()).resolves.toBe('1 of 1 failed');

    // publishing checks the saved tests too: the refusal shows the problem's detail and reasons, and nothing changes
    await page.getByTestId('publish').click();
    const alert = page.getByRole('alert');
    await expect(alert.textContent()).resolves.toMatch(/cannot be published: 1 problem: test `test 1`: expected `false`, got `true`/);
    const current = await call(stack, 'GET', `/policy/${baseId}`, { key: stack.adminKey });
    expect(current.body).toMatchObject({ status: 'published', version: 1 });
  });

  it('finds the policy in the list by name search', async () => {
    await page
      .getByRole('link', { name: /Policies/ })
      .first()
      .click();
    await page.getByTestId('search').fill('driving');
    await page.getByRole('button', { name: 'Search' }).click();
    const row = page.getByTestId('policy-list').getByRole('link', { name: 'Driving licence' });
    await row.waitFor();
    await page.getByTestId('search').fill('no such policy');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByTestId('policy-list').filter({ hasText: 'Nothing here' }).waitFor();
    await page.getByTestId('search').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await row.waitFor();
    await shot('policies');
  });

  it('shows an unknown policy as the API 404 detail, not a blank page', async () => {
    await page.goto(`${stack.baseUrl}/console/policies/01a20898-a081-7000-8000-000000000000`);
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/not found|no policy|unknown/i);
  });

  it('draws a flow and highlights the path of a test run', async () => {
    const flow = await call(stack, 'POST', '/flow', {
      key: stack.adminKey,
      body: {
        name: 'Licence desk',
        definition: {
          start: 'check',
          nodes: {
            check: { type: 'policy', baseId, onTrue: 'issue', onFalse: 'review' },
            issue: { type: 'return', value: true },
            review: { type: 'custom', outcome: 'manual review' },
          },
        },
      },
    });
    expect(flow.status).toBe(201);
    await page.goto(`${stack.baseUrl}/console/flows/${flow.body.baseId}`);
    const graph = page.getByTestId('flow-graph');
    await graph.waitFor();
    expect(await graph.locator('[data-node]').count()).toBe(3);
    await setEditor('Data editor', '{"driver": {"age": 15, "visionScore": 0.8}}');
    await page.getByTestId('run').click();
    await expect(page.getByTestId('run-value').textContent()).resolves.toBe('"manual review"');
    await expect(graph.locator('[data-node="review"]').getAttribute('data-on-path')).resolves.toBe('true');
    await expect(graph.locator('[data-node="check"]').getAttribute('data-on-path')).resolves.toBe('true');
    await expect(graph.locator('[data-node="issue"]').getAttribute('data-on-path')).resolves.toBe('false');
    await shot('flow');
  });

  it('creates a flow, edits its definition as JSON and saves the draft', async () => {
    await page.getByRole('link', { name: 'Flows' }).first().click();
    await page.getByTestId('new-name').fill('Second desk');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByTestId('record-title').filter({ hasText: 'Second desk' }).waitFor();
    const graph = page.getByTestId('flow-graph');
    expect(await graph.locator('[data-node]').count()).toBe(1);
    const definition = {
      start: 'check',
      nodes: {
        check: { type: 'policy', baseId, onTrue: 'yes', onFalse: 'no' },
        yes: { type: 'return', value: true },
        no: { type: 'return', value: false },
      },
    };
    await setEditor('Flow definition', JSON.stringify(definition, null, 2));
    await graph.locator('[data-node="no"]').waitFor();
    expect(await graph.locator('[data-node]').count()).toBe(3);
    await page.getByTestId('save').click();
    await page.getByTestId('notice').filter({ hasText: 'Draft saved.' }).waitFor();
    const flowBase = (await page.getByTestId('base-id').textContent()) ?? '';
    const saved = await call(stack, 'GET', `/flow/${flowBase}`, { key: stack.adminKey });
    expect(saved.body.definition).toEqual(definition);

    // a definition naming an unknown policy is refused with the API's reason, and nothing is saved
    await setEditor(
      'Flow definition',
      JSON.stringify({
        ...definition,
        nodes: { ...definition.nodes, check: { ...definition.nodes.check, baseId: '01a20898-a081-7000-8000-000000000000' } },
      }),
    );
    await page.getByTestId('save').click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'invalid flow: node `check`: policy base `01a20898-a081-7000-8000-000000000000` does not exist',
    );
    expect((await call(stack, 'GET', `/flow/${flowBase}`, { key: stack.adminKey })).body.definition).toEqual(definition);
  });

  it('pages through the policy list and the audit trail', async () => {
    for (let i = 1; i <= 26; i++) {
      const res = await call(stack, 'POST', '/policy', {
        key: stack.adminKey,
        body: { name: `Bulk ${String(i).padStart(2, '0')}`, rule: RULE },
      });
      expect(res.status).toBe(201);
    }
    await page.getByRole('link', { name: 'Policies' }).click();
    const list = page.getByTestId('policy-list');
    await list.getByRole('link', { name: 'Bulk 26' }).waitFor(); // newest first
    expect(await list.locator('tbody tr').count()).toBe(20);
    await page.getByRole('button', { name: 'Next →' }).click();
    await page.getByText('Page 2').waitFor();
    await list.getByRole('link', { name: 'Driving licence' }).waitFor();
    expect(await list.getByRole('link', { name: 'Bulk 26' }).count()).toBe(0);
    await page.getByRole('button', { name: '← Previous' }).click();
    await list.getByRole('link', { name: 'Bulk 26' }).waitFor();

    // 28 `created` events (26 policies, the first policy, the flow): more than one page of 25, once the audit service has them all
    await eventually(
      async () => {
        const trail = await call(stack, 'GET', '/audit?kind=created&limit=200', { key: stack.adminKey });
        expect((trail.body.items as unknown[]).length).toBeGreaterThan(25);
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('combobox', { name: 'Kind' }).selectOption('created');
    const older = page.getByRole('button', { name: 'Older →' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => older.isDisabled()).toBe(false);
    expect(await page.getByTestId('audit-list').locator('tbody tr').count()).toBe(25);
    await older.click();
    await page.getByText('Page 2').waitFor();
    expect(await page.getByTestId('audit-list').locator('tbody tr').count()).toBeGreaterThanOrEqual(1);
    await expect(page.getByTestId('audit-list').textContent()).resolves.toContain('created');
    await page.getByRole('combobox', { name: 'Kind' }).selectOption('');
    await page.getByRole('button', { name: 'Apply' }).click();
  });

  it('shows the audit trail to an admin, with filters', async () => {
    await page.getByRole('link', { name: 'Audit' }).click();
    const list = page.getByTestId('audit-list');
    await list.waitFor();
    await page.getByRole('combobox', { name: 'Kind' }).selectOption('published');
    await page.getByRole('button', { name: 'Apply' }).click();
    // the audit consumer ingests the publish event asynchronously: reload until it is there
    for (let i = 0; i < 40 && !(await list.textContent())?.includes('published'); i++) {
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForTimeout(250); // poll interval, not an assertion on time
    }
    await expect(list.textContent()).resolves.toContain('published');
    await shot('audit');
  });

  it('fits a narrow window without sideways scrolling', async () => {
    await page.setViewportSize({ width: 400, height: 800 });
    await page.getByRole('link', { name: 'Editor' }).click();
    await page.getByRole('textbox', { name: 'Rule editor' }).waitFor();
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    expect(overflow).toBeLessThanOrEqual(1);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('keeps the sign-in across a reload of the tab only, and forgets it on sign out', async () => {
    await page.reload();
    await page.getByTestId('who').waitFor();
    expect(await page.evaluate("sessionStorage.getItem('arbiter.console.credentials')")).toContain(stack.adminKey);
    expect(await page.evaluate('localStorage.length')).toBe(0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByTestId('credential').waitFor();
    expect(await page.evaluate("sessionStorage.getItem('arbiter.console.credentials')")).toBeNull();
    await page.reload();
    await page.getByTestId('credential').waitFor();
  });
});
