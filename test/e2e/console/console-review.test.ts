/**
 * The web console with governance on, in headless Chromium against the real
 * stack: an editor signs in with a pasted bearer token and submits a draft for review; a
 * publisher approves and publishes it, rejects a later change, and compares versions; a viewer
 * sees no editing controls; an admin deletes the policy. The review view's impact analysis:
 * a publisher runs it on a submitted draft that moves a threshold and sees the API's
 * report without its examples (they need the `audit` right), an admin sees them too (the impact
 * section is saved to docs/console/impact.png); a viewer sees it without an active button; an
 * edit makes it stale. A flow draft whose policy node runs a moved threshold shows the flow
 * report: its counts, and to an admin examples with each side's result and path.
 */

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from '@arbiter/test-kit';
import { SignJWT } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SHOTS = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(root, 'docs/console');

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
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchChromium();
  // Decisions are recorded by default (DECISIONS_PER_SECOND, 50 per base and second); flushed sooner here.
  stack = await startStack({ services: ['execution', 'registry', 'governance', 'audit', 'gateway'], env: { DECISIONS_FLUSH_MS: '50' } });
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
    await page.getByTestId('notice').filter({ hasText: 'Version 1 published.' }).waitFor();
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

describe('the review view’s impact analysis', () => {
  const scoreRule = (threshold: number) => `An **applicant** is approved if the __score__ of the **applicant** is at least ${threshold}.`;
  const COUNTS = ['replayed', 'unchanged', 'changed', 'errors', 'unreplayable'] as const;
  let scores = '';

  /** The draft's review summary as the API answers it to the publisher. */
  async function reviewOfDraft(): Promise<{ draftId: string; impact: Record<string, any> | null }> {
    const current = await call(stack, 'GET', `/policy/${scores}`, { key: key.pat });
    const versions = await call(stack, 'GET', `/policy/${current.body.policyId}/versions`, { key: key.pat });
    const draft = versions.body.items.find((r: { status: string }) => r.status === 'draft');
    const review = await call(stack, 'GET', `/policy/${draft.policyId}/review`, { key: key.pat });
    expect(review.status, JSON.stringify(review.body)).toBe(200);
    return { draftId: draft.policyId as string, impact: review.body.impact };
  }

  /** The counts the impact section shows equal the report's. */
  async function expectShown(report: Record<string, any>): Promise<void> {
    await expect(page.getByTestId('impact-report').getAttribute('data-impact-id')).resolves.toBe(report.impactId);
    for (const field of COUNTS) {
      await expect(page.getByTestId(`impact-${field}`).textContent(), field).resolves.toBe(String(report[field]));
    }
  }

  it('a publisher runs it on a submitted draft that moves the threshold and sees the API’s report: counts and transitions; an admin also sees the examples side by side', async () => {
    // Version 1 (threshold 600), published through review: the admin writes it, pat approves and publishes.
    const admin = stack.adminKey;
    const created = await call(stack, 'POST', '/policy', { key: admin, body: { name: 'Scores', rule: scoreRule(600) } });
    expect(created.status).toBe(201);
    scores = created.body.baseId;
    expect((await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key: admin, body: { status: 'published' } })).status).toBe(202);
    expect((await call(stack, 'POST', `/policy/${scores}/review/approve`, { key: key.pat })).status).toBe(200);
    expect((await call(stack, 'POST', `/policy/${scores}/review/publish`, { key: key.pat })).status).toBe(201);

    // 30 runs on both sides of 600 (scores 590..619; 5 of them in [600, 605)): 10 single, a batch of 20.
    const data = Array.from({ length: 30 }, (_, i) => ({ applicant: { score: 590 + i } }));
    for (const item of data.slice(0, 10)) {
      expect((await call(stack, 'POST', `/run/policy/${scores}`, { key: admin, body: item })).status).toBe(200);
    }
    expect((await call(stack, 'POST', `/run/policy/${scores}/batch`, { key: admin, body: { items: data.slice(10) } })).status).toBe(200);
    await eventually(
      async () => {
        const recorded = await call(stack, 'GET', `/decisions?baseId=${scores}&limit=100`, { key: admin });
        expect(recorded.body.items).toHaveLength(30);
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );

    // alice moves the threshold to 605 in a new draft and submits it.
    await signIn(await token('alice'), 'Bearer token');
    await page.goto(`${stack.baseUrl}/console/policies/${scores}`);
    await page.getByRole('button', { name: 'Edit: new draft from v1' }).click();
    await page.getByTestId('notice').waitFor();
    await setEditor('Rule editor', scoreRule(605));
    await page.getByTestId('publish').click();
    await page.getByTestId('notice').filter({ hasText: 'Submitted for review' }).waitFor();

    // pat opens the review view: no report yet; the run shows its progress, then the report.
    await signIn(key.pat);
    await page.goto(`${stack.baseUrl}/console/policies/${scores}`);
    await page.getByTestId('record-title').filter({ hasText: 'pending approval' }).waitFor();
    await page.getByTestId('impact-none').waitFor();
    const held = Promise.withResolvers<void>();
    await page.route('**/policy/*/impact', async (route) => {
      await held.promise;
      await route.continue();
    });
    await page.getByRole('button', { name: 'Run impact analysis' }).click();
    await page.getByTestId('impact-running').waitFor();
    await expect(page.getByRole('button', { name: 'Run impact analysis' }).isDisabled()).resolves.toBe(true);
    held.resolve();
    await page.getByTestId('impact-report').waitFor();
    await page.unroute('**/policy/*/impact');
    await expect(page.getByTestId('impact-running').count()).resolves.toBe(0);

    const { impact } = await reviewOfDraft();
    expect(impact).toMatchObject({ replayed: 30, unchanged: 25, changed: 5, errors: 0, unreplayable: 0 });
    await expectShown(impact!);
    await expect(page.getByTestId('impact-changed').textContent()).resolves.toBe('5');
    await expect(page.getByTestId('impact-report').locator('time').first().getAttribute('datetime')).resolves.toBe(impact!.at);
    const transition = page.getByTestId('impact-transitions').locator('tbody tr');
    await expect(transition.allTextContents()).resolves.toEqual(['truefalse5']);
    // The examples are recorded inputs: a publisher is told they need the `audit` right.
    await expect(page.getByTestId('impact-example').count()).resolves.toBe(0);
    await expect(page.getByTestId('impact-examples-note').textContent()).resolves.toBe(
      'Examples need the `audit` right (admins and auditors): they show recorded decision inputs.',
    );

    // An admin sees the same report with its examples.
    await signIn(stack.adminKey);
    await page.goto(`${stack.baseUrl}/console/policies/${scores}`);
    await page.getByTestId('impact-example').first().waitFor();
    await expectShown(impact!);
    await expect(page.getByTestId('impact-examples-note').count()).resolves.toBe(0);
    const examples = page.getByTestId('impact-example');
    await expect(examples.count()).resolves.toBe(5);
    const first = examples.first();
    await expect(first.getByTestId('impact-before').locator('strong').textContent()).resolves.toBe('true');
    await expect(first.getByTestId('impact-after').locator('strong').textContent()).resolves.toBe('false');
    await expect(first.getByTestId('impact-before').locator('li').allTextContents()).resolves.toEqual(['approved: true']);
    await expect(first.getByTestId('impact-after').locator('li').allTextContents()).resolves.toEqual(['approved: false']);
    await expect(first.locator('pre').textContent()).resolves.toMatch(/^\{"applicant":\{"score":60[0-4]\}\}$/);
    await page.getByTestId('impact').screenshot({ path: path.join(SHOTS, 'impact.png') });
  });

  it('a viewer sees the report, and the run button disabled with the reason', async () => {
    await signIn(key.vera);
    await page.goto(`${stack.baseUrl}/console/policies/${scores}`);
    await page.getByTestId('impact-report').waitFor();
    const { impact } = await reviewOfDraft();
    await expectShown(impact!);
    await expect(page.getByTestId('impact-example').count()).resolves.toBe(0);
    await expect(page.getByTestId('impact-examples-note').textContent()).resolves.toContain('need the `audit` right');
    await expect(page.getByRole('button', { name: 'Run impact analysis' }).isDisabled()).resolves.toBe(true);
    await expect(page.getByTestId('impact-run-reason').textContent()).resolves.toBe(
      'Your role (viewer) cannot run an impact analysis: editors, publishers and admins can.',
    );
  });

  it('an edit of the draft makes the report stale; the editor runs it again', async () => {
    await signIn(await token('alice'), 'Bearer token');
    await page.goto(`${stack.baseUrl}/console/policies/${scores}`);
    await page.getByTestId('impact-report').waitFor();
    await setEditor('Rule editor', scoreRule(610));
    await page.getByTestId('save').click();
    await page.getByTestId('notice').filter({ hasText: 'Draft saved.' }).waitFor();
    await page.getByTestId('impact-stale').waitFor();
    await expect(page.getByTestId('impact').getAttribute('data-state')).resolves.toBe('stale');
    await expect(page.getByTestId('impact-report').count()).resolves.toBe(0);
    expect((await reviewOfDraft()).impact).toBeNull();

    await page.getByRole('button', { name: 'Run impact analysis' }).click();
    await page.getByTestId('impact-report').waitFor();
    const { impact } = await reviewOfDraft();
    expect(impact).toMatchObject({ replayed: 30, changed: 10, transitions: { 'true→false': 10 } });
    await expectShown(impact!);
  });

  it('a draft whose base has no recorded decisions gets a report of 0 replayed, with a hint', async () => {
    const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'Never run', rule: scoreRule(1) } });
    expect(created.status).toBe(201);
    await signIn(stack.adminKey);
    await page.goto(`${stack.baseUrl}/console/policies/${created.body.baseId}`);
    await page.getByTestId('impact-none').waitFor();
    await page.getByRole('button', { name: 'Run impact analysis' }).click();
    await page.getByTestId('impact-hint').waitFor();
    await expect(page.getByTestId('impact-replayed').textContent()).resolves.toBe('0');
    await expect(page.getByTestId('impact-hint').textContent()).resolves.toContain('No recorded decisions to replay');
  });
});

describe('the impact analysis of a flow draft', () => {
  const scoreRule = (threshold: number) => `An **applicant** is approved if the __score__ of the **applicant** is at least ${threshold}.`;
  /** Approve on a policy node (`policyId` an exact record), else the custom outcome `manual review`. */
  const approval = (policyId: string) => ({
    start: 'score',
    nodes: {
      score: { type: 'policy', policyId, onTrue: 'ok', onFalse: 'review' },
      ok: { type: 'return', value: true },
      review: { type: 'custom', outcome: 'manual review' },
    },
  });

  /** Publishes a record through review: submitted by the admin, approved and published by pat. */
  async function publishReviewed(noun: 'policy' | 'flow', recordId: string, baseId: string): Promise<void> {
    const submitted = await call(stack, 'PUT', `/${noun}/${recordId}`, { key: stack.adminKey, body: { status: 'published' } });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    expect((await call(stack, 'POST', `/${noun}/${baseId}/review/approve`, { key: key.pat })).status).toBe(200);
    expect((await call(stack, 'POST', `/${noun}/${baseId}/review/publish`, { key: key.pat })).status).toBe(201);
  }

  it('a publisher runs it on the flow draft page and sees the API’s report: counts and transitions; an admin also sees the examples with both paths', async () => {
    const admin = stack.adminKey;
    // A published policy (600) and its draft (605).
    const policy = await call(stack, 'POST', '/policy', { key: admin, body: { name: 'Flow scores', rule: scoreRule(600) } });
    expect(policy.status).toBe(201);
    await publishReviewed('policy', policy.body.policyId, policy.body.baseId);
    const policyDraft = await call(stack, 'GET', `/policy/${policy.body.policyId}/draft`, { key: admin });
    expect(policyDraft.status).toBe(201);
    const moved = await call(stack, 'PUT', `/policy/${policyDraft.body.policyId}`, {
      key: admin,
      body: { status: 'draft', rule: scoreRule(605) },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);

    // A published flow running the policy's version 1, and 30 recorded runs (scores 590..619; 5 in [600, 605)).
    const flow = await call(stack, 'POST', '/flow', { key: admin, body: { name: 'Approval', definition: approval(policy.body.policyId) } });
    expect(flow.status).toBe(201);
    const flowBase = flow.body.baseId as string;
    await publishReviewed('flow', flow.body.flowId, flowBase);
    const items = Array.from({ length: 30 }, (_, i) => ({ applicant: { score: 590 + i } }));
    const batch = await call(stack, 'POST', `/run/flow/${flowBase}/batch`, { key: admin, body: { items } });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    await eventually(
      async () => {
        const recorded = await call(stack, 'GET', `/decisions?baseId=${flowBase}&limit=100`, { key: admin });
        expect(recorded.body.items).toHaveLength(30);
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );

    // The flow's draft runs the policy's draft (605) instead of its version (600).
    const flowDraft = await call(stack, 'GET', `/flow/${flow.body.flowId}/draft`, { key: admin });
    expect(flowDraft.status).toBe(201);
    const draftId = flowDraft.body.flowId as string;
    const edited = await call(stack, 'PUT', `/flow/${draftId}`, {
      key: admin,
      body: { status: 'draft', definition: approval(policyDraft.body.policyId) },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);

    await signIn(key.pat);
    const violations: string[] = [];
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) violations.push(msg.text());
    });
    await page.goto(`${stack.baseUrl}/console/flows/${flowBase}`);
    await page.getByTestId('impact-none').waitFor();
    await page.getByRole('button', { name: 'Run impact analysis' }).click();
    await page.getByTestId('impact-report').waitFor();

    const review = await call(stack, 'GET', `/flow/${draftId}/review`, { key: key.pat });
    expect(review.status, JSON.stringify(review.body)).toBe(200);
    const impact = review.body.impact as Record<string, any>;
    expect(impact).toMatchObject({
      flowId: draftId,
      replayed: 30,
      unchanged: 25,
      changed: 5,
      errors: 0,
      unreplayable: 0,
      transitions: { 'true→manual review': 5 },
      outcomes: {},
    });
    await expect(page.getByTestId('impact-report').getAttribute('data-impact-id')).resolves.toBe(impact.impactId);
    for (const field of ['replayed', 'unchanged', 'changed', 'errors', 'unreplayable'] as const) {
      await expect(page.getByTestId(`impact-${field}`).textContent(), field).resolves.toBe(String(impact[field]));
    }
    await expect(page.getByTestId('impact-transitions').locator('tbody tr').allTextContents()).resolves.toEqual(['truemanual review5']);
    await expect(page.getByTestId('impact-outcomes').count()).resolves.toBe(0);
    await expect(page.getByTestId('impact-example').count()).resolves.toBe(0);
    await page.getByTestId('impact-examples-note').waitFor();

    await signIn(stack.adminKey);
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) violations.push(msg.text());
    });
    await page.goto(`${stack.baseUrl}/console/flows/${flowBase}`);
    await page.getByTestId('impact-example').first().waitFor();
    const examples = page.getByTestId('impact-example');
    await expect(examples.count()).resolves.toBe(5);
    const first = examples.first();
    const before = first.getByTestId('impact-before');
    const after = first.getByTestId('impact-after');
    await expect(before.locator('strong').textContent()).resolves.toBe('true');
    await expect(before.getByTestId('impact-path').textContent()).resolves.toBe('score → ok');
    await expect(after.locator('strong').textContent()).resolves.toBe('"manual review"');
    await expect(after.getByTestId('impact-path').textContent()).resolves.toBe('score → review');
    await expect(first.locator('li').count()).resolves.toBe(0);
    await expect(first.locator('pre').textContent()).resolves.toMatch(/^\{"applicant":\{"score":60[0-4]\}\}$/);
    expect(violations).toEqual([]);
  });
});

describe('a scheduled publish under governance', () => {
  /** The `datetime-local` value of an instant in this machine's zone (the browser's), to the minute. */
  const localValue = (at: number) => new Date(at - new Date(at).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);

  it('a publisher schedules the approved draft with “Publish approved draft”; the plain publish shows the service’s refusal', async () => {
    const created = await call(stack, 'POST', '/policy', { key: stack.adminKey, body: { name: 'Later', rule: RULE_V1 } });
    const later = created.body.baseId as string;
    const at = Math.floor((Date.now() + 3600_000) / 60_000) * 60_000;

    // the schedule belongs to the publish step: a governed submission carrying one is refused, nothing submitted
    await signIn(key.pat);
    await page.goto(`${stack.baseUrl}/console/policies/${later}`);
    await page.getByLabel('Takes effect at').fill(localValue(at));
    await page.getByTestId('publish').click();
    await page.getByRole('alert').filter({ hasText: 'with governance approval on, give `effectiveFrom`' }).waitFor();
    expect((await call(stack, 'GET', `/policy/${later}/review`, { key: key.pat })).body.state).toBe('draft');

    expect(
      (await call(stack, 'PUT', `/policy/${created.body.policyId}`, { key: stack.adminKey, body: { status: 'published' } })).status,
    ).toBe(202);
    expect((await call(stack, 'POST', `/policy/${later}/review/approve`, { key: key.pat })).status).toBe(200);
    await page.goto(`${stack.baseUrl}/console/policies/${later}`);
    await page.getByTestId('record-title').filter({ hasText: 'approved' }).waitFor();
    await page.getByLabel('Takes effect at').fill(localValue(at));
    await page.getByRole('button', { name: 'Publish approved draft' }).click();
    await page.getByTestId('notice').filter({ hasText: 'Version 1 is scheduled for' }).waitFor();
    await page.getByTestId('versions').getByText('scheduled for').waitFor();
    const versions = await call(stack, 'GET', `/policy/${later}/versions`, { key: key.pat });
    expect(versions.body.items[0]).toMatchObject({ version: 1, publishedBy: 'pat', cancelled: false });
    expect(Date.parse(versions.body.items[0].effectiveFrom)).toBe(at);
  });
});
