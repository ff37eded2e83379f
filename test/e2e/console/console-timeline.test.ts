/**
 * The web console's versions table on a timeline (docs/api.md#scheduled-versions-as-of-runs-and-rollback),
 * in headless Chromium against the real stack: each version's interval in effect, a scheduled
 * version with its cancel action, and a rollback to an earlier version. A viewer sees the intervals
 * without the actions.
 */
import { eventually } from '@arbiter/test-kit';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const ruleOf = (age: number) => `An **applicant** is adult if the __age__ of the **applicant** is at least ${age}.`;

async function signIn(key: string): Promise<void> {
  await context?.close();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await page.goto(`${stack.baseUrl}/console/`);
  await page.getByTestId('credential').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor();
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ services: ['execution', 'registry', 'gateway'] });
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.stop();
});

describe('versions on a timeline', () => {
  it('shows intervals, cancels a schedule and rolls back; a viewer sees no actions', async () => {
    const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'Timed', rule: ruleOf(18) } });
    const baseId = created.body.baseId as string;
    expect(
      (await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key: stack.adminKey, body: { status: 'published' } })).status,
    ).toBe(201);
    await call(stack, 'GET', `/policy/${baseId}/draft`, { key: stack.adminKey });
    const at = new Date(Date.now() + 24 * 3600_000).toISOString();
    const scheduled = await call(stack, 'PUT', `/policy/${baseId}`, {
      key: stack.adminKey,
      body: { status: 'published', rule: ruleOf(21), effectiveFrom: at },
    });
    expect(scheduled.status).toBe(201);

    await signIn(stack.adminKey);
    await page.goto(`${stack.baseUrl}/console/policies/${baseId}`);
    const table = page.getByTestId('versions');
    await table.getByText('scheduled for').waitFor();
    await expect(table.getByTestId('in-effect').allTextContents()).resolves.toEqual([
      expect.stringMatching(/^scheduled for /),
      expect.stringMatching(/ – /),
    ]);

    await table.getByRole('button', { name: 'Cancel schedule' }).click();
    await page.getByTestId('notice').filter({ hasText: 'The schedule of version 2 was cancelled.' }).waitFor();
    await table.getByText('cancelled (was scheduled for').waitFor();
    await expect(table.getByRole('button', { name: 'Cancel schedule' }).count()).resolves.toBe(0);

    // version 1 is the only one not latest: roll back to it
    await table.getByRole('button', { name: 'Roll back to this' }).last().click();
    await page.getByTestId('notice').filter({ hasText: 'Version 3 brings back version 1.' }).waitFor();
    await table.getByText('version 3 (rollback of 1)').waitFor();
    await eventually(async () => {
      const run = await call(stack, 'POST', `/run/policy/${baseId}`, { key: stack.adminKey, body: { applicant: { age: 19 } } });
      expect(run.body).toMatchObject({ version: 3, result: true });
    });

    await signIn(await memberKey(stack, 'vera', 'viewer', ['view']));
    await page.goto(`${stack.baseUrl}/console/policies/${baseId}`);
    await page.getByTestId('versions').getByText('version 3 (rollback of 1)').waitFor();
    await expect(page.getByTestId('versions').getByRole('button').count()).resolves.toBe(0);
  });
});
