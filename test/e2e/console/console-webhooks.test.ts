/**
 * The web console's Webhooks page (docs/webhooks.md), in headless Chromium against the real stack
 * with a local receiver: an admin adds an endpoint (its secret shown once), sends a ping that the
 * receiver verifies with that secret (the `standardwebhooks` package), sees the delivery with its
 * attempt, and rotates the secret. A key without `admin` has no Webhooks entry.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@arbiter/test-kit';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from '../harness.js';
import { launchChromium } from './browser.js';

let stack: Stack;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let server: Server;
let receiverUrl: string;
const received: { headers: Record<string, string>; body: string }[] = [];

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
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h])]));
      received.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  browser = await launchChromium();
  stack = await startStack({
    services: ['webhooks', 'gateway'],
    env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_ALLOW_HTTP: 'true' },
  });
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

describe('Webhooks page', () => {
  it('adds an endpoint with its secret shown once, pings it, shows the delivery, and rotates the secret', async () => {
    await signIn(stack.adminKey);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    expect(page.url()).toBe(`${stack.baseUrl}/console/webhooks`);
    await page.getByTestId('webhook-url').fill(receiverUrl);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('webhook-secret').locator('code').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await page.getByTestId('webhook-list').getByText(receiverUrl).waitFor();

    await page.getByRole('button', { name: 'Test' }).click();
    await page
      .getByTestId('notice')
      .filter({ hasText: `Ping sent to ${receiverUrl}.` })
      .waitFor();
    await page.getByRole('button', { name: `Deliveries of ${receiverUrl}` }).click();
    const ping = page.getByTestId('delivery-list').getByText('204', { exact: false });
    await eventually(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await ping.first().waitFor({ timeout: 1000 });
    }, 30_000);
    // Every kind: the ping, and the endpoint's own `webhook created`.
    const pinged = received.find((r) => (JSON.parse(r.body) as { kind: string }).kind === 'ping')!;
    expect(() => new Webhook(secret).verify(pinged.body, pinged.headers)).not.toThrow();

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByTestId('notice').filter({ hasText: 'New secret' }).waitFor();
    const rotated = (await page.getByTestId('webhook-secret').locator('code').textContent())!;
    expect(rotated).not.toBe(secret);
    const listed = await call(stack, 'GET', '/webhooks', { key: stack.adminKey });
    expect(listed.body.items[0].previousSecretUntil).not.toBeNull();
  });

  it('shows no Webhooks entry to a key without `admin`', async () => {
    const key = await call(stack, 'POST', '/apikeys', { key: stack.adminKey, body: { name: 'viewer', scopes: ['view'] } });
    await signIn(key.body.key as string);
    await expect(page.getByRole('link', { name: 'Webhooks' }).count()).resolves.toBe(0);
  });
});
