/**
 * The console's Shadow runs panel in headless Chromium against the real stack: an admin shadows a
 * policy's draft from its page at 100 % of the runs, the runs by base id change for some inputs,
 * and the panel shows the API's counts and transitions and, to the admin, the masked examples; a
 * viewer sees the counts without examples and without the buttons; the admin stops it.
 */

import { eventually } from '@arbiter/test-kit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

const RULE_V1 = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';
const RULE_V2 = 'A **driver** gets a licence if the __age__ of the **driver** is at least 18.';

let stack: Stack;
let browser: Browser;
let page: Page;
let viewerKey = '';

async function signIn(credential: string): Promise<void> {
  await page.context().close();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(15_000);
  await page.goto(`${stack.baseUrl}/console/policies`);
  await page.getByRole('radio', { name: 'API key' }).check();
  await page.getByTestId('credential').fill(credential);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').or(page.getByRole('alert')).first().waitFor();
  const refused = await page.getByRole('alert').count();
  if (refused) throw new Error(`sign-in refused: ${await page.getByRole('alert').textContent()}`);
}

async function ok(status: number, method: string, url: string, body?: unknown): Promise<any> {
  const res = await call(stack, method, url, { key: stack.adminKey, ...(body !== undefined ? { body } : {}) });
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ services: ['execution', 'registry', 'audit', 'gateway'], env: { EXEC_SHADOW_FLUSH_MS: '50' } });
  viewerKey = await memberKey(stack, 'vera', 'viewer', ['view']);
  page = await browser.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('console shadow runs', () => {
  it('an admin shadows the draft from the policy page, sees the counts and examples, a viewer the counts only, and stops it', async () => {
    const created = await ok(201, 'POST', '/policy', { name: 'Licence', rule: RULE_V1 });
    await ok(201, 'PUT', `/policy/${created.policyId}`, { status: 'published' });
    const draft = await ok(201, 'GET', `/policy/${created.baseId}/draft`);
    await ok(200, 'PUT', `/policy/${draft.policyId}`, { status: 'draft', rule: RULE_V2 });

    await signIn(stack.adminKey);
    await page.goto(`${stack.baseUrl}/console/policies/${created.baseId}`);
    const panel = page.getByTestId('shadow-panel');
    await panel.getByText('No shadow').waitFor();
    await panel.getByTestId('shadow-percent').fill('100');
    await panel.getByRole('button', { name: 'Shadow the draft' }).click();
    await panel.getByTestId('shadow-status').waitFor();

    for (const age of [16, 17, 17, 30]) await ok(200, 'POST', `/run/policy/${created.baseId}`, { driver: { age } });
    await eventually(async () => expect((await ok(200, 'GET', `/policy/${created.baseId}/shadow`)).compared).toBe(4), {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    await page.reload();
    await expect(panel.getByTestId('shadow-changed').textContent()).resolves.toBe('2');
    await expect(panel.getByTestId('shadow-compared').textContent()).resolves.toBe('4');
    await expect(panel.getByTestId('shadow-transitions').textContent()).resolves.toContain('truefalse2');
    await expect(panel.getByTestId('shadow-examples').locator('li').count()).resolves.toBe(2);

    await signIn(viewerKey);
    await page.goto(`${stack.baseUrl}/console/policies/${created.baseId}`);
    await expect(page.getByTestId('shadow-panel').getByTestId('shadow-changed').textContent()).resolves.toBe('2');
    await expect(page.getByTestId('shadow-panel').getByTestId('shadow-examples').count()).resolves.toBe(0);
    await expect(page.getByTestId('shadow-panel').getByRole('button').count()).resolves.toBe(0);

    await signIn(stack.adminKey);
    await page.goto(`${stack.baseUrl}/console/policies/${created.baseId}`);
    await page.getByTestId('shadow-panel').getByRole('button', { name: 'Stop shadowing' }).click();
    await page
      .getByTestId('shadow-panel')
      .getByText(/stopped at/)
      .waitFor();
    expect((await ok(200, 'GET', `/policy/${created.baseId}/shadow`)).state).toBe('stopped');
  });
});
