/**
 * What a new user tripped on in the console, in headless Chromium against the real stack (governance
 * on): every page fits a 390 px phone; a key with only the `audit` scope lands on Audit and sees only
 * what it may use; the explanation keeps the rule's verb; flow nodes name their policy; the review
 * stands apart from Save and Publish and says who asked and when; the audit trail says each event
 * in words (raw JSON behind a toggle); and the scripts travel compressed and cached under hashed
 * names (real HTTP requests to the gateway, raw bytes).
 */

import { get, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { eventually } from '@arbiter/test-kit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerToken, call, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

const RULE = 'A **customer** gets free shipping if the __total__ of the **order** is greater than 50.';
const RULE_V2 = 'A **customer** gets free shipping if the __total__ of the **order** is greater than 40.';

let stack: Stack;
let browser: Browser;
let page: Page;
const key = { pat: '', alice: '', auditOnly: '' };
let policyBase = '';
let flowBase = '';

async function memberKey(userId: string, role: string, scopes: string[]): Promise<string> {
  const put = await call(stack, 'PUT', `/users/${userId}`, { key: stack.adminKey, body: { role } });
  expect([200, 201]).toContain(put.status);
  const res = await call(stack, 'POST', '/apikeys', {
    headers: { authorization: `Bearer ${await bearerToken(stack, userId)}` },
    body: { name: `${userId}-key`, scopes },
  });
  expect(res.status).toBe(201);
  return res.body.key as string;
}

/** A fresh browser context (nothing kept), signed in with `credential` at `width` px. */
async function signIn(credential: string, width = 1280): Promise<void> {
  await page?.context().close();
  page = await browser.newPage({ viewport: { width, height: 844 } });
  page.setDefaultTimeout(15_000);
  await page.goto(`${stack.baseUrl}/console`);
  await page.getByTestId('credential').fill(credential);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor();
}

async function setEditor(label: string, text: string): Promise<void> {
  await page.getByRole('textbox', { name: label }).click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

/** How far the page scrolls sideways, with the elements that stick out (for the failure message). Runs in the page. */
const SIDEWAYS = `(() => {
  const width = window.innerWidth;
  const culprits = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.right > width + 1 && r.width > 0 && culprits.length < 8) {
      culprits.push(el.tagName.toLowerCase() + '.' + el.className + ' right=' + Math.round(r.right));
    }
  }
  return { px: document.documentElement.scrollWidth - width, culprits };
})()`;

async function sidewaysScroll(): Promise<{ px: number; culprits: string[] }> {
  return (await page.evaluate(SIDEWAYS)) as { px: number; culprits: string[] };
}

/** One GET with the bytes as sent (fetch would decompress them). */
function rawGet(url: string, acceptEncoding?: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ services: ['execution', 'registry', 'governance', 'audit', 'gateway'] });
  // published before governance is on: a flow can call it, and a later draft goes through review
  const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'Free shipping', rule: RULE } });
  expect(created.status).toBe(201);
  policyBase = created.body.baseId as string;
  const published = await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key: stack.adminKey, body: { status: 'published' } });
  expect(published.status).toBe(201);
  const flow = await call(stack, 'POST', '/flow', {
    key: stack.adminKey,
    body: {
      name: 'Shipping desk',
      definition: {
        start: 'check',
        nodes: {
          check: { type: 'policy', baseId: policyBase, onTrue: 'free', onFalse: 'pay' },
          free: { type: 'return', value: true },
          pay: { type: 'custom', outcome: 'charge shipping' },
        },
      },
    },
  });
  expect(flow.status).toBe(201);
  flowBase = flow.body.baseId as string;

  // a member known by an e-mail address (as identity providers name users) makes a policy: a long word in the list
  await memberKey('maria.gonzalez@example.com', 'editor', ['view', 'edit']);
  const parcel = await call(stack, 'POST', '/policy', {
    headers: { authorization: `Bearer ${await bearerToken(stack, 'maria.gonzalez@example.com')}` },
    body: { name: 'Parcel size', rule: 'A **parcel** is small if the __weight__ of the **parcel** is less than 2.' },
  });
  expect(parcel.status).toBe(201);
  const parcelPublished = await call(stack, 'PUT', `/policy/${parcel.body.policyId}`, {
    key: stack.adminKey,
    body: { status: 'published' },
  });
  expect(parcelPublished.status).toBe(201);

  expect((await call(stack, 'PUT', '/org/settings', { key: stack.adminKey, body: { governanceApproval: true } })).status).toBe(200);
  key.pat = await memberKey('pat', 'publisher', ['view', 'edit', 'publish']);
  key.alice = await memberKey('alice', 'editor', ['view', 'edit']);
  const auditKey = await call(stack, 'POST', '/apikeys', { key: stack.adminKey, body: { name: 'audit only', scopes: ['audit'] } });
  expect(auditKey.status).toBe(201);
  key.auditOnly = auditKey.body.key as string;

  // alice asks for a review of a change
  const draft = await call(stack, 'GET', `/policy/${published.body.policyId}/draft`, { key: key.alice });
  expect(draft.status).toBe(201);
  const submitted = await call(stack, 'PUT', `/policy/${draft.body.policyId}`, {
    key: key.alice,
    body: { status: 'published', rule: RULE_V2 },
  });
  expect(submitted.status).toBe(202);
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('console usability', () => {
  it('sends the scripts brotli- or gzip-compressed per Accept-Encoding, cached under immutable hashed names', async () => {
    const index = await rawGet(`${stack.baseUrl}/console`, 'gzip, deflate, br');
    expect(index.headers['cache-control']).toBe('no-cache');
    const html = index.body.toString();
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]);
    const script = assets.find((a) => a.endsWith('.js'));
    expect(script, html).toMatch(/^\/console\/assets\/index-[\w-]{8,}\.js$/);
    const url = `${stack.baseUrl}${script}`;

    const plain = await rawGet(url);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(100_000); // the main bundle (about 640 KB)

    const br = await rawGet(url, 'gzip, deflate, br, zstd');
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toContain('javascript');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.body.length).toBeLessThan(plain.body.length / 3);
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);

    const gz = await rawGet(url, 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(gz.body.length).toBeLessThan(plain.body.length / 3);
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);

    // and the browser gets it compressed
    await signIn(stack.adminKey);
    const encoding = page.waitForResponse((r) => r.url().endsWith(script!)).then((r) => r.headerValue('content-encoding'));
    await page.reload();
    await expect(encoding).resolves.toBe('br');
  });

  it('lands a key with only the `audit` scope on Audit, with a menu of only what it may use', async () => {
    // the two policies, the flow and alice's draft, once the audit service has them
    await eventually(
      async () => {
        const trail = await call(stack, 'GET', '/audit?kind=created', { key: key.auditOnly });
        expect((trail.body.items as unknown[]).length).toBe(4);
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await signIn(key.auditOnly);
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/audit');
    const menu = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    expect(menu).toEqual(['Audit']);
    await expect(page.getByRole('textbox', { name: 'Rule editor' }).count()).resolves.toBe(0);
    // a page it cannot use is not offered by address either
    await page.goto(`${stack.baseUrl}/console/policies`);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await expect(page.getByTestId('policy-list').count()).resolves.toBe(0);
    await page.getByRole('link', { name: 'Go to the start page' }).click();
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    // the trail says the events in words even without the `view` scope (names carried by the events)
    await expect(page.getByTestId('audit-list').textContent()).resolves.toContain('created policy “Free shipping”');
  });

  it('keeps the verb in the explanation ("gets free shipping")', async () => {
    await signIn(stack.adminKey);
    await setEditor('Rule editor', RULE);
    await page.getByTestId('validation').filter({ hasText: '✓ Valid' }).waitFor();
    await page.getByRole('button', { name: 'Explain' }).click();
    const explanation = page.getByTestId('explanation');
    await explanation.locator('ol > li').first().waitFor();
    const text = ((await explanation.locator('ol > li').first().textContent()) ?? '').replace(/\s+/g, ' ');
    expect(text).toContain('A customer gets free shipping if');
  });

  it("names each flow node's policy", async () => {
    await page.goto(`${stack.baseUrl}/console/flows/${flowBase}`);
    const check = page.getByTestId('flow-graph').locator('[data-node="check"]');
    await check.getByTestId('node-detail').filter({ hasText: 'Free shipping' }).waitFor();
    await expect(check.textContent()).resolves.not.toContain('policy');
    await expect(page.getByTestId('flow-graph').locator('[data-node="pay"]').textContent()).resolves.toContain('charge shipping');
  });

  it('shows the review apart from Save and Publish, with who asked and when', async () => {
    await signIn(key.pat);
    await page.goto(`${stack.baseUrl}/console/policies/${policyBase}`);
    const review = page.getByTestId('review');
    await review.waitFor();
    await expect(review.getByTestId('review-facts').textContent()).resolves.toMatch(/^Asked for review by alice on .+\d/);
    const asked = await review.locator('time').first().getAttribute('datetime');
    expect(Date.now() - Date.parse(asked ?? '')).toBeGreaterThanOrEqual(0);
    await expect(review.getByRole('button', { name: 'Approve' }).count()).resolves.toBe(1);
    await expect(review.getByRole('button', { name: 'Reject' }).count()).resolves.toBe(1);
    // the author's controls are elsewhere: not in the review section, and above it, not beside it
    await expect(review.getByTestId('save').count()).resolves.toBe(0);
    await expect(review.getByTestId('publish').count()).resolves.toBe(0);
    const save = await page.getByTestId('save').boundingBox();
    const approve = await review.getByRole('button', { name: 'Approve' }).boundingBox();
    expect(approve!.y).toBeGreaterThanOrEqual(save!.y + save!.height);

    await review.getByRole('textbox', { name: 'Comment' }).fill('forty is fine');
    await review.getByRole('button', { name: 'Approve' }).click();
    await page.getByTestId('notice').filter({ hasText: 'Review approved.' }).waitFor();
    await expect(page.getByTestId('review').getByTestId('review-facts').textContent()).resolves.toMatch(
      /Approved by pat on .+: “forty is fine”\./,
    );
    await page.getByTestId('review').getByRole('button', { name: 'Publish approved draft' }).waitFor();
  });

  it('says each audit event in words, with names, and keeps the raw event behind a toggle', async () => {
    await eventually(
      async () => {
        const trail = await call(stack, 'GET', '/audit?kind=approved', { key: stack.adminKey });
        expect((trail.body.items as unknown[]).length).toBe(1);
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    await signIn(stack.adminKey);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    const list = page.getByTestId('audit-list');
    await list.locator('tbody tr').first().waitFor();
    const summaries = page.getByTestId('event-summary');
    await summaries.filter({ hasText: 'pat approved policy “Free shipping”: “forty is fine”' }).waitFor();
    await summaries.filter({ hasText: 'alice asked for a review of policy “Free shipping”' }).waitFor();
    await summaries.filter({ hasText: 'admin published policy “Free shipping” as version 1' }).waitFor();
    await summaries.filter({ hasText: 'admin turned review before publishing on' }).waitFor();
    await summaries.filter({ hasText: 'admin created flow “Shipping desk”' }).waitFor();
    // no ids and no JSON on show
    const shown = (await list.innerText()).replace(/\s+/g, ' ');
    expect(shown).not.toContain(policyBase.slice(0, 8));
    expect(shown).not.toContain('{"');
    // the raw event is one click away
    const row = list.locator('tbody tr[data-kind="approved"]');
    await expect(row.getByTestId('event-raw').isVisible()).resolves.toBe(false);
    await row.getByText('Raw event').click();
    await expect(row.getByTestId('event-raw').isVisible()).resolves.toBe(true);
    const raw = JSON.parse((await row.getByTestId('event-raw').textContent()) ?? '') as { resource: { baseId: string }; details: object };
    expect(raw.resource.baseId).toBe(policyBase);
    expect(raw.details).toMatchObject({ comment: 'forty is fine' });
  });

  it('fits every page in a 390 px wide window without sideways scrolling', async () => {
    await signIn(stack.adminKey, 390);
    const pages: [string, () => Promise<void>][] = [
      ['/', () => page.getByRole('textbox', { name: 'Rule editor' }).waitFor()],
      ['/policies', () => page.getByTestId('policy-list').getByText('maria.gonzalez@example.com').waitFor()],
      ['/flows', () => page.getByTestId('flow-list').getByRole('link', { name: 'Shipping desk' }).waitFor()],
      [`/policies/${policyBase}`, () => page.getByTestId('versions').waitFor()],
      [`/flows/${flowBase}`, () => page.getByTestId('flow-graph').waitFor()],
      ['/reviews', () => page.getByTestId('review-list').waitFor()],
      ['/audit', () => page.getByTestId('audit-list').locator('tbody tr').first().waitFor()],
      ['/people', () => page.getByRole('heading', { level: 1 }).waitFor()],
    ];
    const wide: string[] = [];
    for (const [route, ready] of pages) {
      await page.goto(`${stack.baseUrl}/console${route}`);
      await ready();
      const { px, culprits } = await sidewaysScroll();
      if (px > 1) wide.push(`${route}: ${px} px too wide (${culprits.join('; ')})`);
    }
    expect(wide).toEqual([]);
  });
});
