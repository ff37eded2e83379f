/**
 * The impact report as it is kept and shown: its examples (recorded decision inputs and both
 * sides) only for callers with the `audit` right, its counts for everyone; and a report bounded
 * before it is saved, so the review summary that carries it always fits a bus message. The
 * governance service runs for real (registry, database, NATS); the audit service's history pages
 * and the execution service's replays are played by this file.
 */
import { ArbiterError, GovernanceSubject as G, ReviewSummary, type DecisionHistoryEntry, type Principal } from '@arbiter/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImpactService } from '../src/impact-service.js';
import { NatsRegistryPort } from '../src/registry-port.js';
import { as, registryOf, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
let reg: ReturnType<typeof registryOf>;
beforeAll(async () => {
  env = await startTestEnv();
  reg = registryOf(env);
});
afterAll(async () => {
  await env?.close();
});

const admin = as('admin');
const publisher = as('publisher');
const editor = as('editor');
const viewer = as('viewer');
const auditor = as('auditor');
const auditorViewKey = as('auditor', { userId: 'audrey', scopes: ['view'] });
const adminAuditKey = as('admin', { userId: 'ada', scopes: ['view', 'audit'] });

const encoder = new TextEncoder();
/** The bus limit of the test NATS server (1 MiB by default). */
const busLimit = (): number => env.client.nc.info?.max_payload ?? 1024 * 1024;

interface Seeded {
  entry: DecisionHistoryEntry;
  input: Record<string, unknown>;
}

/** `n` recorded decisions answered `true`, newest first, each with `input(i)`. */
function history(n: number, input: (i: number) => Record<string, unknown>): Seeded[] {
  const t = Date.parse('2026-11-01T00:00:00Z');
  return Array.from({ length: n }, (_, i) => {
    const at = new Date(t - i * 1000).toISOString();
    const decisionId = `0190a0b0-0000-7000-8000-${String(i).padStart(12, '0')}`;
    return { entry: { decisionId, at, now: at, result: true, outcomes: {}, errorCode: null }, input: input(i) };
  });
}

/**
 * An impact service on the test env's database and registry whose history pages are `decisions`
 * (in pages of the service's size, by cursor) and whose replays answer `replayed(i)` for decision `i`.
 */
function impactService(decisions: Seeded[], replayed: (i: number) => unknown, maxReportBytes = Math.floor(busLimit() * 0.75)) {
  const bus = {
    requestFrame: async (_subject: string, payload: unknown) => {
      const { limit, cursor } = payload as { limit: number; cursor?: string };
      const start = cursor === undefined ? 0 : Number(cursor);
      const page = decisions.slice(start, start + limit);
      const next = start + page.length;
      return {
        header: { entries: page.map((d) => d.entry), nextCursor: next < decisions.length ? String(next) : null },
        items: page.map((d) => encoder.encode(JSON.stringify(d.input))),
      };
    },
  };
  let asked = 0;
  const evals = {
    // Answers in the order asked: the service replays decisions in history order.
    many: async (_spec: unknown, items: readonly Uint8Array[]) => items.map(() => encoder.encode(JSON.stringify(replayed(asked++)))),
  };
  return new ImpactService({
    db: env.governance.db,
    bus: bus as never,
    evals: evals as never,
    registry: new NatsRegistryPort(env.client, 10_000),
    timeoutMs: 10_000,
    replaysPerSecond: 0,
    maxReportBytes,
  });
}

const review = (p: Principal, recordId: string) => env.call(G.get, { principal: p, kind: 'policy', recordId }, ReviewSummary);
const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));
const storedReports = async (recordId: string): Promise<number> =>
  Number(((await env.sql('governance_impact_reports').where({ record_id: recordId }).count({ n: '*' })) as Array<{ n: string }>)[0]!.n);

describe('who sees the examples', () => {
  let draftId = '';
  beforeAll(async () => {
    draftId = (await reg.createPolicy(admin)).policyId;
    const decisions = history(12, (i) => ({ applicant: { name: `person ${i}`, iban: `DE${String(i).padStart(20, '0')}` } }));
    // Every other decision changes: 6 changed, 6 unchanged.
    const service = impactService(decisions, (i) => ({ result: i % 2 === 0 ? false : true, outcomes: {} }));
    const report = await service.analyse(admin, 'policy', draftId, { limit: 100 });
    expect(report).toMatchObject({ replayed: 12, changed: 6, unchanged: 6 });
    expect(report.examples).toHaveLength(6);
  });

  it('the review summary shows the examples to admins and auditors, and only the counts to everyone else', async () => {
    for (const p of [admin, auditor, adminAuditKey]) {
      const { impact } = await review(p, draftId);
      expect(impact, `${p.role} ${p.userId}`).toMatchObject({ replayed: 12, changed: 6, transitions: { 'true→false': 6 } });
      expect(impact!.examples, `${p.role} ${p.userId}`).toHaveLength(6);
      expect(impact!.examples![0]!.input).toMatchObject({ applicant: { name: expect.stringMatching(/^person /) } });
    }
    for (const p of [viewer, editor, publisher, auditorViewKey]) {
      const { impact } = await review(p, draftId);
      expect(impact, `${p.role} ${p.userId}`).toMatchObject({ replayed: 12, changed: 6, unchanged: 6, transitions: { 'true→false': 6 } });
      expect(impact, `${p.role} ${p.userId}`).not.toHaveProperty('examples');
      expect(JSON.stringify(impact)).not.toContain('person');
    }
  });

  it('the analysis answers its caller the same way: an editor or a publisher gets the counts without the examples', async () => {
    const decisions = history(4, (i) => ({ applicant: { name: `person ${i}` } }));
    for (const p of [editor, publisher]) {
      const report = await impactService(decisions, () => ({ result: false })).analyse(p, 'policy', draftId, { limit: 100 });
      expect(report, p.role).toMatchObject({ replayed: 4, changed: 4 });
      expect(report, p.role).not.toHaveProperty('examples');
    }
    // The report kept still has them, for those who may read them.
    expect((await review(auditor, draftId)).impact!.examples).toHaveLength(4);
  });
});

describe('why each example came out', () => {
  const why = (sentence: string, pad = '') => ({
    result: false,
    sentence: sentence + pad,
    because: [
      {
        kind: 'condition',
        rule: 'ok',
        text: 'the __n__ of the **a** is at least 1',
        holds: false,
        path: 'a.n',
        value: '***',
        line: 1,
        column: 1,
      },
    ],
  });

  /** A service whose replays answer `false`, with reasons only when asked; `asked` counts the items replayed with reasons. */
  function explaining(decisions: Seeded[], pad = '') {
    const service = impactService(decisions, () => null);
    const asked = { withReasons: 0, without: 0 };
    (service as unknown as { deps: { evals: unknown } }).deps.evals = {
      many: async (spec: { flags?: { reasons?: boolean } }, items: readonly Uint8Array[]) =>
        items.map(() => {
          if (spec.flags?.reasons === true) asked.withReasons++;
          else asked.without++;
          return encoder.encode(
            JSON.stringify({ result: false, outcomes: {}, ...(spec.flags?.reasons === true ? { reasons: why('after', pad) } : {}) }),
          );
        }),
    };
    return { service, asked };
  }

  it('before: the recorded reasons; after: the examples replayed once more asking for reasons, and only they', async () => {
    const draftId = (await reg.createPolicy(admin)).policyId;
    const decisions = history(30, (i) => ({ a: { n: '***', i } }));
    decisions.forEach((d, i) => {
      if (i % 2 === 0) d.entry.reasons = why(`before ${i}`) as never;
    });
    const { service, asked } = explaining(decisions);
    const report = await service.analyse(admin, 'policy', draftId, { limit: 100 });
    expect(report.examples).toHaveLength(20);
    expect(asked).toEqual({ without: 30, withReasons: 20 });
    report.examples!.forEach((example, i) => {
      expect(example.after.reasons!.sentence).toBe('after');
      if (i % 2 === 0) expect(example.before.reasons!.sentence).toBe(`before ${i}`);
      else expect(example.before).not.toHaveProperty('reasons');
    });
    // Counts only for those who may not read decisions: no reasons either.
    const { impact } = await review(editor, draftId);
    expect(JSON.stringify(impact)).not.toContain('because');
  });

  it('before, for a run that did not ask: the decision replayed through the record that made it, kept only when it gives the recorded answer', async () => {
    const draftId = (await reg.createPolicy(admin)).policyId;
    const decisions = history(6, (i) => ({ a: { i } }));
    decisions.forEach((d) => (d.entry.policyId = 'rec-recorded'));
    const service = impactService(decisions, () => null);
    const ids: string[] = [];
    (service as unknown as { deps: { evals: unknown } }).deps.evals = {
      many: async (spec: { id: string; flags?: { reasons?: boolean } }, items: readonly Uint8Array[]) => {
        if (spec.flags?.reasons === true) ids.push(spec.id);
        return items.map((_, j) => {
          if (spec.flags?.reasons !== true) return encoder.encode(JSON.stringify({ result: false, outcomes: {} }));
          // Through the recorded record: the recorded answer (true) for every other decision only.
          if (spec.id === 'rec-recorded')
            return encoder.encode(JSON.stringify({ result: j % 2 === 0, outcomes: {}, reasons: why(`again ${j}`) }));
          return encoder.encode(JSON.stringify({ result: false, outcomes: {}, reasons: why('after') }));
        });
      },
    };
    const report = await service.analyse(admin, 'policy', draftId, { limit: 100 });
    expect(ids).toEqual([draftId, 'rec-recorded']);
    expect(report.examples).toHaveLength(6);
    report.examples!.forEach((example, i) => {
      expect(example.after.reasons!.sentence).toBe('after');
      if (i % 2 === 0) expect(example.before).toMatchObject({ reasons: { sentence: `again ${i}` }, reasonsReplayed: true });
      else expect(example.before).not.toHaveProperty('reasons');
    });
  });

  it('keeps the report when the replays for reasons fail', async () => {
    const draftId = (await reg.createPolicy(admin)).policyId;
    const service = impactService(
      history(3, (i) => ({ a: { i } })),
      () => null,
    );
    (service as unknown as { deps: { evals: unknown } }).deps.evals = {
      many: async (spec: { flags?: { reasons?: boolean } }, items: readonly Uint8Array[]) => {
        if (spec.flags?.reasons === true) throw new Error('the bus went away');
        return items.map(() => encoder.encode(JSON.stringify({ result: false, outcomes: {} })));
      },
    };
    const report = await service.analyse(admin, 'policy', draftId, { limit: 100 });
    expect(report).toMatchObject({ replayed: 3, changed: 3 });
    expect(report.examples!.every((e) => e.after.reasons === undefined)).toBe(true);
  });

  it('keeps an example too large with its reasons without them', async () => {
    const draftId = (await reg.createPolicy(admin)).policyId;
    // 20 examples of ~60 KB inputs fit the report; with ~40 KB of reasons after each they would not.
    const decisions = history(20, (i) => ({ a: { i, notes: ''.padEnd(30_000, 'x') } }));
    const { service } = explaining(decisions, ''.padEnd(40_000, 'r'));
    const report = await service.analyse(admin, 'policy', draftId, { limit: 100 });
    expect(report.examples).toHaveLength(20);
    expect(report.examplesTruncated).toBe(false);
    expect(report.examples!.some((e) => e.after.reasons !== undefined)).toBe(true);
    expect(report.examples!.some((e) => e.after.reasons === undefined)).toBe(true);
    expect(bytesOf(report)).toBeLessThanOrEqual(busLimit() * 0.75);
  });
});

describe('a report bounded before it is saved', () => {
  it('keeps the examples that fit when their inputs are large, marks the report, and the review summary stays readable', async () => {
    const draftId = (await reg.createPolicy(admin)).policyId;
    // 30 decisions whose inputs are ~100 KB each: 20 examples would be ~2 MB, past the bus limit.
    const decisions = history(30, (i) => ({ applicant: { id: i, notes: `${i}`.padEnd(100_000, 'x') } }));
    const report = await impactService(decisions, () => ({ result: false })).analyse(admin, 'policy', draftId, { limit: 100 });
    // The saved report does not make the review summary too large for the bus, for anyone.
    for (const p of [viewer, admin]) {
      const { impact } = await review(p, draftId);
      expect(impact, p.role).toMatchObject({ impactId: report.impactId, changed: 30 });
    }
    expect(report).toMatchObject({ replayed: 30, changed: 30, examplesTruncated: true });
    expect(report.examples!.length).toBeGreaterThan(0);
    expect(report.examples!.length).toBeLessThan(20);
    expect(bytesOf(report)).toBeLessThanOrEqual(busLimit() * 0.75);
    expect((await review(admin, draftId)).impact!.examples).toHaveLength(report.examples!.length);
  });

  it('keeps every example when they fit, unmarked', async () => {
    const draftId = (await reg.createPolicy(admin)).policyId;
    const decisions = history(25, (i) => ({ applicant: { id: i } }));
    const report = await impactService(decisions, () => ({ result: false })).analyse(admin, 'policy', draftId, { limit: 100 });
    expect(report.examples).toHaveLength(20);
    expect(report.examplesTruncated).toBe(false);
  });

  it('refuses a report that cannot fit even without its examples, and saves nothing', async () => {
    const draftId = (await reg.createPolicy(admin)).policyId;
    // Each replay answers a distinct long result: one transition per decision, ~200 bytes each.
    const decisions = history(5000, (i) => ({ applicant: { id: i } }));
    const service = impactService(decisions, (i) => ({ result: `${i}-${'y'.repeat(300)}` }));
    const err = await service.analyse(admin, 'policy', draftId, { limit: 5000 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ArbiterError);
    expect(err).toMatchObject({ code: 'result_too_large', status: 422 });
    expect((err as ArbiterError).message).toMatch(/limit/);
    expect(await storedReports(draftId)).toBe(0);
    expect((await review(admin, draftId)).impact).toBeNull();
  });

  it('bounds a report kept before reports were bounded when it is shown, so the review summary answers', async () => {
    const draft = await reg.createPolicy(admin);
    const example = (i: number) => ({
      decisionId: `0190a0b0-0000-7000-8000-${String(i).padStart(12, '0')}`,
      at: '2026-11-01T00:00:00.000Z',
      before: { result: true, errorCode: null, outcomes: {} },
      after: { result: false, errorCode: null, outcomes: {} },
      input: { notes: 'z'.repeat(100_000) },
    });
    const old = {
      impactId: '0190a0b0-0000-7000-8000-0000000000aa',
      policyId: draft.policyId,
      baseId: draft.baseId,
      contentHash: draft.contentHash,
      at: '2026-11-01T00:00:00.000Z',
      replayed: 20,
      unchanged: 0,
      changed: 20,
      errors: 0,
      unreplayable: 0,
      transitions: { 'true→false': 20 },
      outcomes: {},
      examples: Array.from({ length: 20 }, (_, i) => example(i)),
    };
    await env.sql('governance_impact_reports').insert({
      org_id: 'acme',
      record_id: draft.policyId,
      content_hash: draft.contentHash,
      report: JSON.stringify(old),
    });
    expect((await review(viewer, draft.policyId)).impact).toMatchObject({ impactId: old.impactId, changed: 20 });
    const whole = (await review(admin, draft.policyId)).impact!;
    expect(whole.examplesTruncated).toBe(true);
    expect(whole.examples!.length).toBeLessThan(20);
    expect(bytesOf(whole)).toBeLessThanOrEqual(busLimit() * 0.75);
  });
});
