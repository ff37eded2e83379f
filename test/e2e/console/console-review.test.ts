/**
 * The web console with governance on (issue 16 item 3), in headless Chromium against the real
 * stack: an editor signs in with a pasted bearer token and submits a draft for review; a
 * publisher approves and publishes it, rejects a later change, and compares versions; a viewer
 * sees no editing controls; an admin deletes the policy.
 */

import { SignJWT } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

const RULE_V1 = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';
const RULE_V2 = 'A **driver** gets a licence if the __age__ of the **driver** is at least 16.';

let stack: Stack;
let browser: Browser;
let page: Page;
const key: Record<'pat' | 'vera', string> = { pat: '', vera: '' };
let baseId = '';

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

/** Signs out whoever is signed in (a fresh browser context: nothing kept) and signs in. */
async function signIn(credential: string, kind: 'API key' | 'Bearer token' = 'API key'): Promise<void> {
  await page.context().close();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(15_000);
  await page.goto(`${stack.baseUrl}/console/policies`);
  await page.getByRole('radio', { name: kind }).check();
  await page.getByTestId('credential').fill(credential);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').or(page.getByRole('alert')).first().waitFor();
  const refused = await page.getByRole('alert').count();
  if (refused) throw new Error(`sign-in refused: ${await page.getByRole('alert').textContent()}`);
}

async function setEditor(label: string, text: string): Promise<void> {
  await page.getByRole('textbox', { name: label }).click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ services: ['execution', 'registry', 'governance', 'audit', 'gateway'] });
  expect((await call(stack, 'PUT', '/org/settings', { key: stack.adminKey, body: { governanceApproval: true } })).status).toBe(200);
  expect((await call(stack, 'PUT', '/users/alice', { key: stack.adminKey, body: { role: 'editor' } })).status).toBeLessThan(300);
  key.pat = await member('pat', 'publisher', ['view', 'edit', 'publish']);
  key.vera = await member('vera', 'viewer', ['view']);
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('console review workflow', () => {
  it('an editor signed in with a bearer token submits a draft for review', async () => {
    await signIn(await token('alice'), 'Bearer token');
    await expect(page.getByTestId('who').textContent()).resolves.toContain('alice · editor');
    await expect(page.getByRole('link', { name: 'Audit' }).count()).resolves.toBe(0);
    await page.getByTestId('new-name').fill('Licence');
    await page.getByRole('button', { name: 'Create' }).click();
    baseId = (await page.getByTestId('base-id').textContent()) ?? '';
    await setEditor('Rule editor', RULE_V1);
    await page.getByTestId('publish').click();
    await page.getByTestId('notice').filter({ hasText: 'Submitted for review' }).waitFor();
    await page.getByTestId('record-title').filter({ hasText: 'pending approval' }).waitFor();
    // the editor cannot approve their own request: no review buttons for them
    await expect(page.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(0);
    const review = await call(stack, 'GET', `/policy/${baseId}/review`, { key: key.pat });
    expect(review.body.state).toBe('pending_approval');
  });

  it('a publisher approves and publishes it', async () => {
    await signIn(key.pat);
    await page.goto(`${stack.baseUrl}/console/policies/${baseId}`);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByTestId('notice').filter({ hasText: 'Review approved.' }).waitFor();
    await page.getByRole('button', { name: 'Publish approved draft' }).click();
    await page.getByTestId('notice').filter({ hasText: 'Published version 1.' }).waitFor();
    const rec = await call(stack, 'GET', `/policy/${baseId}`, { key: key.pat });
    expect(rec.body).toMatchObject({ status: 'published', version: 1, rule: RULE_V1, publishedBy: 'pat' });
  });

  it('a publisher rejects a later change with a comment, and the versions diff shows the change', async () => {
    await signIn(await token('alice'), 'Bearer token');
    await page.goto(`${stack.baseUrl}/console/policies/${baseId}`);
    await page.getByRole('button', { name: 'Edit: new draft from v1' }).click();
    await page.getByTestId('notice').waitFor();
    await setEditor('Rule editor', RULE_V2);
    await page.getByTestId('publish').click();
    await page.getByTestId('notice').filter({ hasText: 'Submitted for review' }).waitFor();

    await signIn(key.pat);
    await page.goto(`${stack.baseUrl}/console/policies/${baseId}`);
    await page.getByRole('textbox', { name: 'Comment' }).fill('the legal age is 17');
    await page.getByRole('button', { name: 'Reject' }).click();
    await page.getByTestId('notice').filter({ hasText: 'Review rejected.' }).waitFor();
    const current = await call(stack, 'GET', `/policy/${baseId}`, { key: key.pat });
    const versions = await call(stack, 'GET', `/policy/${current.body.policyId}/versions`, { key: key.pat });
    const draft = versions.body.items.find((r: { status: string }) => r.status === 'draft');
    const review = await call(stack, 'GET', `/policy/${draft.policyId}/review`, { key: key.pat });
    expect(review.body).toMatchObject({ state: 'rejected', comment: 'the legal age is 17', decidedBy: 'pat' });

    const diff = page.getByTestId('diff');
    await expect(diff.locator('.removed').textContent()).resolves.toContain('is at least 17');
    await expect(diff.locator('.added').textContent()).resolves.toContain('is at least 16');
  });

  it('a viewer sees the policy without editing, publishing or deleting controls', async () => {
    await signIn(key.vera);
    await page.getByTestId('policy-list').getByRole('link', { name: 'Licence' }).waitFor();
    await expect(page.getByTestId('new-name').count()).resolves.toBe(0);
    await page.getByTestId('policy-list').getByRole('link', { name: 'Licence' }).click();
    await page.getByTestId('versions').waitFor();
    for (const name of ['Save draft', 'Publish (or submit for review)', 'Delete', 'Approve']) {
      await expect(page.getByRole('button', { name }).count(), name).resolves.toBe(0);
    }
  });

  it('an admin deletes the policy; it leaves the list and the API answers 404', async () => {
    await signIn(stack.adminKey);
    await page.goto(`${stack.baseUrl}/console/policies/${baseId}`);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL(`${stack.baseUrl}/console/policies`);
    await page.getByTestId('policy-list').filter({ hasText: 'Nothing here' }).waitFor();
    expect((await call(stack, 'GET', `/policy/${baseId}`, { key: stack.adminKey })).status).toBe(404);
  });
});
