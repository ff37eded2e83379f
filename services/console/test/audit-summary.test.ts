import { describe, expect, it } from 'vitest';
import { auditSummary, resourceLabel, type SummarizedEvent } from '../src/lib/audit-summary.js';

const BASE = '019ac200-0000-7000-8000-00000000000b';
const RECORD = '019ac200-0000-7000-8000-00000000000r';

const event = (over: Partial<SummarizedEvent>): SummarizedEvent => ({
  kind: 'created',
  actor: { userId: 'alice' },
  resource: { type: 'policy', id: RECORD, baseId: BASE },
  details: {},
  ...over,
});

describe('audit summaries', () => {
  it('names a policy or flow by the name fetched for its base, else the name the event carries, else a short id', () => {
    const e = event({ details: { name: 'Old name' } });
    expect(resourceLabel(e, new Map([[BASE, 'Free shipping']]))).toBe('policy “Free shipping”');
    expect(resourceLabel(e, new Map())).toBe('policy “Old name”');
    expect(resourceLabel(event({ resource: { type: 'flow', id: RECORD, baseId: BASE } }), new Map())).toBe('flow 019ac200…');
  });

  it('says each kind of event as a sentence with its telling details', () => {
    const names = new Map([[BASE, 'Free shipping']]);
    const say = (over: Partial<SummarizedEvent>) => auditSummary(event(over), names);
    expect(say({ details: { name: 'Free shipping' } })).toBe('alice created policy “Free shipping”');
    expect(say({ details: { name: 'Free shipping', basedOnVersion: 2 } })).toBe(
      'alice created a draft of policy “Free shipping” from version 2',
    );
    expect(say({ kind: 'edited', details: { fields: ['rule', 'tests'] } })).toBe('alice edited policy “Free shipping” (rule, tests)');
    expect(say({ kind: 'approval requested', details: { requestId: RECORD } })).toBe('alice asked for a review of policy “Free shipping”');
    expect(say({ kind: 'approved', actor: { userId: 'pat' }, details: { comment: 'fine' } })).toBe(
      'pat approved policy “Free shipping”: “fine”',
    );
    expect(say({ kind: 'rejected', actor: { userId: 'pat' }, details: {} })).toBe('pat rejected policy “Free shipping”');
    expect(say({ kind: 'published', details: { version: 3 } })).toBe('alice published policy “Free shipping” as version 3');
    expect(say({ kind: 'published', details: { version: 4, rollbackOf: 2, effectiveFrom: '2027-01-01T00:00:00.000Z' } })).toBe(
      'alice published policy “Free shipping” as version 4 (rollback to version 2), in effect from 2027-01-01T00:00:00.000Z',
    );
    expect(say({ kind: 'schedule cancelled', details: { version: 4, effectiveFrom: '2027-01-01T00:00:00.000Z' } })).toBe(
      'alice cancelled the schedule of policy “Free shipping” version 4',
    );
    expect(say({ kind: 'deleted' })).toBe('alice deleted policy “Free shipping”');
    expect(say({ kind: 'assigned', resource: { type: 'user', id: 'bob' }, details: { role: 'publisher', added: true } })).toBe(
      'alice added member bob as publisher',
    );
    expect(say({ kind: 'assigned', resource: { type: 'user', id: 'bob' }, details: { role: 'viewer', added: false } })).toBe(
      'alice gave member bob the role viewer',
    );
    expect(
      say({
        kind: 'key created',
        resource: { type: 'apikey', id: RECORD },
        details: { name: 'ci', owner: 'bob', scopes: ['view', 'audit'] },
      }),
    ).toBe('alice created key “ci” for bob (view, audit)');
    expect(say({ kind: 'key revoked', resource: { type: 'apikey', id: RECORD }, details: { name: 'ci', owner: 'alice' } })).toBe(
      'alice revoked key “ci”',
    );
    expect(say({ kind: 'member removed', resource: { type: 'user', id: 'bob' }, details: { role: 'editor', keysRevoked: 2 } })).toBe(
      'alice removed member bob and revoked 2 keys',
    );
    expect(
      say({ kind: 'settings changed', resource: { type: 'org', id: 'acme' }, details: { governanceApproval: { from: false, to: true } } }),
    ).toBe('alice turned review before publishing on');
    expect(
      say({
        kind: 'settings changed',
        resource: { type: 'org', id: 'acme' },
        details: { governanceApproval: { from: true, to: true }, minCoverage: { from: 0, to: 80 } },
      }),
    ).toBe('alice set the least test coverage to 80 %');
    const hook = { type: 'webhook' as const, id: RECORD };
    const url = 'https://ci.example.com/h';
    expect(say({ kind: 'webhook created', resource: hook, details: { url, events: ['*'], description: '' } })).toBe(
      `alice added webhook “${url}”`,
    );
    expect(say({ kind: 'webhook changed', resource: hook, details: { secretRotated: true } })).toBe(
      `alice rotated the secret of webhook 019ac200…`,
    );
    expect(say({ kind: 'webhook disabled', resource: hook, details: { reason: 'gone', url } })).toBe(
      `webhook “${url}” was turned off (it answered 410 Gone)`,
    );
    expect(say({ kind: 'shadow started', details: { recordId: 'r', sampleRate: 0.25, until: null } })).toMatch(
      /^alice started shadow runs of .* on 25 % of its runs$/,
    );
    expect(say({ kind: 'shadow stopped', details: { recordId: 'r', sampled: 5, compared: 4, changed: 1 } })).toMatch(
      /^alice stopped shadow runs of .* \(1 of 4 compared runs changed\)$/,
    );
  });

  it('words a kind it has no sentence for with the kind itself', () => {
    expect(auditSummary(event({ kind: 'frobbed' as never, details: {} }))).toMatch(/^alice: frobbed \(/);
  });

  it('never throws on details of an unexpected shape', () => {
    const odd = { version: 'x', fields: 'rule', comment: 7, scopes: 'all', governanceApproval: null };
    for (const kind of ['created', 'edited', 'approved', 'published', 'key created', 'settings changed', 'decided'] as const) {
      expect(auditSummary(event({ kind, details: odd })), kind).toMatch(/^alice /);
    }
  });
});
