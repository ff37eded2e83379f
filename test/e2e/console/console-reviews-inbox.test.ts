/**
 * The console's review inbox in headless Chromium against the real stack: with governance on, a
 * publisher opens **Reviews**, sees the draft an editor submitted (its name, who asked, when, and
 * that its publish checks passed) and follows the link to the draft, where it can approve it. An
 * editor has no Reviews page; an approved draft leaves the inbox.
 */

import { SignJWT } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

const RULE = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';

let stack: Stack;
let browser: Browser;
let page: Page;
const key: Record<'alice' | 'pat', string> = { alice: '', pat: '' };
let submitted: { baseId: string; policyId: string; requestedAt: string } = { baseId: '', policyId: '', requestedAt: '' };

async function token(sub: string): Promise<string> {
  return new SignJWT({ org: stack.orgId })
    .setSubject(sub)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(stack.issuer)
    .setAudience(stack.audience)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(stack.jwtSecret));
}

async function member(userId: string, role: string, scopes: string[]): Promise<string> {
  const put = await call(stack, 'PUT', `/users/${userId}`, { key: stack.adminKey, body: { role } });
  expect([200, 201]).toContain(put.status);
  const res = await call(stack, 'POST', '/apikeys', {
    headers: { authorization: `Bearer ${await token(userId)}` },
    body: { name: `${userId}-key`, scopes },
  });
  expect(res.status).toBe(201);
  return res.body.key as string;
}

async function signIn(credential: string): Promise<void> {
  await page.context().close();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(15_000);
  await page.goto(`${stack.baseUrl}/console/policies`);
  await page.getByRole('radio', { name: 'API key' }).check();
  await page.getByTestId('credential').fill(credential);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor();
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ services: ['execution', 'registry', 'governance', 'gateway'] });
  expect((await call(stack, 'PUT', '/org/settings', { key: stack.adminKey, body: { governanceApproval: true } })).status).toBe(200);
  key.alice = await member('alice', 'editor', ['view', 'edit']);
  key.pat = await member('pat', 'publisher', ['view', 'edit', 'publish']);
  const created = await call(stack, 'POST', '/policy', { key: key.alice, body: { name: 'Driving licence', rule: RULE } });
  expect(created.status).toBe(201);
  const put = await call(stack, 'PUT', `/policy/${created.body.policyId as string}`, { key: key.alice, body: { status: 'published' } });
  expect(put.status).toBe(202);
  submitted = {
    baseId: created.body.baseId as string,
    policyId: created.body.policyId as string,
    requestedAt: put.body.requestedAt as string,
  };
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('console review inbox', () => {
  it('an editor has no Reviews page', async () => {
    await signIn(key.alice);
    await expect(page.getByRole('link', { name: 'Reviews' }).count()).resolves.toBe(0);
    await page.goto(`${stack.baseUrl}/console/reviews`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
  });

  it('a publisher sees what waits (who asked, when, checks passed) and opens the draft to approve it', async () => {
    await signIn(key.pat);
    await page.getByRole('link', { name: 'Reviews' }).click();
    await page.getByRole('heading', { name: 'Reviews' }).waitFor();
    const row = page.getByTestId('review-list').getByRole('row').filter({ hasText: 'Driving licence' });
    await row.waitFor();
    await expect(row.getByRole('cell').allTextContents()).resolves.toEqual([
      'Driving licence',
      'policy',
      'alice',
      expect.any(String),
      'passed',
    ]);
    await expect(row.locator('time').getAttribute('datetime')).resolves.toBe(submitted.requestedAt);
    await row.getByRole('link', { name: 'Driving licence' }).click();
    await page.waitForURL(`**/console/policies/${submitted.baseId}`);
    await page.getByTestId('record-title').filter({ hasText: 'pending approval' }).waitFor();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByTestId('notice').filter({ hasText: 'Review approved.' }).waitFor();
    // approved, it no longer waits
    await page.getByRole('link', { name: 'Reviews' }).click();
    await page.getByTestId('review-list').getByText('Nothing waits for a review.').waitFor();
  });
});
