/** `registry.import` over the bus with PostgreSQL, Redis and NATS (issue 15 item 6): admin only, one transaction, `imported` events, origin kept. */

import {
  ExportPage,
  ExportSubject,
  FlowRecord,
  ImportReply,
  ImportSubject,
  PolicyRecord,
  PolicyUpdateReply,
  RegistrySubject as S,
  type BundleBase,
} from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADULT_RULE, as, eventually, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const source = as('admin', { orgId: 'import-source' });
const target = as('admin', { orgId: 'import-target' });

async function bundleOf(principal = source) {
  const policies = await env.call(ExportSubject, { principal, section: 'policies' }, ExportPage);
  return {
    format: 'arbiter-bundle',
    formatVersion: 1,
    orgId: principal.orgId,
    exportedAt: new Date().toISOString(),
    policies: policies.items as BundleBase[],
    flows: [],
    groups: [],
  };
}

describe('registry.import', () => {
  it('loads into the target org in one transaction, queues one `imported` event per base, remembers the origin', async () => {
    const p = await env.call(S.policyCreate, { principal: source, name: 'Imported via bus', rule: ADULT_RULE }, PolicyRecord);
    await env.call(S.policyUpdate, { principal: source, policyId: p.policyId, status: 'published' }, PolicyUpdateReply);
    const bundle = await bundleOf();

    const refused = await env.fail(ImportSubject, { principal: as('publisher', { orgId: 'import-target' }), bundle, dryRun: true });
    expect(refused.code).toBe('forbidden');

    const done = await env.call(ImportSubject, { principal: target, bundle, dryRun: false }, ImportReply);
    expect(done).toMatchObject({ created: 1, conflicts: 0 });
    const newBase = done.items[0]!.targetId!;
    const row = await env.sql('registry_bases').where({ id: newBase }).first();
    expect(row).toMatchObject({ org_id: 'import-target', origin_org_id: 'import-source', origin_base_id: p.baseId, latest_version: 1 });

    const events = await eventually(async () => {
      const all = (await env.events()).filter((e) => e.resource.baseId === newBase);
      expect(all.length).toBeGreaterThanOrEqual(1);
      return all;
    });
    expect(events.map((e) => [e.kind, e.orgId, e.details.sourceOrgId, e.details.sourceBaseId])).toEqual([
      ['imported', 'import-target', 'import-source', p.baseId],
    ]);

    // A second import is unchanged and adds no row.
    const again = await env.call(ImportSubject, { principal: target, bundle, dryRun: false }, ImportReply);
    expect(again).toMatchObject({ created: 0, unchanged: 1 });
    expect(await env.sql('registry_bases').where({ org_id: 'import-target' }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });

  it('imports in parts: a later part’s flow naming a policy of an earlier part resolves to the imported copy', async () => {
    const from = as('admin', { orgId: 'parts-source' });
    const into = as('admin', { orgId: 'parts-target' });
    const p = await env.call(S.policyCreate, { principal: from, name: 'Part one', rule: ADULT_RULE }, PolicyRecord);
    const definition = {
      start: 'a',
      nodes: { a: { type: 'policy', baseId: p.baseId, onTrue: 'y', onFalse: 'y' }, y: { type: 'return', value: true } },
    };
    await env.call(S.flowCreate, { principal: from, name: 'Part two', definition }, FlowRecord);
    const whole = await bundleOf(from);
    const flows = await env.call(ExportSubject, { principal: from, section: 'flows' }, ExportPage);
    const first = await env.call(ImportSubject, { principal: into, bundle: whole, dryRun: false }, ImportReply);
    const copy = first.items[0]!.targetId!;
    const second = await env.call(
      ImportSubject,
      { principal: into, bundle: { ...whole, policies: [], flows: flows.items }, dryRun: false },
      ImportReply,
    );
    expect(second.items).toEqual([expect.objectContaining({ type: 'flow', action: 'create' })]);
    const flow = await env.call(S.flowGet, { principal: into, flowId: second.items[0]!.targetId! }, FlowRecord);
    expect(flow.definition.nodes.a).toMatchObject({ baseId: copy });
  });

  it('a conflicting import writes nothing (no base, no record, no outbox row)', async () => {
    const bundle = await bundleOf();
    const before = await env.sql('registry_outbox').count({ n: '*' });
    const clash = as('admin', { orgId: 'import-clash' });
    await env.call(S.policyCreate, { principal: clash, name: 'Imported via bus', rule: ADULT_RULE }, PolicyRecord);
    const outboxAfterCreate = await env.sql('registry_outbox').count({ n: '*' });
    expect(Number(outboxAfterCreate[0]!.n)).toBe(Number(before[0]!.n) + 1);
    const err = await env.fail(ImportSubject, { principal: clash, bundle, dryRun: false });
    expect(err.code).toBe('conflict');
    expect(err.errors?.[0]).toMatchObject({ code: 'import_conflict', path: bundle.policies[0]!.baseId });
    expect(await env.sql('registry_bases').where({ org_id: 'import-clash' }).count({ n: '*' })).toEqual([{ n: '1' }]);
    expect(await env.sql('registry_outbox').count({ n: '*' })).toEqual(outboxAfterCreate);
  });
});
