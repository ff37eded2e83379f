/**
 * Decision recording: the sampling decision, the per-second cap, errors always, masks on
 * nested and array paths and the org's masks, and drops counted when the outbox is full. The sink
 * is the recorder's own seam (the Redis outbox in the service); stored runs through the real
 * outbox, JetStream and audit service are in test/e2e/decisions.test.ts.
 */
import {
  ArbiterError,
  DecisionRecord,
  type ArbiterEvent,
  type DecisionDropsReport,
  type DecisionSettings,
  type Principal,
} from '@arbiter/contracts';
import { evaluate } from '@arbiter/rule-lang';
import { Registry } from 'prom-client';
import { eventually } from '@arbiter/test-kit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { applyMasks, compileMasks } from '../src/recording/masks.js';
import { DecisionRecorder, type DecisionRecorderOptions, type RanRecord } from '../src/recording/recorder.js';
import { RecordingSettings } from '../src/recording/settings.js';
import { silentLogger } from './helpers.js';

const alice: Principal = { orgId: 'acme', userId: 'alice', role: 'editor', apiKeyId: 'key-1' };
const ran: RanRecord = { kind: 'policy', orgId: 'acme', baseId: 'base-1', recordId: 'rec-1', version: 2 };
const enc = new TextEncoder();
const bytes = (v: unknown) => enc.encode(JSON.stringify(v));
const answer = (result: boolean, errorCode?: string) =>
  bytes({ result, trace: [], outcomes: { ok: result }, ...(errorCode ? { error: 'e', errorCode } : {}), policyId: 'rec-1' });

describe('masks', () => {
  it('masks nested object paths, every element of a list, one element by index, and leaves missing paths alone', () => {
    const data = {
      a: { b: 1, c: 2 },
      items: [{ card: '4111', n: 1 }, { card: '5500' }, { other: true }],
      list: [{ x: 1 }, { x: 2 }],
    };
    const masked = applyMasks(data, compileMasks(['a.b', 'items.*.card', 'list.1.x', 'nope.deeper', 'a.b.c']));
    expect(masked).toBe(true);
    expect(data).toEqual({
      a: { b: '***', c: 2 },
      items: [{ card: '***', n: 1 }, { card: '***' }, { other: true }],
      list: [{ x: 1 }, { x: '***' }],
    });
    expect(applyMasks({ a: 1 }, compileMasks(['b.c', 'a.b']))).toBe(false);
  });

  it('masks a whole subtree and every key with a trailing `*`', () => {
    const data = { secret: { deep: { x: 1 } }, m: { k1: 1, k2: 2 } };
    applyMasks(data, compileMasks(['secret', 'm.*']));
    expect(data).toEqual({ secret: '***', m: { k1: '***', k2: '***' } });
  });

  it('masks every spelling of a key the rule language would read for it (exact, camelCase, snake_case), at every level', () => {
    // A rule reading `the __credit score__ of the **applicant**` finds `credit score`, `creditScore` or `credit_score`.
    for (const key of ['creditScore', 'credit_score', 'credit score', 'CreditScore', 'credit-score', 'Credit Score']) {
      const data: Record<string, unknown> = { applicant: { [key]: 712, name: 'Ann' } };
      expect(applyMasks(data, compileMasks(['applicant.creditScore'])), key).toBe(true);
      expect(data, key).toEqual({ applicant: { [key]: '***', name: 'Ann' } });
    }
    // Written in any spelling, at every level of the path, through lists, all spellings present at once.
    const data = {
      Loan_Applicant: { home_address: { postCode: 'DK-8000', city: 'Aarhus' }, 'home address': { post_code: 'DK-1000' } },
      bank_accounts: [{ 'IBAN number': 'DK50', bank: 'x' }, { ibanNumber: 'DK51' }, { iban_number: 'DK52' }],
    };
    expect(applyMasks(data, compileMasks(['loan applicant.homeAddress.post_code', 'bankAccounts.*.iban number']))).toBe(true);
    expect(data).toEqual({
      Loan_Applicant: { home_address: { postCode: '***', city: 'Aarhus' }, 'home address': { post_code: '***' } },
      bank_accounts: [{ 'IBAN number': '***', bank: 'x' }, { ibanNumber: '***' }, { iban_number: '***' }],
    });
  });

  it('leaves keys that are other names alone: a spelling the language would not read for the mask is not masked', () => {
    const data = { applicant: { creditScores: 1, credit: 2, score: 3, creditscore: 4 }, constructor: { x: 1 } };
    expect(applyMasks(data, compileMasks(['applicant.creditScore', 'toString', '__proto__.x']))).toBe(false);
    expect(data).toEqual({ applicant: { creditScores: 1, credit: 2, score: 3, creditscore: 4 }, constructor: { x: 1 } });
  });
});

describe('DecisionRecorder', () => {
  const open: DecisionRecorder[] = [];
  afterEach(async () => {
    for (const r of open.splice(0)) await r.close();
  });

  function recorder(settings: Partial<DecisionSettings> = {}, opts: Partial<DecisionRecorderOptions> = {}, outboxLength = () => 0) {
    const written: ArbiterEvent[] = [];
    const registry = new Registry();
    const full: DecisionSettings = { masks: [], bases: {}, ...settings };
    const s = new RecordingSettings(() => Promise.resolve(full), 60_000);
    const r = new DecisionRecorder(
      {
        enqueue: (events) => {
          written.push(...events);
          return Promise.resolve();
        },
        length: () => Promise.resolve(outboxLength()),
      },
      s,
      silentLogger(),
      registry,
      { perSecond: 50, flushMs: 60_000, bufferMax: 1000, outboxMax: 1000, ...opts },
    );
    open.push(r);
    const records = () => written.map((e) => DecisionRecord.parse(e.details));
    const metric = async (name: string, labels: Record<string, string> = {}) => {
      const m = await registry.getSingleMetric(name)?.get();
      return (m?.values ?? []).filter((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((n, v) => n + v.value, 0);
    };
    return { r, s, written, records, metric };
  }

  /** Admits and records `n` runs as the stored runner does; answers how many were admitted. */
  function run(r: DecisionRecorder, n: number, data: unknown = { x: 1 }, error = false): number {
    let admitted = 0;
    for (let i = 0; i < n; i++) {
      if (!r.admit(ran.orgId, ran.baseId, error)) continue;
      admitted++;
      r.policy(alice, ran, bytes(data), answer(!error, error ? 'missing_selector' : undefined), 0.25);
    }
    return admitted;
  }

  it('records a run as a `decided` event carrying the record: caller, version, result, outcomes, duration', async () => {
    const { r, written, records, metric } = recorder();
    expect(run(r, 1, { applicant: { age: 20 } })).toBe(1);
    await r.flush();
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({ kind: 'decided', orgId: 'acme', resource: { type: 'policy', id: 'rec-1', baseId: 'base-1' } });
    expect(written[0]!.eventId).toBe(records()[0]!.decisionId);
    expect(records()[0]).toMatchObject({
      kind: 'policy',
      policyId: 'rec-1',
      baseId: 'base-1',
      version: 2,
      caller: { userId: 'alice', apiKeyId: 'key-1' },
      input: { applicant: { age: 20 } },
      masked: false,
      result: true,
      outcomes: { ok: true },
      errorCode: null,
      durationUs: 250,
    });
    expect(await metric('arbiter_decisions_recorded_total')).toBe(1);
  });

  it('keeps the reasons of a run that asked for them, masked like the input, and none for a run that did not', async () => {
    const { r, records } = recorder({ masks: ['applicant.ssn'] });
    const rule =
      'An **applicant** is approved if the __ssn__ of the **applicant** is "1" and the __age__ of the **applicant** is at least 18.';
    const data = { applicant: { ssn: '078-05-1120', age: 16 } };
    const asked = evaluate(rule, data, { reasons: true });
    expect(asked.reasons!.sentence).toContain('078-05-1120');
    r.admit(ran.orgId, ran.baseId, false);
    r.policy(alice, ran, bytes(data), bytes({ ...asked, policyId: 'rec-1' }), 0.1);
    r.admit(ran.orgId, ran.baseId, false);
    r.policy(alice, ran, bytes(data), bytes({ ...evaluate(rule, data), policyId: 'rec-1' }), 0.1);
    await r.flush();
    const [withReasons, without] = records();
    expect(JSON.stringify(withReasons)).not.toContain('078-05-1120');
    expect(withReasons!.reasons!.because.map((e) => [e.path, e.value])).toEqual([
      ['applicant.ssn', '***'],
      ['applicant.age', 16],
    ]);
    expect(withReasons!.reasons!.sentence).toContain('("***")');
    expect(without!.reasons).toBeUndefined();
    expect(without!.reasonsLeftOut).toBeUndefined();
  });

  it("keeps a flow's node reasons, masked", async () => {
    const { r, records } = recorder({ bases: { 'base-1': { enabled: true, sampleRate: 1, masks: ['a.secret'] } } });
    const reasons = evaluate('A **x** is ok if the __secret__ of the **a** is "no".', { a: { secret: 'yes' } }, { reasons: true }).reasons!;
    r.admit(ran.orgId, ran.baseId, false);
    r.flow(
      alice,
      { ...ran, kind: 'flow' },
      bytes({ a: { secret: 'yes' } }),
      {
        result: false,
        path: [{ nodeId: 'n1', type: 'policy', result: false }],
        nodes: [{ nodeId: 'n1', result: false, outcomes: {}, trace: [], error: null, reasons }],
      },
      1,
    );
    await r.flush();
    const [record] = records();
    expect(record!.nodeReasons).toHaveLength(1);
    expect(record!.nodeReasons![0]!.nodeId).toBe('n1');
    expect(record!.nodeReasons![0]!.reasons.because[0]!.value).toBe('***');
    expect(JSON.stringify(record)).not.toContain('"yes"');
  });

  it('keeps a record too large for the bus with its reasons without them, and drops it only when it is too large without', async () => {
    const { r, records, metric } = recorder({}, { maxRecordBytes: () => 20_000 });
    const rule = 'An **a** is ok if the __n__ of the **a** is at least 1.';
    const big = { ...evaluate(rule, { a: { n: 0 } }, { reasons: true }), policyId: 'rec-1' };
    big.reasons!.sentence = 'x'.repeat(30_000);
    r.admit(ran.orgId, ran.baseId, false);
    r.policy(alice, ran, bytes({ a: { n: 0 } }), bytes(big), 0.1);
    r.admit(ran.orgId, ran.baseId, false);
    r.policy(alice, ran, bytes({ a: { n: 0, pad: 'y'.repeat(30_000) } }), bytes(big), 0.1);
    await r.flush();
    expect(records()).toHaveLength(1);
    expect(records()[0]).toMatchObject({ reasonsLeftOut: true, result: false });
    expect(records()[0]!.reasons).toBeUndefined();
    expect(await metric('arbiter_decisions_dropped_total', { reason: 'too_large' })).toBe(1);
  });

  it('caps each base at the per-second limit but records every error', async () => {
    // The cap counts per second of the clock: the clock is held still, then moved to the next second.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(new Date('2026-11-26T12:00:00.100Z'));
      const { r, records } = recorder({}, { perSecond: 5 });
      expect(run(r, 40)).toBe(5);
      expect(run(r, 7, { x: 1 }, true)).toBe(7);
      vi.setSystemTime(new Date('2026-11-26T12:00:01.000Z'));
      expect(run(r, 40)).toBe(5);
      await r.flush();
      expect(records().filter((d) => d.errorCode === 'missing_selector')).toHaveLength(7);
    } finally {
      vi.useRealTimers();
    }
  });

  it("applies a base's own cap, its sample rate and `enabled`", async () => {
    const { r, s } = recorder({
      bases: {
        'base-1': { enabled: true, sampleRate: 0, masks: [] },
        'base-2': { enabled: false, sampleRate: 1, masks: [] },
        'base-3': { enabled: true, sampleRate: 1, perSecond: 0, masks: [] },
      },
    });
    await s.get('acme');
    expect(run(r, 100)).toBe(0); // sampleRate 0
    expect(run(r, 3, {}, true)).toBe(3); // errors pass the sample rate
    expect(r.admit('acme', 'base-2', true)).toBe(false); // disabled: not even errors
    expect(r.admit('acme', 'base-3', false)).toBe(false);
    expect(r.admit('acme', 'base-3', true)).toBe(true);
  });

  it('samples about `sampleRate` of the runs', async () => {
    const { r, s } = recorder({ bases: { 'base-1': { enabled: true, sampleRate: 0.5, perSecond: 100_000, masks: [] } } });
    await s.get('acme');
    let admitted = 0;
    for (let i = 0; i < 4000; i++) if (r.admit('acme', 'base-1', false)) admitted++;
    // Binomial(4000, 0.5): ±10 standard deviations.
    expect(admitted).toBeGreaterThan(1700);
    expect(admitted).toBeLessThan(2300);
  });

  it('masks the org paths and the base paths before the record leaves, nested and in lists', async () => {
    const { r, records } = recorder({
      masks: ['applicant.ssn'],
      bases: { 'base-1': { enabled: true, sampleRate: 1, masks: ['items.*.card'] } },
    });
    run(r, 1, {
      applicant: { ssn: '123', age: 30 },
      items: [
        { card: '4111', qty: 1 },
        { card: '5500', qty: 2 },
      ],
    });
    await r.flush();
    expect(records()[0]).toMatchObject({
      masked: true,
      input: {
        applicant: { ssn: '***', age: 30 },
        items: [
          { card: '***', qty: 1 },
          { card: '***', qty: 2 },
        ],
      },
    });
    // Another base of the org: only the org's masks.
    r.admit('acme', 'base-9', false);
    r.policy(alice, { ...ran, baseId: 'base-9' }, bytes({ applicant: { ssn: '1' }, items: [{ card: 'c' }] }), answer(true), 0);
    await r.flush();
    expect(records()[1]!.input).toEqual({ applicant: { ssn: '***' }, items: [{ card: 'c' }] });
  });

  it('never sends a record whose settings could not be read: dropped and counted', async () => {
    const registry = new Registry();
    const written: ArbiterEvent[] = [];
    const r = new DecisionRecorder(
      { enqueue: (e) => (written.push(...e), Promise.resolve()), length: () => Promise.resolve(0) },
      new RecordingSettings(() => Promise.reject(new Error('audit service away')), 60_000),
      silentLogger(),
      registry,
      { perSecond: 50, flushMs: 60_000, bufferMax: 10, outboxMax: 10 },
    );
    open.push(r);
    expect(run(r, 2, { secret: 1 })).toBe(2);
    await r.flush();
    expect(written).toHaveLength(0);
    const dropped = await registry.getSingleMetric('arbiter_decisions_dropped_total')?.get();
    expect(dropped?.values.find((v) => v.labels.reason === 'settings')?.value).toBe(2);
  });

  /** A recorder whose settings source answers `settings` or fails with `failure` when it is set; refreshed every 10 ms. */
  function switchable(maxAgeMs: number) {
    const registry = new Registry();
    const written: ArbiterEvent[] = [];
    const source = {
      settings: { masks: ['applicant.ssn'], bases: {} } as DecisionSettings,
      failure: undefined as Error | undefined,
      reads: 0,
    };
    const settings = new RecordingSettings(
      () => (source.reads++, source.failure ? Promise.reject(source.failure) : Promise.resolve(source.settings)),
      10,
      maxAgeMs,
    );
    const r = new DecisionRecorder(
      { enqueue: (e) => (written.push(...e), Promise.resolve()), length: () => Promise.resolve(0) },
      settings,
      silentLogger(),
      registry,
      { perSecond: 1000, flushMs: 60_000, bufferMax: 100, outboxMax: 100 },
    );
    open.push(r);
    const inputs = () => written.map((e) => DecisionRecord.parse(e.details).input);
    const droppedForSettings = async () =>
      (await registry.getSingleMetric('arbiter_decisions_dropped_total')?.get())?.values.find((v) => v.labels.reason === 'settings')
        ?.value ?? 0;
    /** Waits for `n` more reads of the source to have been answered or failed. */
    const reads = async (n: number) => {
      const target = source.reads + n;
      await eventually(() => expect(source.reads).toBeGreaterThanOrEqual(target), { timeoutMs: 5000, intervalMs: 5 });
    };
    return { r, settings, source, inputs, droppedForSettings, reads };
  }

  it('fails closed when the audit service answers that it cannot give the settings: no record with the masks held before', async () => {
    const { r, settings, source, inputs, droppedForSettings, reads } = switchable(60_000);
    run(r, 1, { applicant: { ssn: '1', name: 'a' } });
    await r.flush();
    expect(inputs()).toEqual([{ applicant: { ssn: '***', name: 'a' } }]);
    // A new mask is saved, but reading the settings now fails (e.g. past the bus limit): the masks
    // held (without `applicant.name`) must not be used.
    source.settings = { masks: ['applicant.ssn', 'applicant.name'], bases: {} };
    source.failure = new ArbiterError('result_too_large', 'the result is past the bus limit');
    await reads(2);
    expect(settings.peek('acme')).toBeUndefined();
    run(r, 3, { applicant: { ssn: '2', name: 'b' } });
    await r.flush();
    expect(inputs()).toHaveLength(1);
    expect(await droppedForSettings()).toBe(3);
    // Readable again: recorded with the new masks.
    source.failure = undefined;
    await reads(2);
    run(r, 1, { applicant: { ssn: '3', name: 'c' } });
    await r.flush();
    expect(inputs()[1]).toEqual({ applicant: { ssn: '***', name: '***' } });
  });

  it('keeps the settings while no audit replica answers for at most their max age, then drops the records (counted)', async () => {
    const { r, settings, source, inputs, droppedForSettings, reads } = switchable(400);
    await settings.get('acme');
    source.failure = new ArbiterError('dependency_unavailable', 'no service answers');
    await reads(2);
    run(r, 1, { applicant: { ssn: '1' } });
    await r.flush();
    expect(inputs()).toEqual([{ applicant: { ssn: '***' } }]);
    await eventually(() => expect(settings.peek('acme')).toBeUndefined(), { timeoutMs: 5000, intervalMs: 20 });
    run(r, 2, { applicant: { ssn: '2' } });
    await r.flush();
    expect(inputs()).toHaveLength(1);
    expect(await droppedForSettings()).toBe(2);
  });

  it('records nothing for an org whose first read fails, whatever the failure (a restart with unreadable settings)', async () => {
    for (const failure of [
      new ArbiterError('result_too_large', 'too large'),
      new ArbiterError('dependency_unavailable', 'away'),
      new ArbiterError('timeout', 'slow'),
      new Error('malformed'),
    ]) {
      const { r, source, inputs, droppedForSettings } = switchable(60_000);
      source.failure = failure;
      expect(run(r, 2, { applicant: { ssn: '1' } })).toBe(2);
      await r.flush();
      expect(inputs(), failure.message).toEqual([]);
      expect(await droppedForSettings(), failure.message).toBe(2);
    }
  });

  it('drops and counts records while the outbox is full, and when the buffer is full', async () => {
    let length = 998;
    const { r, written, metric } = recorder({}, { outboxMax: 1000, bufferMax: 3 }, () => length);
    run(r, 3);
    await r.flush();
    expect(written).toHaveLength(2);
    expect(await metric('arbiter_decisions_dropped_total', { reason: 'outbox' })).toBe(1);
    length = 0;
    run(r, 5);
    await r.flush();
    expect(written).toHaveLength(5);
    expect(await metric('arbiter_decisions_dropped_total', { reason: 'buffer' })).toBe(2);
    expect(await metric('arbiter_decisions_recorded_total')).toBe(5);
  });

  it("reports each base's drops by reason, and sends a report that failed again with the same id", async () => {
    const reports: DecisionDropsReport[] = [];
    let fail = true;
    let length = 999;
    const { r } = recorder(
      {},
      {
        outboxMax: 1000,
        bufferMax: 3,
        reportDrops: (report) => {
          reports.push(structuredClone(report));
          return fail ? Promise.reject(new Error('audit away')) : Promise.resolve({ added: true });
        },
      },
      () => length,
    );
    run(r, 3); // room for 1: 2 dropped (outbox)
    await r.flush();
    await r.report();
    expect(reports).toHaveLength(1);
    expect(reports[0]!.drops).toEqual([{ orgId: 'acme', baseId: 'base-1', outbox: 2, buffer: 0, settings: 0, tooLarge: 0 }]);
    // Later drops wait for the next report; the failed one goes again first, as it was.
    length = 0;
    run(r, 5); // buffer of 3: 2 dropped (buffer)
    await r.flush();
    fail = false;
    await r.report();
    expect(reports[1]).toEqual(reports[0]);
    await r.report();
    expect(reports).toHaveLength(3);
    expect(reports[2]!.reportId).not.toBe(reports[0]!.reportId);
    expect(reports[2]!.drops).toEqual([{ orgId: 'acme', baseId: 'base-1', outbox: 0, buffer: 2, settings: 0, tooLarge: 0 }]);
    await r.report();
    expect(reports).toHaveLength(3);
  });
});
