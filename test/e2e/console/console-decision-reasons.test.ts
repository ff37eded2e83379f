/**
 * Reasons and recorded decisions in the console, in a real browser (headless Chromium via
 * playwright-core) against the whole stack: a run shows why its result came out (the reasons'
 * sentence above the trace) and marks the deciding conditions in the rule editor (green held, red
 * did not); a flow's table node marks its deciding row and cell; the recorded decisions panel of a
 * policy shows a decision's masked input, answer and reasons to the audit right, and "Save as
 * test" (for callers with edit and audit) adds it to the draft; an auditor sees no such button and
 * an editor no panel.
 */

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually } from '@arbiter/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

const SHOTS = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(fileURLToPath(new URL('../../..', import.meta.url)), 'docs/console');

const SCORE = 'the __score__ of the **applicant** is at least 600';
const AGE = 'the __age__ of the **applicant** is at least 18';
const RULE = `An **applicant** is approved if\n  ${SCORE}\n  and ${AGE}.`;
const SSN = '078-05-1120';

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
let context: BrowserContext | undefined;
let page: Page;
let errors: string[] = [];
const key = { auditor: '', editor: '' };
let policy: { baseId: string; policyId: string };

/** A fresh tab signed in with `credential`, at `at`. */
async function signIn(credential: string, at: string): Promise<void> {
  await context?.close();
  context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
  page = await context.newPage();
  page.setDefaultTimeout(15_000);
  errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${stack.baseUrl}/console${at}`);
  await page.getByTestId('credential').fill(credential);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor();
}

async function ok(status: number, method: string, url: string, body?: unknown): Promise<any> {
  const res = await call(stack, method, url, { key: stack.adminKey, ...(body !== undefined ? { body } : {}) });
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'governance', 'gateway'],
    env: { DECISIONS_FLUSH_MS: '50', DECISIONS_SETTINGS_TTL_MS: '200' },
  });
  key.auditor = await memberKey(stack, 'audrey', 'auditor', ['view', 'audit']);
  key.editor = await memberKey(stack, 'eddie', 'editor', ['view', 'edit']);
  // Masks first: the org's settings are read at its first run.
  await ok(200, 'PUT', '/decisions/settings', { masks: ['applicant.ssn'] });
  const created = await ok(201, 'POST', '/policy', {
    name: 'Approval',
    rule: RULE,
    tests: [{ name: 'young high scorer', data: { applicant: { score: 700, age: 16 } }, expect: false }],
  });
  await ok(201, 'PUT', `/policy/${created.policyId}`, { status: 'published' });
  policy = { baseId: created.baseId, policyId: created.policyId };
  // A draft, so the page's rule editor is editable.
  await ok(201, 'GET', `/policy/${policy.policyId}/draft`);
  // A run that asks for reasons, recorded (masked).
  await ok(200, `POST`, `/run/policy/${policy.baseId}?reasons=true`, { applicant: { score: 500, age: 30, ssn: SSN } });
  await eventually(
    async () => {
      const page = await ok(200, 'GET', `/decisions?baseId=${policy.baseId}`);
      if (page.items.length < 1) throw new Error('not recorded yet');
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );
}, 180_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.stop();
});

describe('reasons of a run', () => {
  it('a policy: the sentence above the trace, the deciding conditions green (held) and red (did not) in the editor', async () => {
    await signIn(stack.adminKey, `/policies/${policy.baseId}`);
    const run = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === '/run');
    await page.getByTestId('run').click();
    expect(JSON.parse((await run).postData() ?? '{}')).toMatchObject({ reasons: true });
    const result = page.getByTestId('run-result');
    await result.waitFor();
    await expect(result.getByTestId('reasons-sentence').textContent()).resolves.toBe(
      'approved is false because the age of the applicant (16) is not at least 18',
    );
    // Above the trace.
    const sentenceBox = await result.getByTestId('reasons-sentence').boundingBox();
    const traceBox = await result.getByTestId('trace').boundingBox();
    expect(sentenceBox!.y + sentenceBox!.height).toBeLessThanOrEqual(traceBox!.y);
    const editor = page.getByTestId('rule-editor');
    await expect(editor.locator('.cm-reason-false').allTextContents()).resolves.toEqual([AGE]);
    expect(await editor.locator('.cm-reason-true').count()).toBe(0);
    await page.getByRole('region', { name: 'Rule', exact: true }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SHOTS, 'reasons.png') });

    // Data where both conditions hold: both green.
    await page.getByRole('textbox', { name: 'Data editor' }).click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('{"applicant": {"score": 700, "age": 30}}');
    await page.getByTestId('run').click();
    await page.getByTestId('run-result').getByTestId('reasons-sentence').getByText('approved is true').waitFor();
    await expect(editor.locator('.cm-reason-true').allTextContents()).resolves.toEqual([SCORE, AGE]);
    // The page's own window (this package has no DOM types).
    type Styles = { getComputedStyle(el: unknown): { borderBottomColor: string } };
    const colour = await editor
      .locator('.cm-reason-true')
      .first()
      .evaluate((el) => (globalThis as unknown as Styles).getComputedStyle(el).borderBottomColor);
    expect(colour).toBe('rgb(46, 125, 50)');

    // An edit of the rule drops the marks (their places were the text's that ran).
    await page.getByRole('textbox', { name: 'Rule editor' }).click();
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText(' ');
    await editor.locator('.cm-reason').first().waitFor({ state: 'detached' });
    expect(errors).toEqual([]);
  });

  it('a flow: the table node marks its deciding row and cell, and says why', async () => {
    const flow = await ok(201, 'POST', '/flow', {
      name: 'Tiers',
      definition: DEFINITION,
      tests: [{ name: 'rich', data: { applicant: { income: 5000 } }, expect: true }],
    });
    await signIn(stack.adminKey, `/flows/${flow.baseId}`);
    await page.getByTestId('run').click();
    const result = page.getByTestId('run-result');
    await result.getByTestId('reasons-sentence').first().waitFor();
    await expect(result.getByTestId('reasons-sentence').first().textContent()).resolves.toBe(
      'tier: tier is {"tier":"gold"} because rule 1 matched (income: > 1000 (5000))',
    );
    const rows = page.locator('[data-testid="table-editor-tier"] tbody tr');
    await expect(rows.nth(0).getAttribute('data-deciding')).resolves.toBe('true');
    await expect(rows.nth(0).locator('td[data-reason="true"]').count()).resolves.toBe(1);
    expect(await rows.nth(1).getAttribute('data-deciding')).toBeNull();

    // No rule matched: every row listed, each with its failing cell in red.
    await page.getByRole('textbox', { name: 'Rule 2 income' }).fill('< 0');
    await page.getByRole('textbox', { name: 'Data editor' }).click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('{"applicant": {"income": 10}}');
    await page.getByTestId('run').click();
    await result.getByTestId('reasons-sentence').getByText('no rule matched').waitFor();
    await expect(rows.nth(0).getAttribute('data-deciding')).resolves.toBe('false');
    await expect(rows.nth(1).locator('td[data-reason="false"]').count()).resolves.toBe(1);
    expect(errors).toEqual([]);
  });
});

describe('recorded decisions', () => {
  it('an admin reads a decision masked, with its reasons, and saves it as a test of the draft', async () => {
    await signIn(stack.adminKey, `/policies/${policy.baseId}`);
    const panel = page.getByTestId('decisions');
    await panel.getByTestId('decision-row').first().waitFor();
    await panel.getByTestId('decision-show').first().click();
    const detail = panel.getByTestId('decision-detail');
    await expect(detail.getByTestId('decision-answer').textContent()).resolves.toBe('false');
    const input = JSON.parse((await detail.getByTestId('decision-input').textContent()) ?? '');
    expect(input).toEqual({ applicant: { score: 500, age: 30, ssn: '***' } });
    await expect(detail.getByTestId('reasons-sentence').textContent()).resolves.toBe(
      'approved is false because the score of the applicant (500) is not at least 600',
    );
    expect(await page.content()).not.toContain(SSN);
    await panel.screenshot({ path: path.join(SHOTS, 'decisions.png') });

    await detail.getByTestId('decision-test-name').fill('declined at 500');
    const saved = page.waitForResponse((r) => new URL(r.url()).pathname === `/policy/${policy.baseId}/tests/from-decision`);
    await detail.getByTestId('save-as-test').click();
    expect((await saved).status()).toBe(201);
    await page.getByTestId('notice').getByText('declined at 500').waitFor();
    const draft = await ok(200, 'GET', `/policy/${policy.baseId}/draft`);
    expect(draft.tests.map((t: { name: string }) => t.name)).toContain('declined at 500 (masked input)');
    expect(draft.tests.find((t: { name: string }) => t.name === 'declined at 500 (masked input)')).toMatchObject({
      data: { applicant: { score: 500, age: 30, ssn: '***' } },
      expect: false,
    });
    expect(errors).toEqual([]);
  });

  it('an auditor reads decisions but gets no Save as test; an editor gets no decisions panel', async () => {
    await signIn(key.auditor, `/policies/${policy.baseId}`);
    const panel = page.getByTestId('decisions');
    await panel.getByTestId('decision-show').first().click();
    await panel.getByTestId('decision-detail').waitFor();
    expect(await panel.getByTestId('save-as-test').count()).toBe(0);

    await signIn(key.editor, `/policies/${policy.baseId}`);
    await page.getByTestId('run').waitFor();
    expect(await page.getByTestId('decisions').count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
