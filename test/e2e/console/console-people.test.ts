/**
 * The web console's People page and editor details, in headless
 * Chromium against the real stack. An admin adds a member, changes roles, issues the member a key
 * (shown once, copied to the clipboard) that then works as that member, and revokes it. The editor
 * starts empty on New, marks a result that no longer matches the rule, and shows a published
 * version (and everything to a viewer) read-only with the reason.
 */

import { EventKind } from '@arbiter/contracts';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

const RULE = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';

let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let page: Page;

/** A fresh tab (nothing kept from the last one) signed in with `key`. */
async function signIn(key: string, at = '/'): Promise<void> {
  await context?.close();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${stack.baseUrl}/console${at}`);
  await page.getByTestId('credential').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor();
}

const editorText = (label: string) => page.getByRole('textbox', { name: label }).textContent();

async function setEditor(label: string, text: string): Promise<void> {
  await page.getByRole('textbox', { name: label }).click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

const me = (key: string) => call(stack, 'GET', '/me', { key });

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ services: ['execution', 'registry', 'governance', 'audit', 'gateway'] });
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.stop();
});

describe('People page', () => {
  it('lists the members with their roles, for admins only in the navigation', async () => {
    await signIn(stack.adminKey);
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByTestId('people-list').getByRole('combobox', { name: 'Role of admin' }).waitFor();
    await expect(page.getByRole('combobox', { name: 'Role of admin' }).inputValue()).resolves.toBe('admin');
    expect(page.url()).toBe(`${stack.baseUrl}/console/people`);
  });

  it('adds a member and changes a role; refusing to demote the last admin shows the API reason', async () => {
    await page.getByTestId('new-user').fill('alice');
    await page.getByTestId('new-user-role').selectOption('editor');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByTestId('notice').filter({ hasText: 'Added alice as editor.' }).waitFor();
    expect((await call(stack, 'GET', '/users/alice', { key: stack.adminKey })).body.role).toBe('editor');

    await page.getByRole('combobox', { name: 'Role of alice' }).selectOption('publisher');
    await page.getByTestId('notice').filter({ hasText: 'alice is now publisher.' }).waitFor();
    expect((await call(stack, 'GET', '/users/alice', { key: stack.adminKey })).body.role).toBe('publisher');

    await page.getByRole('combobox', { name: 'Role of admin' }).selectOption('viewer');
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      '`admin` is the last admin of org `acme`; make another member admin first',
    );
    await expect(page.getByRole('combobox', { name: 'Role of admin' }).inputValue()).resolves.toBe('admin');
  });

  let issuedKey = '';

  it('issues alice a key within her role, shown once and copyable, that acts as alice', async () => {
    await page.getByRole('button', { name: 'Keys of alice' }).click();
    const panel = page.getByTestId('member-keys');
    await panel.getByText('No keys: issue one above.').waitFor();
    // the scopes offered are the role's (publisher): view, edit, publish
    const boxes = panel.getByRole('group', { name: /Scopes/ }).getByRole('checkbox');
    expect(await boxes.count()).toBe(3);
    await panel.getByRole('checkbox', { name: 'publish' }).uncheck();
    await page.getByTestId('key-name').fill('alice laptop');
    await panel.getByRole('button', { name: 'Issue key' }).click();

    const shown = page.getByTestId('issued-key');
    await expect(shown.textContent()).resolves.toContain('Copy this key now: it is shown only once.');
    issuedKey = (await page.getByTestId('issued-key-value').textContent()) ?? '';
    expect(issuedKey).toMatch(/^arb_/);
    await shown.getByRole('button', { name: 'Copy' }).click();
    await shown.getByRole('button', { name: 'Copied' }).waitFor();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(issuedKey);

    expect((await me(issuedKey)).body).toMatchObject({ userId: 'alice', role: 'publisher', scopes: ['view', 'edit'] });
    const row = page.getByTestId('key-list').getByRole('row', { name: /alice laptop/ });
    await expect(row.textContent()).resolves.toContain('view, edit');

    // once dismissed the secret is gone from the page, and it was never kept in the tab's storage
    await shown.getByRole('button', { name: 'Done' }).click();
    await expect(page.content()).resolves.not.toContain(issuedKey);
    expect(await page.evaluate('JSON.stringify(sessionStorage) + JSON.stringify(localStorage)')).not.toContain(issuedKey);
  });

  it('revokes the key from the list: it stops working at once', async () => {
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Revoke alice laptop' }).click();
    await page.getByTestId('member-keys').getByText('No keys: issue one above.').waitFor();
    expect((await me(issuedKey)).status).toBe(401);
  });

  it('is not offered to a member who is not an admin', async () => {
    const res = await call(stack, 'POST', '/users/alice/apikeys', {
      key: stack.adminKey,
      body: { name: 'alice', scopes: ['view', 'edit'] },
    });
    expect(res.status).toBe(201);
    await signIn(res.body.key as string);
    await expect(page.getByRole('link', { name: 'People' }).count()).resolves.toBe(0);
    await page.goto(`${stack.baseUrl}/console/people`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
  });

  it('the audit filter offers every event kind of libs/contracts', async () => {
    await signIn(stack.adminKey, '/audit');
    const kind = page.getByRole('combobox', { name: 'Kind' });
    await kind.waitFor();
    const options = await kind.locator('option').allTextContents();
    expect(options).toEqual(['any', ...EventKind.options]);
    expect(options).toContain('imported');
  });
});

describe('editor details', () => {
  it('New empties the editors and puts the cursor in the rule: typing lands in an empty rule', async () => {
    await signIn(stack.adminKey);
    await page.getByTestId('sample-hint').waitFor();
    await expect(editorText('Rule editor')).resolves.toContain('A **driver** gets a licence');
    await page.getByTestId('new-rule').click();
    await page.keyboard.type('A **user** gets access if the __age__ of the **user** is at least 18.');
    await expect(editorText('Rule editor')).resolves.toBe('A **user** gets access if the __age__ of the **user** is at least 18.');
    await expect(editorText('Data editor')).resolves.toBe('{  }');
    await expect(page.getByTestId('sample-hint').count()).resolves.toBe(0);

    await page.getByTestId('sample-rule').click();
    await expect(editorText('Rule editor')).resolves.toContain('passes the eyesight test');
    await page.getByTestId('clear-rule').click();
    await page.keyboard.type('x');
    await expect(editorText('Rule editor')).resolves.toBe('x');
    await expect(editorText('Data editor')).resolves.toContain('visionScore'); // Clear keeps the data
  });

  it('marks the last result and trace out of date after an edit that no longer parses, and after a data edit', async () => {
    await page.getByTestId('sample-rule').click();
    await page.getByTestId('run').click();
    const result = page.getByTestId('run-result');
    await expect(page.getByTestId('run-value').textContent()).resolves.toBe('true');
    await expect(result.getAttribute('data-stale')).resolves.toBe('false');
    expect(await page.getByTestId('trace').locator('.trace-link').count()).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'Explain' }).click();
    await page.getByTestId('explanation').waitFor();

    await setEditor('Rule editor', 'A **driver** gets a licence if the __age__ of the **driver** is old.');
    await page.getByTestId('validation').filter({ hasText: 'Parse error' }).waitFor();
    await expect(result.getAttribute('data-stale')).resolves.toBe('true');
    await expect(page.getByTestId('run-stale').textContent()).resolves.toBe(
      'Out of date: the rule changed since this run and no longer parses: this result and trace are from the previous run. Run again.',
    );
    // trace lines no longer link into a rule they did not come from
    expect(await page.getByTestId('trace').locator('.trace-link').count()).toBe(0);
    await expect(page.getByTestId('explanation-stale').textContent()).resolves.toContain(
      'the rule changed since this run and no longer parses',
    );

    await setEditor('Rule editor', RULE);
    await setEditor('Data editor', '{"driver": {"age": 18}}');
    await page.getByTestId('run').click();
    await page.locator('[data-testid="run-result"][data-stale="false"]').waitFor();
    await setEditor('Data editor', '{"driver": {"age": 16}}');
    await expect(page.getByTestId('run-stale').textContent()).resolves.toContain('Out of date: the data changed since this run');
    await page.getByTestId('run').click();
    await page.locator('[data-testid="run-result"][data-stale="false"]').waitFor();
    await expect(page.getByTestId('run-value').textContent()).resolves.toBe('false');
    await expect(page.getByTestId('run-stale').count()).resolves.toBe(0);
  });

  it('shows a published version read-only to a viewer, with the reason, and typing changes nothing', async () => {
    const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'Licence', rule: RULE } });
    expect(created.status).toBe(201);
    const baseId = created.body.baseId as string;
    const published = await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key: stack.adminKey, body: { status: 'published' } });
    expect(published.status).toBe(201);
    await call(stack, 'PUT', '/users/vera', { key: stack.adminKey, body: { role: 'viewer' } });
    const vera = await call(stack, 'POST', '/users/vera/apikeys', { key: stack.adminKey, body: { name: 'vera', scopes: ['view'] } });

    await signIn(vera.body.key as string, `/policies/${baseId}`);
    await expect(page.getByTestId('read-only-note').textContent()).resolves.toBe('Read-only: your role (viewer) cannot edit a policy.');
    const editor = page.getByRole('textbox', { name: 'Rule editor' });
    await expect(editor.getAttribute('aria-readonly')).resolves.toBe('true');
    await editor.click();
    await page.keyboard.type('typed by a viewer');
    await expect(editorText('Rule editor')).resolves.toBe(RULE);
    // running what is shown still works
    await setEditor('Data editor', '{"driver": {"age": 18}}');
    await page.getByTestId('run').click();
    await expect(page.getByTestId('run-value').textContent()).resolves.toBe('true');
  });

  it('shows an editor the published version read-only until a new draft is made', async () => {
    await signIn(stack.adminKey, '/policies');
    await page.getByTestId('policy-list').getByRole('link', { name: 'Licence' }).click();
    await expect(page.getByTestId('read-only-note').textContent()).resolves.toMatch(
      /^Read-only: this is published version 1, which never changes/,
    );
    await expect(page.getByRole('textbox', { name: 'Rule editor' }).getAttribute('aria-readonly')).resolves.toBe('true');

    await page.getByRole('button', { name: 'Edit: new draft from v1' }).click();
    await page.getByTestId('notice').waitFor();
    await expect(page.getByTestId('read-only-note').count()).resolves.toBe(0);
    await expect(page.getByRole('textbox', { name: 'Rule editor' }).getAttribute('aria-readonly')).resolves.toBe('false');
    await setEditor('Rule editor', RULE.replace('17', '16'));
    await expect(editorText('Rule editor')).resolves.toContain('at least 16');
  });
});
