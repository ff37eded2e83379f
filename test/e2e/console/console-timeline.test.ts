/**
 * The web console's versions table on a timeline (docs/api.md#scheduled-versions-as-of-runs-and-rollback),
 * in headless Chromium against the real stack: each version's interval in effect, a scheduled
 * version with its cancel action, and a rollback to an earlier version. A viewer sees the intervals
 * without the actions. A publisher schedules a publish and a rollback with "Takes effect at" (a
 * local time, sent with the browser zone's offset); a past instant shows the service's refusal.
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

async function signIn(key: string, timezoneId?: string): Promise<void> {
  await context?.close();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...(timezoneId ? { timezoneId } : {}) });
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

/** The `datetime-local` value of an instant in India (UTC+05:30 all year), to the minute. */
const kolkataLocal = (at: number) => new Date(at + 330 * 60_000).toISOString().slice(0, 16);

describe('scheduling from the console', () => {
  it('schedules a publish an hour ahead and a rollback; a past instant shows the service error', async () => {
    const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'Planned', rule: ruleOf(18) } });
    const baseId = created.body.baseId as string;
    expect(
      (await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key: stack.adminKey, body: { status: 'published' } })).status,
    ).toBe(201);
    await call(stack, 'GET', `/policy/${baseId}/draft`, { key: stack.adminKey });
    expect(
      (await call(stack, 'PUT', `/policy/${baseId}`, { key: stack.adminKey, body: { status: 'draft', rule: ruleOf(21) } })).status,
    ).toBe(200);

    await signIn(stack.adminKey, 'Asia/Kolkata');
    await page.goto(`${stack.baseUrl}/console/policies/${baseId}`);
    const table = page.getByTestId('versions');
    const field = page.getByLabel('Takes effect at');

    // an hour ago: the service refuses it and nothing is published
    await field.fill(kolkataLocal(Date.now() - 3600_000));
    await page.getByTestId('publish').click();
    await page.getByRole('alert').filter({ hasText: 'must be a future instant' }).waitFor();
    const untouched = await call(stack, 'GET', `/policy/${baseId}/versions`, { key: stack.adminKey });
    expect(untouched.body.items.map((r: { status: string }) => r.status)).toEqual(['draft', 'published']);

    // an hour ahead, to the minute: version 2 waits for that instant
    const at = Math.floor((Date.now() + 3600_000) / 60_000) * 60_000;
    await field.fill(kolkataLocal(at));
    await page.getByTestId('publish').click();
    await page.getByTestId('notice').filter({ hasText: 'Version 2 is scheduled for' }).waitFor();
    await expect(field.inputValue()).resolves.toBe('');
    await expect(table.getByTestId('in-effect').allTextContents()).resolves.toEqual([
      expect.stringMatching(/^scheduled for /),
      expect.stringMatching(/ – /),
    ]);
    await expect(table.getByRole('button', { name: 'Cancel schedule' }).count()).resolves.toBe(1);
    const versions = await call(stack, 'GET', `/policy/${baseId}/versions`, { key: stack.adminKey });
    expect(versions.body.items[0]).toMatchObject({ version: 2, cancelled: false });
    expect(Date.parse(versions.body.items[0].effectiveFrom)).toBe(at);
    const run = await call(stack, 'POST', `/run/policy/${baseId}`, { key: stack.adminKey, body: { applicant: { age: 19 } } });
    expect(run.body).toMatchObject({ version: 1, result: true });

    // a rollback to version 1 two hours ahead: version 3, scheduled after version 2
    const later = at + 3600_000;
    await field.fill(kolkataLocal(later));
    await page.getByTestId('rollback-schedule').waitFor();
    await table.getByRole('button', { name: 'Roll back to this' }).click();
    await page.getByTestId('notice').filter({ hasText: 'Version 3 is scheduled for' }).waitFor();
    await table.getByText('version 3 (rollback of 1)').waitFor();
    await expect(table.getByRole('button', { name: 'Cancel schedule' }).count()).resolves.toBe(2);
    const after = await call(stack, 'GET', `/policy/${baseId}/versions`, { key: stack.adminKey });
    expect(after.body.items[0]).toMatchObject({ version: 3, rollbackOf: 1 });
    expect(Date.parse(after.body.items[0].effectiveFrom)).toBe(later);

    // an editor cannot publish: no field
    await signIn(await memberKey(stack, 'ed', 'editor', ['view', 'edit']));
    await page.goto(`${stack.baseUrl}/console/policies/${baseId}`);
    await page.getByTestId('versions').getByText('version 3 (rollback of 1)').waitFor();
    await expect(page.getByLabel('Takes effect at').count()).resolves.toBe(0);
  });
});
