/**
 * End-to-end: `GET /export` of an org whose bases are big (64 KB rules), through gateway → NATS →
 * registry. Pages cross the bus in one reply each: they are bounded by bytes as well as by count
 * (a page of 20 such bases is over NATS's 1 MiB), and a base bigger than a page (many versions)
 * comes in parts the gateway joins. The whole bundle is valid JSON and imports into another org.
 */

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_MAX_BYTES } from '@arbiter/contracts';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;
let importer: string;

/** A rule of about 64 KB (the largest a rule may be is 65,536 bytes) that compiles, distinct by `tag`. */
const bigRule = (tag: string) => `A **x** is ok if the __v__ of the **x** is equal to "${tag}${'a'.repeat(64_000 - tag.length)}".`;

async function ok(status: number, method: string, url: string, as: string, body?: unknown): Promise<any> {
  const res = await call(stack, method, url, { key: as, ...(body !== undefined ? { body } : {}) });
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body).slice(0, 500)}`).toBe(status);
  return res.body;
}

async function exportOf(as: string): Promise<{ text: string; bundle: any }> {
  const res = await fetch(`${stack.baseUrl}/export`, { headers: { 'x-api-key': as } });
  expect(res.status).toBe(200);
  const text = await res.text();
  let bundle: unknown;
  expect(() => (bundle = JSON.parse(text)), `the export is ${text.length} bytes of invalid JSON`).not.toThrow();
  return { text, bundle };
}

/** Each base as `[name, [status, version, rule]…]`, sorted by name: what an import must keep. */
const contentOf = (bases: any[]) =>
  bases
    .map((b) => [b.records.at(-1).name, b.records.map((r: any) => [r.status, r.version, r.rule])] as const)
    .sort((x, y) => x[0].localeCompare(y[0]));

const unique = (label: string) => `${label} ${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'gateway'] });
  const created = stack.admin(['create-org', 'export-large-target', '--admin', 'boss']);
  expect(created.status, created.stderr).toBe(0);
  importer = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
});

afterAll(async () => {
  await stack?.stop();
});

describe('GET /export of an org with large rules', () => {
  it('completes with every base (pages bounded by bytes, a base bigger than a page split and joined) and imports into another org', async () => {
    const admin = stack.adminKey;
    // 24 drafts of 64 KB: 1.5 MB of policies, more than one bus message holds.
    for (let i = 0; i < 24; i++) await ok(201, 'POST', '/policy', admin, { name: unique(`big ${i}`), rule: bigRule(`b${i}`) });
    // One base of 9 versions and a draft of 64 KB each: 640 KB, more than one page.
    const first = await ok(201, 'POST', '/policy', admin, { name: unique('versions'), rule: bigRule('v1') });
    let record = await ok(201, 'PUT', `/policy/${first.policyId}`, admin, { status: 'published' });
    for (let v = 2; v <= 9; v++) {
      const draft = await ok(201, 'GET', `/policy/${record.policyId}/draft`, admin);
      record = await ok(201, 'PUT', `/policy/${draft.policyId}`, admin, { rule: bigRule(`v${v}`), status: 'published' });
    }
    const last = await ok(201, 'GET', `/policy/${record.policyId}/draft`, admin);
    await ok(200, 'PUT', `/policy/${last.policyId}`, admin, { rule: bigRule('draft'), status: 'draft' });

    const { text, bundle } = await exportOf(admin);
    expect(text.length).toBeGreaterThan(24 * 64_000 + 10 * 64_000);
    expect(bundle.policies).toHaveLength(25);
    const versions = bundle.policies.find((b: any) => b.baseId === first.baseId);
    expect(versions.records.map((r: any) => [r.status, r.version])).toEqual([
      ...Array.from({ length: 9 }, (_, i) => ['published', i + 1]),
      ['draft', null],
    ]);
    expect(versions.records.map((r: any) => r.rule)).toEqual([
      ...Array.from({ length: 9 }, (_, i) => bigRule(`v${i + 1}`)),
      bigRule('draft'),
    ]);

    // Round trip: an import body is at most IMPORT_MAX_BYTES, so the bundle goes in parts of whole bases.
    const parts: any[][] = [[]];
    for (const base of bundle.policies) {
      const part = parts.at(-1)!;
      if (part.length > 0 && JSON.stringify({ ...bundle, policies: [...part, base] }).length > IMPORT_MAX_BYTES) parts.push([base]);
      else part.push(base);
    }
    expect(parts.length).toBeGreaterThan(1);
    for (const [i, policies] of parts.entries()) {
      await ok(200, 'POST', '/import', importer, { ...bundle, policies, ...(i > 0 ? { flows: [], groups: [] } : {}) });
    }
    const copied = (await exportOf(importer)).bundle;
    expect(contentOf(copied.policies)).toEqual(contentOf(bundle.policies));
  });
});
