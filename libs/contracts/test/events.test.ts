import { describe, expect, it } from 'vitest';
import type { DecisionRecord } from '../src/decisions.js';
import { EVENT_KINDS } from '../src/event-kinds.js';
import { ArbiterEvent, EventDetails, TypedEvent, executedDetails, newEvent } from '../src/events.js';

const by = { orgId: 'acme', userId: 'alice', apiKeyId: 'key-1', role: 'admin' as const };
const record = { type: 'policy' as const, id: 'rec-1', baseId: 'base-1' };

const RECORD: DecisionRecord = {
  decisionId: '01936f0e-8b5c-7d3a-9f1e-2a4b6c8d0e1f',
  orgId: 'acme',
  at: '2026-11-26T10:11:12.345Z',
  now: '2026-11-26T10:11:12.345Z',
  kind: 'policy',
  baseId: 'base-1',
  policyId: 'rec-1',
  version: 3,
  caller: { userId: 'alice' },
  input: { score: 47 },
  masked: false,
  result: true,
  errorCode: null,
  durationUs: 42,
};

/** One event of every kind, with details as its producer makes them. */
const EXAMPLES: TypedEvent[] = [
  newEvent('created', by, record, { name: 'Licence' }),
  newEvent('created', by, record, { name: 'Licence', basedOnVersion: 2 }),
  newEvent('edited', by, record, { fields: ['name', 'rule'] }),
  newEvent('edited', by, { type: 'group', id: 'g-1' }, { removedMemberId: 'rec-1', memberType: 'policy' }),
  newEvent('approval requested', by, record, { requestId: 'req-1', contentHash: 'abc' }),
  newEvent('approved', by, record, { requestId: 'req-1' }),
  newEvent('rejected', by, record, { requestId: 'req-1', comment: 'no' }),
  newEvent('published', by, record, { version: 3, requestId: 'req-1' }),
  newEvent('assigned', by, { type: 'group', id: 'g-1' }, { memberId: 'rec-1', memberType: 'flow' }),
  newEvent('assigned', by, { type: 'user', id: 'bob' }, { role: 'editor', added: true }),
  newEvent(
    'executed',
    by,
    record,
    executedDetails({ count: 2, trueCount: 1, falseCount: 1, errorCount: 0, version: 3, via: ['base'], from: 0, to: 1000 }),
  ),
  newEvent('deleted', by, record, {}),
  newEvent('deleted', by, { type: 'group', id: 'g-1' }, { name: 'Team' }),
  newEvent(
    'key created',
    by,
    { type: 'apikey', id: 'key-2' },
    { name: 'ci', scopes: ['view'], owner: 'bob', expiresAt: null, createdWithKeyId: 'key-1', issuedBy: 'alice' },
  ),
  newEvent('key revoked', by, { type: 'apikey', id: 'key-2' }, { name: 'ci', owner: 'bob', memberRemoved: 'bob' }),
  newEvent('member removed', by, { type: 'user', id: 'bob' }, { role: 'editor', keysRevoked: 1 }),
  newEvent('settings changed', by, { type: 'org', id: 'acme' }, { governanceApproval: { from: false, to: true } }),
  newEvent('restored', by, record, { name: 'Licence', deletedAt: '2026-11-26T10:11:12.345Z' }),
  newEvent('imported', by, record, { name: 'Licence', sourceOrgId: 'other', sourceBaseId: 'b-0', records: 2 }),
  newEvent('imported', by, { type: 'group', id: 'g-1' }, { name: 'Team', sourceOrgId: 'other', sourceGroupId: 'g-0', members: 3 }),
  newEvent(
    'webhook created',
    by,
    { type: 'webhook', id: 'w-1' },
    { url: 'https://ci.example.com/h', events: ['published'], description: '' },
  ),
  newEvent('webhook changed', by, { type: 'webhook', id: 'w-1' }, { changes: { events: ['*'], enabled: false } }),
  newEvent('webhook changed', by, { type: 'webhook', id: 'w-1' }, { secretRotated: true }),
  newEvent('webhook deleted', by, { type: 'webhook', id: 'w-1' }, { url: 'https://ci.example.com/h' }),
  newEvent('shadow started', by, record, { recordId: 'r-2', sampleRate: 0.5, until: null, replaced: 'r-1' }),
  newEvent('shadow stopped', by, record, { recordId: 'r-2', sampled: 10, compared: 9, changed: 2 }),
  newEvent(
    'webhook disabled',
    { orgId: 'acme', userId: 'webhooks' },
    { type: 'webhook', id: 'w-1' },
    { reason: 'gone', url: 'https://ci.example.com/h' },
  ),
  newEvent('published', by, record, { version: 4, rollbackOf: 2, effectiveFrom: '2026-12-24T00:00:00.000Z' }),
  newEvent('schedule cancelled', by, record, { version: 4, effectiveFrom: '2026-12-24T00:00:00.000Z' }),
  newEvent(
    'rollout changed',
    { orgId: 'acme', userId: 'u-2' },
    { type: 'policy', id: 'p-2', baseId: 'b-1' },
    {
      action: 'rolled_back',
      version: 3,
      previousVersion: 2,
      percent: 0,
      fromPercent: 10,
      reason: 'guard',
      errorRates: { version: 0.5, previousVersion: 0, runs: 100 },
    },
  ),
  newEvent('decided', { orgId: RECORD.orgId, ...RECORD.caller }, record, RECORD, {
    eventId: RECORD.decisionId,
    at: RECORD.at,
  }),
];

describe('events', () => {
  it('have one details schema per kind, and an example of each kind here', () => {
    expect(Object.keys(EventDetails).sort()).toEqual([...EVENT_KINDS].sort());
    expect([...new Set(EXAMPLES.map((e) => e.kind))].sort()).toEqual([...EVENT_KINDS].sort());
  });

  it('are made by newEvent with their typed details, and pass the wire schema and the typed one unchanged', () => {
    for (const event of EXAMPLES) {
      expect(TypedEvent.parse(event)).toEqual(event);
      expect(ArbiterEvent.parse(event)).toEqual(event);
    }
    const [created] = EXAMPLES;
    expect(created).toEqual({
      eventId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7/),
      orgId: 'acme',
      kind: 'created',
      at: expect.any(String),
      actor: { userId: 'alice', apiKeyId: 'key-1' },
      resource: record,
      details: { name: 'Licence' },
    });
    // The actor of a caller without a key has no `apiKeyId` key at all.
    expect(newEvent('deleted', { orgId: 'acme', userId: 'bob' }, record, {}, { at: new Date(0) }).actor).toEqual({ userId: 'bob' });
    expect(Object.keys(newEvent('deleted', { orgId: 'acme', userId: 'bob', apiKeyId: undefined }, record, {}).actor)).toEqual(['userId']);
    expect(newEvent('deleted', by, record, {}, { at: new Date(0), eventId: RECORD.decisionId })).toMatchObject({
      at: '1970-01-01T00:00:00.000Z',
      eventId: RECORD.decisionId,
    });
  });

  it('of a kind with details of another kind fail the typed schema, not the wire one', () => {
    const wrong = { ...EXAMPLES[0]!, kind: 'published', details: { name: 'Licence' } };
    expect(TypedEvent.safeParse(wrong).success).toBe(false);
    expect(ArbiterEvent.safeParse(wrong).success).toBe(true);
    // Nor do they compile: newEvent takes the details of the kind it is given.
    // @ts-expect-error: a `published` event's details hold its version
    expect(() => newEvent('published', by, record, { name: 'Licence' })).not.toThrow();
  });
});

describe('executedDetails', () => {
  const counts = { count: 3, trueCount: 1, falseCount: 1, errorCount: 0, version: null };

  it('writes times as ISO 8601, keeps given texts, sorts and dedupes `via`, leaves out empty custom counts', () => {
    expect(
      executedDetails({ ...counts, customCounts: new Map(), via: new Set(['record', 'base'] as const), from: 0, to: new Date(1000) }),
    ).toEqual({
      aggregated: true,
      ...counts,
      via: ['base', 'record'],
      from: '1970-01-01T00:00:00.000Z',
      to: '1970-01-01T00:00:01.000Z',
    });
    const reported = executedDetails({
      ...counts,
      customCounts: {},
      via: ['sdk'],
      from: '2026-11-26T10:00:00Z',
      to: '2026-11-26T10:01:00Z',
    });
    expect(reported).not.toHaveProperty('customCounts');
    expect([reported.from, reported.to]).toEqual(['2026-11-26T10:00:00Z', '2026-11-26T10:01:00Z']);
  });

  it('keeps custom counts from a map or an object, in the order the keys were first counted', () => {
    const viaMap = executedDetails({ ...counts, customCounts: new Map([['refer', 1]]), via: ['base'], from: 0, to: 0 });
    const viaObject = executedDetails({ ...counts, customCounts: { refer: 1 }, via: ['base'], from: 0, to: 0 });
    expect(viaMap.customCounts).toEqual({ refer: 1 });
    expect(viaObject).toEqual(viaMap);
    expect(Object.keys(viaMap)).toEqual([
      'aggregated',
      'count',
      'trueCount',
      'falseCount',
      'errorCount',
      'customCounts',
      'version',
      'via',
      'from',
      'to',
    ]);
  });
});
