/**
 * End-to-end: `GET /export` from org A, `POST /import?dryRun=true` and `POST /import` into org B
 * through gateway → NATS → registry, `groups` on records (item 3), and the
 * `rules pull` / `rules push` CLI against the same stack.
 */

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_MAX_BYTES } from '@arbiter/contracts';
import { call, startStack, type Stack } from './harness.js';

let stack: Stack;
const key = {} as Record<'adminA' | 'editorA' | 'adminB' | 'adminC', string>;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(root, 'libs/cli/dist/main.js');

const RULE = 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.';
const RULE_V2 = 'A **driver** gets a licence if the __age__ of the **driver** is at least 18.';
const ADULT = { name: 'adult', data: { driver: { age: 18 } }, expect: true };
const SCHEMA = { type: 'object', properties: { driver: { type: 'object', properties: { age: { type: 'number' } } } } };
const unique = (label: string) => `${label} ${randomBytes(4).toString('hex')}`;

async function ok(status: number, method: string, url: string, as: string, body?: unknown): Promise<any> {
  const res = await call(stack, method, url, { key: as, ...(body !== undefined ? { body } : {}) });
  expect(res.status, `${method} ${url}: ${JSON.stringify(res.body)}`).toBe(status);
  return res.body;
}

function createOrg(orgId: string, admin: string): string {
  const created = stack.admin(['create-org', orgId, '--admin', admin]);
  expect(created.status, created.stderr).toBe(0);
  return /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
}

/** Org A's content: a policy with versions 1 and 2 and a draft, a flow on it (published), a group of both. */
const a = {} as { policy: any; flow: any; groupId: string; policyName: string; flowName: string; groupName: string };

beforeAll(async () => {
  stack = await startStack({ services: ['execution', 'registry', 'gateway'] });
  key.adminA = stack.adminKey;
  key.adminB = createOrg('globex', 'boss');
  key.adminC = createOrg('initech', 'bill');

  a.policyName = unique('licence');
  const draft = await ok(201, 'POST', '/policy', key.adminA, { name: a.policyName, rule: RULE, schema: SCHEMA, tests: [ADULT] });
  const v1 = await ok(201, 'PUT', `/policy/${draft.policyId}`, key.adminA, { status: 'published' });
  const d2 = await ok(201, 'GET', `/policy/${v1.policyId}/draft`, key.adminA);
  await ok(201, 'PUT', `/policy/${d2.policyId}`, key.adminA, { rule: RULE_V2, status: 'published' });
  const d3 = await ok(201, 'GET', `/policy/${v1.policyId}/draft`, key.adminA);
  await ok(200, 'PUT', `/policy/${d3.policyId}`, key.adminA, { description: 'work in progress', status: 'draft' });
  a.policy = await ok(200, 'GET', `/policy/${draft.baseId}`, key.adminA);
  a.flowName = unique('route');
  const flowDraft = await ok(201, 'POST', '/flow', key.adminA, {
    name: a.flowName,
    definition: {
      start: 'check',
      nodes: {
        check: { type: 'policy', baseId: draft.baseId, onTrue: 'pinned', onFalse: 'review' },
        pinned: { type: 'policy', policyId: v1.policyId, onTrue: 'yes', onFalse: 'review' },
        yes: { type: 'return', value: true },
        review: { type: 'custom', outcome: 'manual review' },
      },
    },
    tests: [ADULT],
  });
  a.flow = await ok(201, 'PUT', `/flow/${flowDraft.flowId}`, key.adminA, { status: 'published' });
  a.groupName = unique('motor');
  a.groupId = (await ok(201, 'POST', '/group', key.adminA, { name: a.groupName })).groupId;
  await ok(201, 'POST', `/group/${a.groupId}/member`, key.adminA, { memberId: draft.baseId, memberType: 'policy' });
  await ok(201, 'POST', `/group/${a.groupId}/member`, key.adminA, { memberId: a.flow.baseId, memberType: 'flow' });
});

afterAll(async () => {
  await stack?.stop();
});

async function exportOf(as: string): Promise<any> {
  const res = await fetch(`${stack.baseUrl}/export`, { headers: { 'x-api-key': as } });
  expect(res.status).toBe(200);
  return JSON.parse(await res.text());
}

describe('GET /policy/{id} and /flow/{id}: groups', () => {
  it('carry the live groups containing the base, by record id and by base id', async () => {
    const byBase = await ok(200, 'GET', `/policy/${a.policy.baseId}`, key.adminA);
    expect(byBase.groups).toEqual([{ groupId: a.groupId, name: a.groupName }]);
    const byRecord = await ok(200, 'GET', `/flow/${a.flow.flowId}`, key.adminA);
    expect(byRecord.groups).toEqual([{ groupId: a.groupId, name: a.groupName }]);
    const lone = await ok(201, 'POST', '/policy', key.adminA, { name: unique('lone'), rule: RULE });
    expect((await ok(200, 'GET', `/policy/${lone.policyId}`, key.adminA)).groups).toEqual([]);
    await ok(204, 'DELETE', `/policy/${lone.policyId}`, key.adminA);
  });
});

describe('POST /import', () => {
  it('dry run into org B lists what would be created and changes nothing', async () => {
    const bundle = await exportOf(key.adminA);
    const plan = await ok(200, 'POST', '/import?dryRun=true', key.adminB, bundle);
    expect(plan).toMatchObject({ dryRun: true, created: 3, unchanged: 0, conflicts: 0 });
    expect(plan.items).toEqual(
      expect.arrayContaining([
        { type: 'policy', name: a.policyName, sourceId: a.policy.baseId, action: 'create', targetId: null },
        { type: 'flow', name: a.flowName, sourceId: a.flow.baseId, action: 'create', targetId: null },
        { type: 'group', name: a.groupName, sourceId: a.groupId, action: 'create', targetId: null },
      ]),
    );
    const after = await exportOf(key.adminB);
    expect([after.policies, after.flows, after.groups]).toEqual([[], [], []]);
  });

  it('imports into org B with new ids, versions, draft, tests, schema, remapped flow references and group members; runnable by new base ids', async () => {
    const bundle = await exportOf(key.adminA);
    const done = await ok(200, 'POST', '/import', key.adminB, bundle);
    expect(done).toMatchObject({ dryRun: false, created: 3, unchanged: 0, conflicts: 0 });
    const target = (type: string) => done.items.find((i: any) => i.type === type).targetId as string;
    const [policyBase, flowBase, groupId] = [target('policy'), target('flow'), target('group')];
    expect([policyBase, flowBase, groupId]).not.toContain(a.policy.baseId);

    const copy = await exportOf(key.adminB);
    expect(copy.policies).toHaveLength(1);
    const [p] = copy.policies;
    expect(p.baseId).toBe(policyBase);
    expect(p.latestVersion).toBe(2);
    expect(p.records.map((r: any) => [r.status, r.version, r.rule, r.description])).toEqual([
      ['published', 1, RULE, ''],
      ['published', 2, RULE_V2, ''],
      ['draft', null, RULE, 'work in progress'], // drafted from version 1
    ]);
    const source = bundle.policies[0];
    expect(p.records.map((r: any) => r.recordId)).not.toContain(source.records[0].recordId);
    expect(p.records[0]).toMatchObject({
      schema: SCHEMA,
      tests: [ADULT],
      createdBy: source.records[0].createdBy,
      publishedBy: source.records[0].publishedBy,
      publishedAt: source.records[0].publishedAt,
    });
    expect(p.createdBy).toBe('boss');

    const [f] = copy.flows;
    expect(f.baseId).toBe(flowBase);
    expect(f.records[0].definition.nodes.check.baseId).toBe(policyBase);
    expect(f.records[0].definition.nodes.pinned.policyId).toBe(p.records[0].recordId);
    expect(copy.groups).toEqual([expect.objectContaining({ groupId, name: a.groupName })]);
    expect(copy.groups[0].members).toHaveLength(2);
    expect(copy.groups[0].members).toEqual(
      expect.arrayContaining([
        { memberId: policyBase, memberType: 'policy' },
        { memberId: flowBase, memberType: 'flow' },
      ]),
    );

    const run = await ok(200, 'POST', `/run/policy/${policyBase}`, key.adminB, { driver: { age: 17 } });
    expect(run).toMatchObject({ result: false, version: 2, baseId: policyBase });
    const flowRun = await ok(200, 'POST', `/run/flow/${flowBase}`, key.adminB, { driver: { age: 18 } });
    expect(flowRun.result).toBe(true);
    expect((await ok(200, 'GET', `/policy/${policyBase}`, key.adminB)).groups).toEqual([{ groupId, name: a.groupName }]);
  });

  it('importing the same bundle again duplicates nothing: every item is unchanged', async () => {
    const bundle = await exportOf(key.adminA);
    const again = await ok(200, 'POST', '/import', key.adminB, bundle);
    expect(again).toMatchObject({ created: 0, unchanged: 3, conflicts: 0 });
    const copy = await exportOf(key.adminB);
    expect([copy.policies.length, copy.flows.length, copy.groups.length]).toEqual([1, 1, 1]);
  });

  it('a live base of the same name is no conflict (names are labels, as at create); a real import with a conflict answers 409 listing them and changes nothing', async () => {
    const bundle = await exportOf(key.adminA);
    await ok(201, 'POST', '/policy', key.adminC, { name: a.policyName, rule: RULE });
    const plan = await ok(200, 'POST', '/import?dryRun=true', key.adminC, bundle);
    expect(plan).toMatchObject({ created: 3, unchanged: 0, conflicts: 0 });
    expect(plan.items.find((i: any) => i.type === 'policy')).toMatchObject({ name: a.policyName, action: 'create' });

    // Without its policy, the flow names a base the org lacks: a conflict naming it.
    const flowsOnly = { ...bundle, policies: [], groups: [] };
    const refused = await call(stack, 'POST', '/import', { key: key.adminC, body: flowsOnly });
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body.detail).toContain(a.flowName);
    expect(refused.body.detail).toContain(a.policy.baseId);
    expect(refused.body.errors).toHaveLength(1);
    const after = await exportOf(key.adminC);
    expect([after.policies.length, after.flows.length, after.groups.length]).toEqual([1, 0, 0]);
  });

  it('a flow naming a policy that is neither in the bundle nor in the org is a conflict naming it', async () => {
    const bundle = await exportOf(key.adminA);
    const flowsOnly = { ...bundle, policies: [], groups: [] };
    const plan = await ok(200, 'POST', '/import?dryRun=true', key.adminC, flowsOnly);
    expect(plan.items).toEqual([
      expect.objectContaining({ type: 'flow', action: 'conflict', reason: expect.stringContaining(a.policy.baseId) }),
    ]);
  });

  it('unhappy paths: no key 401, non-admin 403, malformed 400, wrong formatVersion 400, unknown key 400, too large 413; nothing changes', async () => {
    const bundle = await exportOf(key.adminA);
    expect((await call(stack, 'POST', '/import', { body: bundle })).status).toBe(401);
    // An admin's key without the `admin` scope.
    const edKey = await ok(201, 'POST', '/apikeys', key.adminA, { name: 'no-admin-scope', scopes: ['view', 'edit'] });
    const forbidden = await call(stack, 'POST', '/import', { key: edKey.key, body: bundle });
    expect(forbidden.status).toBe(403);

    const malformed = await call(stack, 'POST', '/import', { key: key.adminC, rawBody: '{"format": "arbiter-bundle",' });
    expect(malformed.status).toBe(400);
    const wrongVersion = await call(stack, 'POST', '/import', { key: key.adminC, body: { ...bundle, formatVersion: 2 } });
    expect(wrongVersion.status).toBe(400);
    expect(JSON.stringify(wrongVersion.body.errors)).toContain('formatVersion');
    const extra = await call(stack, 'POST', '/import', { key: key.adminC, body: { ...bundle, extra: true } });
    expect(extra.status).toBe(400);
    const badRecord = structuredClone(bundle);
    badRecord.policies[0].records[0].version = null;
    const inconsistent = await call(stack, 'POST', '/import', { key: key.adminC, body: badRecord });
    expect(inconsistent.status).toBe(400);

    const big = { ...bundle, exportedAt: bundle.exportedAt, policies: [], flows: [], groups: [], orgId: 'x'.repeat(IMPORT_MAX_BYTES) };
    const tooLarge = await call(stack, 'POST', '/import', { key: key.adminC, body: big });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.detail).toContain('in parts');
    const after = await exportOf(key.adminC);
    expect([after.policies.length, after.flows.length, after.groups.length]).toEqual([1, 0, 0]);
  });
});

describe('the timeline in export and import', () => {
  it('a version scheduled in the source org stays scheduled in the importing org: a run by base id before its instant gets the version before', async () => {
    const source = createOrg(`sched-${randomBytes(3).toString('hex')}`, 'sam');
    const into = createOrg(`sched-${randomBytes(3).toString('hex')}`, 'ida');
    // data without the driver's age breaks the schema: schema_mismatch, in the service and pulled alike
    const schema = {
      type: 'object',
      required: ['driver'],
      properties: { driver: { type: 'object', required: ['age'], properties: { age: { type: 'integer' } } } },
    };
    const draft = await ok(201, 'POST', '/policy', source, { name: unique('scheduled licence'), rule: RULE, schema });
    await ok(201, 'PUT', `/policy/${draft.policyId}`, source, { status: 'published' });
    const d2 = await ok(201, 'GET', `/policy/${draft.baseId}/draft`, source);
    const at = new Date(Date.now() + 24 * 3600_000);
    await ok(201, 'PUT', `/policy/${d2.policyId}`, source, { rule: RULE_V2, status: 'published', effectiveFrom: at.toISOString() });

    // a flow following the base picks its version at the same instant
    const flow = await ok(201, 'POST', '/flow', source, {
      name: unique('licence flow'),
      definition: {
        start: 'check',
        nodes: {
          check: { type: 'policy', baseId: draft.baseId, onTrue: 'yes', onFalse: 'no' },
          yes: { type: 'return', value: true },
          no: { type: 'return', value: false },
        },
      },
    });
    await ok(201, 'PUT', `/flow/${flow.flowId}`, source, { status: 'published' });

    const bundle = await exportOf(source);
    expect(bundle.policies[0].records[1]).toMatchObject({ version: 2, effectiveFrom: at.toISOString() });
    const done = await ok(200, 'POST', '/import', into, bundle);
    const baseId = done.items.find((i: { type: string }) => i.type === 'policy').targetId;
    const flowBaseId = done.items.find((i: { type: string }) => i.type === 'flow').targetId;

    const data = { driver: { age: 17 } };
    const runNow = await ok(200, 'POST', `/run/policy/${baseId}`, into, data);
    expect(runNow).toMatchObject({ version: 1, result: true });
    const before = new Date(at.getTime() - 1).toISOString();
    expect(await ok(200, 'POST', `/run/policy/${baseId}?asOf=${before}`, into, data)).toMatchObject({ version: 1, result: true });
    const after = new Date(at.getTime() + 1).toISOString();
    expect(await ok(200, 'POST', `/run/policy/${baseId}?now=${after}`, into, data)).toMatchObject({ version: 2, result: false });
    expect((await ok(200, 'GET', `/policy/${baseId}/versions`, into)).items[0]).toMatchObject({
      version: 2,
      effectiveFrom: at.toISOString(),
    });

    // a pulled directory answers the same, offline
    const dir = mkdtempSync(path.join(tmpdir(), 'rules-pull-'));
    try {
      const pulled = spawnSync(process.execPath, [CLI, 'pull', '--url', stack.baseUrl, '--dir', dir], {
        encoding: 'utf8',
        env: { ...process.env, ARBITER_API_KEY: into },
        timeout: 60_000,
      });
      expect(pulled.status, pulled.stderr).toBe(0);
      const dataFile = path.join(dir, 'data.json');
      writeFileSync(dataFile, JSON.stringify(data));
      const evalOf = (base: string, ...extra: string[]) => {
        const r = spawnSync(process.execPath, [CLI, 'eval', '--bundle', dir, '--base', base, '--data', dataFile, '--no-trace', ...extra], {
          encoding: 'utf8',
          timeout: 60_000,
        });
        expect(r.status, r.stderr).toBe(0);
        return JSON.parse(r.stdout);
      };
      const evalAt = (...extra: string[]) => evalOf(baseId, ...extra);
      expect(evalAt()).toMatchObject({ version: 1, result: true });
      expect(evalAt('--as-of', before)).toMatchObject({ version: 1, result: true });
      expect(evalAt('--now', after)).toMatchObject({ version: 2, result: false });

      // the flow, pulled and offline, answers exactly as the service does at each instant
      for (const [query, extra] of [
        ['', []],
        [`&asOf=${before}`, ['--as-of', before]],
        [`&now=${after}`, ['--now', after]],
      ] as const) {
        const served = await ok(200, 'POST', `/run/flow/${flowBaseId}?trace=false${query}`, into, data);
        expect(evalOf(flowBaseId, ...extra), query).toEqual(served);
      }
      const later = evalOf(flowBaseId, '--now', after);
      expect([later.result, later.path[0].version]).toEqual([false, 2]);
      const noAge = { driver: {} };
      writeFileSync(dataFile, JSON.stringify(noAge));
      const policyServed = await ok(200, 'POST', `/run/policy/${baseId}?trace=false`, into, noAge);
      expect(policyServed).toMatchObject({ result: false, errorCode: 'schema_mismatch' });
      expect(evalAt()).toEqual(policyServed);
      const flowServed = await call(stack, 'POST', `/run/flow/${flowBaseId}?trace=false`, { key: into, body: noAge });
      expect(flowServed.body).toMatchObject({ result: false, errorCode: 'schema_mismatch' });
      const pulledFlow = spawnSync(
        process.execPath,
        [CLI, 'eval', '--bundle', dir, '--base', flowBaseId, '--data', dataFile, '--no-trace'],
        {
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(pulledFlow.status).toBe(1);
      expect(JSON.parse(pulledFlow.stdout)).toEqual(flowServed.body);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('rules pull / rules push', () => {
  const cli = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });

  it('pull writes one directory per policy and flow, push --dry-run prints the plan, push imports into another org', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rules-pull-'));
    try {
      const pulled = cli(['pull', '--url', stack.baseUrl, '--dir', dir], { ARBITER_API_KEY: key.adminA });
      expect(pulled.status, pulled.stderr).toBe(0);
      expect(pulled.stdout + pulled.stderr).not.toContain(key.adminA);
      const policyDirs = readdirSync(path.join(dir, 'policies'));
      expect(policyDirs).toHaveLength(1);
      const files = readdirSync(path.join(dir, 'policies', policyDirs[0]!)).sort();
      expect(files).toEqual(['draft.rule', 'policy.json', 'v1.rule', 'v2.rule']);
      expect(readFileSync(path.join(dir, 'policies', policyDirs[0]!, 'v1.rule'), 'utf8')).toBe(`${RULE}\n`);

      const newOrgKey = createOrg(`org-${randomBytes(3).toString('hex')}`, 'dora');
      const dry = cli(['push', '--url', stack.baseUrl, '--key', newOrgKey, '--dir', dir, '--dry-run']);
      expect(dry.status, dry.stderr).toBe(0);
      expect(dry.stdout).toContain(`create     policy  ${a.policyName}`);
      expect(dry.stdout).toContain('dry run: 3 to create, 0 unchanged, 0 conflicts');
      const pushed = cli(['push', '--url', stack.baseUrl, '--key', newOrgKey, '--dir', dir]);
      expect(pushed.status, pushed.stderr).toBe(0);
      expect(pushed.stdout).toContain('imported: 3 created, 0 unchanged');
      const again = cli(['push', '--url', stack.baseUrl, '--key', newOrgKey, '--dir', dir]);
      expect(again.stdout).toContain('imported: 0 created, 3 unchanged');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints the problem detail of an HTTP error, a missing key is a usage error, an empty directory imports nothing', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rules-pull-'));
    try {
      const denied = cli(['pull', '--url', stack.baseUrl, '--key', 'arb_wrong', '--dir', dir]);
      expect(denied.status).toBe(1);
      expect(denied.stderr).toMatch(/\(HTTP 401 unauthenticated\)/);
      const noKey = cli(['pull', '--url', stack.baseUrl, '--dir', dir], { ARBITER_API_KEY: '' });
      expect(noKey.status).toBe(2);
      expect(noKey.stderr).toContain('ARBITER_API_KEY');
      writeFileSync(path.join(dir, 'arbiter-bundle.json'), '{"format": "arbiter-bundle", "formatVersion": 1, "orgId": "x"}\n');
      // A directory with only the header pushes an empty bundle: nothing to do.
      const empty = cli(['push', '--url', stack.baseUrl, '--key', key.adminC, '--dir', dir]);
      expect(empty.status, empty.stderr).toBe(0);
      expect(empty.stdout).toBe('imported: 0 created, 0 unchanged\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
