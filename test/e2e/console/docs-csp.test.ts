/**
 * `/docs` shares the console's origin: its CSP forbids inline scripts and
 * anything from elsewhere. In headless Chromium the interactive docs must still render every
 * operation and expand one, with no CSP violation reported by the browser.
 */

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

let stack: Stack;
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ services: ['gateway'] });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe('/docs under its CSP', () => {
  it('renders the operations with no CSP violation, and cannot be framed', async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (msg) => {
      if (/Content Security Policy|Refused to/i.test(msg.text())) violations.push(msg.text());
    });
    await page.addInitScript({
      content:
        "document.addEventListener('securitypolicyviolation', (e) => console.error('Refused to load: ' + e.violatedDirective + ' ' + e.blockedURI));",
    });
    const res = await page.goto(`${stack.baseUrl}/docs/`);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(res?.headers()['x-frame-options']).toBe('DENY');
    // swagger-ui built the page from the spec: the operations are there and one expands
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
    await page.locator('.opblock-summary').first().click();
    await page.locator('.opblock-body').first().waitFor();
    expect(violations).toEqual([]);

    // a page of another origin cannot frame it
    const framing = await browser.newPage();
    const blocked: string[] = [];
    framing.on('console', (msg) => blocked.push(msg.text()));
    await framing.setContent(`<iframe src="${stack.baseUrl}/docs/"></iframe>`);
    await expect
      .poll(() => blocked.some((t) => /frame-ancestors|X-Frame-Options|Refused to (display|frame)/i.test(t)), { timeout: 10_000 })
      .toBe(true);
    await page.close();
    await framing.close();
  }, 60_000);
});
