/** The import planner without a database: what is created, unchanged or a conflict, and how ids are remapped. */

import { describe, expect, it } from 'vitest';
import { ImportBundle } from '@arbiter/contracts';
import { planImport, timelineProblems, type ImportLookups } from '../src/domain/import-plan.js';

const P = '00000000-0000-7000-8000-00000000000a';
const F = '00000000-0000-7000-8000-00000000000b';
const G = '00000000-0000-7000-8000-00000000000c';
const R1 = '00000000-0000-7000-8000-000000000001';
const R2 = '00000000-0000-7000-8000-000000000002';
const RF = '00000000-0000-7000-8000-000000000003';
const AT = '2026-11-23T10:00:00.000Z';

const meta = { description: '', schema: null, createdAt: AT, createdBy: 'ann', updatedAt: AT, updatedBy: 'ann' };
const bundle = (): ImportBundle =>
  ImportBundle.parse({
    format: 'arbiter-bundle',
    formatVersion: 1,
    orgId: 'acme',
    exportedAt: AT,
    policies: [
      {
        baseId: P,
        createdBy: 'ann',
        createdAt: AT,
        latestVersion: 1,
        records: [
          {
            ...meta,
            recordId: R1,
            status: 'published',
            version: 1,
            basedOnVersion: null,
            name: 'licence',
            rule: 'r1',
            definition: null,
            tests: [],
            publishedAt: AT,
            publishedBy: 'ann',
          },
          {
            ...meta,
            recordId: R2,
            status: 'draft',
            version: null,
            basedOnVersion: 1,
            name: 'licence v2',
            rule: 'r2',
            definition: null,
            tests: [],
            publishedAt: null,
            publishedBy: null,
          },
        ],
      },
    ],
    flows: [
      {
        baseId: F,
        createdBy: 'ann',
        createdAt: AT,
        latestVersion: null,
        records: [
          {
            ...meta,
            recordId: RF,
            status: 'draft',
            version: null,
            basedOnVersion: null,
            name: 'route',
            rule: null,
            definition: {
              start: 'a',
              nodes: {
                a: { type: 'policy', baseId: P, onTrue: 'b', onFalse: 'n' },
                b: { type: 'policy', policyId: R1, onTrue: 'y', onFalse: 'n' },
                y: { type: 'return', value: true },
                n: { type: 'return', value: false },
              },
            },
            tests: [],
            publishedAt: null,
            publishedBy: null,
          },
        ],
      },
    ],
    groups: [
      {
        groupId: G,
        name: 'motor',
        description: '',
        createdBy: 'ann',
        createdAt: AT,
        members: [
          { memberId: P, memberType: 'policy' },
          { memberId: F, memberType: 'flow' },
        ],
      },
    ],
  });

const empty = (): ImportLookups => ({
  knownBases: new Map(),
  orgPolicies: { bases: new Set(), records: new Set() },
  knownGroups: new Map(),
});

const ids = () => {
  let n = 0;
  return () => `10000000-0000-7000-8000-${String(++n).padStart(12, '0')}`;
};
const target = { orgId: 'globex', importer: 'boss' };

describe('planImport', () => {
  it('creates every base and group with new ids, keeps versions and authors, remaps flow references and members', () => {
    const plan = planImport(bundle(), empty(), target, ids());
    expect(plan.items.map((i) => [i.type, i.action])).toEqual([
      ['policy', 'create'],
      ['flow', 'create'],
      ['group', 'create'],
    ]);
    const [policy, flow] = plan.bases;
    expect(policy).toMatchObject({ orgId: 'globex', createdBy: 'boss', latestVersion: 1, originOrgId: 'acme', originBaseId: P });
    expect(policy!.records.map((r) => [r.status, r.version, r.createdBy, r.publishedBy])).toEqual([
      ['published', 1, 'ann', 'ann'],
      ['draft', null, 'ann', null],
    ]);
    expect(policy!.currentRecordId).toBe(policy!.records[0]!.id);
    expect(plan.items[0]!.name).toBe('licence');
    const nodes = flow!.records[0]!.definition!.nodes;
    expect(nodes.a).toMatchObject({ baseId: policy!.id });
    expect(nodes.b).toMatchObject({ policyId: policy!.records[0]!.id });
    expect(plan.groups[0]!.members).toEqual([
      { baseId: policy!.id, memberType: 'policy' },
      { baseId: flow!.id, memberType: 'flow' },
    ]);
    expect(new Set([P, F, G, R1, R2, RF]).has(policy!.id)).toBe(false);
  });

  it('keeps flow nodes named like prototype members (__proto__, constructor) as nodes', () => {
    const b = bundle();
    const def = b.flows[0]!.records[0]!.definition!;
    // JSON.parse makes "__proto__" an own key, as a bundle read from a request body has it
    def.nodes = JSON.parse(
      `{"__proto__":{"type":"policy","baseId":"${P}","onTrue":"constructor","onFalse":"constructor"},"constructor":{"type":"return","value":true}}`,
    ) as typeof def.nodes;
    def.start = '__proto__';
    const nodes = planImport(b, empty(), target, ids()).bases[1]!.records[0]!.definition!.nodes;
    expect(Object.keys(nodes)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(nodes)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(nodes, '__proto__')?.value).toMatchObject({ type: 'policy' });
  });

  it('a base imported before at the same version is unchanged and flows resolve to it; another version is a conflict', () => {
    const lookups = empty();
    const known = {
      id: 'existing-p',
      kind: 'policy' as const,
      latestVersion: 1,
      records: new Map<number | 'draft', string>([[1, 'existing-r1']]),
    };
    lookups.knownBases.set(P, known);
    const plan = planImport(bundle(), lookups, target, ids());
    expect(plan.items[0]).toMatchObject({ action: 'unchanged', targetId: 'existing-p' });
    expect(plan.bases).toHaveLength(1);
    expect(plan.bases[0]!.records[0]!.definition!.nodes.a).toMatchObject({ baseId: 'existing-p' });
    expect(plan.bases[0]!.records[0]!.definition!.nodes.b).toMatchObject({ policyId: 'existing-r1' });

    lookups.knownBases.set(P, { ...known, latestVersion: 3 });
    const other = planImport(bundle(), lookups, target, ids());
    expect(other.items[0]).toMatchObject({ action: 'conflict', reason: expect.stringContaining('does not merge versions') });
  });

  it('conflicts: a flow naming a policy that is not imported, and a group member that is not', () => {
    const noPolicy = bundle();
    noPolicy.policies = [];
    const plan = planImport(noPolicy, empty(), target, ids());
    expect(plan.items.map((i) => [i.type, i.action])).toEqual([
      ['flow', 'conflict'],
      ['group', 'conflict'],
    ]);
    expect(plan.items[0]!.reason).toContain(`policy base \`${P}\``);
    expect(plan.items[1]!.reason).toContain(P);
    expect(plan.bases).toEqual([]);
    expect(plan.groups).toEqual([]);
  });

  it('names are labels, as at create: two bases or groups of one name in the bundle, or one in the org, are created', () => {
    const twins = bundle();
    twins.policies.push({
      ...twins.policies[0]!,
      baseId: '00000000-0000-7000-8000-0000000000ee',
      records: twins.policies[0]!.records.map((r, i) => ({ ...r, recordId: `00000000-0000-7000-8000-0000000000e${i}` })),
    });
    twins.groups.push({ ...twins.groups[0]!, groupId: '00000000-0000-7000-8000-0000000000ef' });
    // The org's own bases and groups are not looked up by name at all: only ids and origins match.
    const plan = planImport(twins, empty(), target, ids());
    expect(plan.items.map((i) => [i.type, i.name, i.action])).toEqual([
      ['policy', 'licence', 'create'],
      ['policy', 'licence', 'create'],
      ['flow', 'route', 'create'],
      ['group', 'motor', 'create'],
      ['group', 'motor', 'create'],
    ]);
    expect(new Set(plan.bases.map((b) => b.id)).size).toBe(3);
    expect(plan.groups.map((g) => g.name)).toEqual(['motor', 'motor']);
  });

  it('a flow or group may name a base imported by an earlier part, which resolves to its new id', () => {
    const b = bundle();
    b.policies = [];
    b.flows[0]!.records[0]!.definition!.nodes.b = { type: 'return', value: true };
    const lookups = empty();
    lookups.knownBases.set(P, { id: 'earlier-p', kind: 'policy', latestVersion: 1, records: new Map() });
    const plan = planImport(b, lookups, target, ids());
    expect(plan.items.map((i) => [i.type, i.action])).toEqual([
      ['flow', 'create'],
      ['group', 'create'],
    ]);
    expect(plan.bases[0]!.records[0]!.definition!.nodes.a).toMatchObject({ baseId: 'earlier-p' });
    expect(plan.groups[0]!.members[0]).toEqual({ baseId: 'earlier-p', memberType: 'policy' });
  });

  it('a flow may name a policy base that lives in the org itself', () => {
    const b = bundle();
    b.policies = [];
    const lookups = empty();
    lookups.orgPolicies.bases.add(P);
    lookups.orgPolicies.records.add(R1);
    const plan = planImport({ ...b, groups: [] }, lookups, target, ids());
    expect(plan.items).toEqual([expect.objectContaining({ type: 'flow', action: 'create' })]);
    expect(plan.bases[0]!.records[0]!.definition!.nodes.a).toMatchObject({ baseId: P });
  });

  it('an inconsistent base (wrong latestVersion, two drafts) and a base id twice are conflicts', () => {
    const wrongLatest = bundle();
    wrongLatest.policies[0]!.latestVersion = 2;
    expect(planImport(wrongLatest, empty(), target, ids()).items[0]).toMatchObject({
      action: 'conflict',
      reason: expect.stringContaining('latestVersion'),
    });
    const twoDrafts = bundle();
    twoDrafts.policies[0]!.records.push({ ...twoDrafts.policies[0]!.records[1]!, recordId: '00000000-0000-7000-8000-0000000000ff' });
    expect(planImport(twoDrafts, empty(), target, ids()).items[0]!.reason).toContain('two drafts');
    const twice = bundle();
    twice.policies.push(twice.policies[0]!);
    expect(planImport(twice, empty(), target, ids()).items[1]).toMatchObject({
      action: 'conflict',
      reason: expect.stringContaining('is twice in the bundle'),
    });
  });
});

describe('the timeline of imported versions', () => {
  const R3 = '00000000-0000-7000-8000-000000000004';
  const R4 = '00000000-0000-7000-8000-000000000005';
  const LATER = '2027-01-01T00:00:00.000Z';
  /** The policy base at v1, v2 scheduled and cancelled, v3 scheduled, v4 a rollback to `rollbackOf`. */
  const timed = (rollbackOf = 1): ImportBundle => {
    const b = bundle();
    const [v1, draft] = b.policies[0]!.records;
    const version = (recordId: string, n: number, extra: object) => ({ ...v1!, recordId, version: n, basedOnVersion: n - 1, ...extra });
    b.policies[0] = {
      ...b.policies[0]!,
      latestVersion: 4,
      records: [
        v1!,
        version(R3, 2, { effectiveFrom: LATER, cancelled: true, cancelledAt: AT, cancelledBy: 'cat' }),
        version(R4, 3, { effectiveFrom: LATER }),
        version('00000000-0000-7000-8000-000000000006', 4, { rollbackOf }),
        draft!,
      ],
    };
    return b;
  };

  it('plans one timeline row per version that has one, on the new record ids, instants and marks kept', () => {
    const plan = planImport(timed(), empty(), target, ids());
    const [policy] = plan.bases;
    const idOf = (v: number) => policy!.records.find((r) => r.version === v)!.id;
    expect(policy!.timeline).toEqual([
      {
        recordId: idOf(2),
        baseId: policy!.id,
        version: 2,
        effectiveFrom: new Date(LATER),
        rollbackOf: null,
        cancelledAt: new Date(AT),
        cancelledBy: 'cat',
      },
      {
        recordId: idOf(3),
        baseId: policy!.id,
        version: 3,
        effectiveFrom: new Date(LATER),
        rollbackOf: null,
        cancelledAt: null,
        cancelledBy: null,
      },
      { recordId: idOf(4), baseId: policy!.id, version: 4, effectiveFrom: null, rollbackOf: 1, cancelledAt: null, cancelledBy: null },
    ]);
    expect(plan.bases[1]!.timeline).toEqual([]);
    expect(timelineProblems(timed(), new Date(AT))).toEqual([]);
  });

  it('a rollbackOf naming no earlier version of its base in the bundle is a problem naming the record and its place', () => {
    for (const to of [4, 5, 9]) {
      expect(timelineProblems(timed(to), new Date(AT))).toEqual([
        {
          code: 'invalid_rollback',
          message: `record \`00000000-0000-7000-8000-000000000006\` (version 4 of base \`${P}\`) rolls back to version ${to}, which is not an earlier version of its base in the bundle`,
          path: 'policies.0.records.3.rollbackOf',
        },
      ]);
    }
  });

  it('a base with more than 20 versions waiting for their instant is a problem naming the base; cancelled and past ones do not count', () => {
    const scheduled = (waiting: number, extra: object[] = []): ImportBundle => {
      const b = bundle();
      const [v1] = b.policies[0]!.records;
      const later = Array.from({ length: waiting }, (_, k) => ({
        ...v1!,
        recordId: `00000000-0000-7000-8000-${String(100 + k).padStart(12, '0')}`,
        version: k + 2,
        basedOnVersion: k + 1,
        effectiveFrom: LATER,
      }));
      const records = [v1!, ...later, ...extra.map((e, k) => ({ ...v1!, ...e, version: waiting + 2 + k }))];
      b.policies[0] = { ...b.policies[0]!, latestVersion: records.length, records };
      return b;
    };
    const now = new Date(AT);
    expect(timelineProblems(scheduled(20), now)).toEqual([]);
    expect(timelineProblems(scheduled(21), now)).toEqual([
      {
        code: 'too_many_schedules',
        message: `base \`${P}\` has 21 versions waiting for their instant; a base may have at most 20`,
        path: 'policies.0.records',
      },
    ]);
    // a cancelled schedule and one whose instant has passed wait for nothing
    const done = [
      { recordId: '00000000-0000-7000-8000-000000000900', effectiveFrom: LATER, cancelled: true, cancelledAt: AT, cancelledBy: 'cat' },
      { recordId: '00000000-0000-7000-8000-000000000901', effectiveFrom: AT },
    ];
    expect(timelineProblems(scheduled(20, done), now)).toEqual([]);
    expect(timelineProblems(scheduled(21), new Date(LATER))).toEqual([]);
  });
});
