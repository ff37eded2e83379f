/** Run reports: counted without I/O, sent in batches, retried with the same id, bounded while the service is away. */
import { ArbiterError, type RunReport, type RunReportReply } from '@arbiter/contracts';
import { describe, expect, it } from 'vitest';
import { Reporter } from '../src/local/reporter.js';

const P = '0190a0b0-0000-7000-8000-000000000001';
const B = '0190a0b0-0000-7000-8000-000000000002';

describe('Reporter', () => {
  it('counts by outcome and sends one entry per record and version', async () => {
    const sent: RunReport[] = [];
    const reporter = new Reporter(async (r) => (sent.push(r), { accepted: r.runs.length, ignored: [] }), 60_000, 10);
    const draft = reporter.counterFor('policy', P, B, null);
    const flow = reporter.counterFor('flow', B, P, 1);
    for (const [result, error] of [
      [true, false],
      [false, false],
      [false, true],
      [true, false],
    ] as const)
      draft.add(result, error);
    flow.add('manual review', false);
    flow.add('manual review', false);
    expect(reporter.counterFor('policy', P, B, null)).toBe(draft);
    await reporter.flush();
    expect(sent).toHaveLength(1);
    expect(sent[0].runs).toEqual([
      expect.objectContaining({ kind: 'policy', recordId: P, version: null, count: 4, trueCount: 2, falseCount: 1, errorCount: 1 }),
      expect.objectContaining({ kind: 'flow', recordId: B, version: 1, count: 2, trueCount: 0, customCounts: { 'manual review': 2 } }),
    ]);
    expect(reporter.stats()).toMatchObject({ reportedRuns: 6, unreportedRuns: 0, pendingReports: 0 });
    await reporter.flush(); // nothing new: nothing sent
    expect(sent).toHaveLength(1);
    await reporter.close(100);
  });

  it('counts the outputs of decision tables by their JSON, at most 50 of them, as the execution service does', async () => {
    const sent: RunReport[] = [];
    const reporter = new Reporter(async (r) => (sent.push(r), { accepted: r.runs.length, ignored: [] }), 60_000, 10);
    const counter = reporter.counterFor('flow', P, B, 1);
    counter.add({ tier: 'gold' }, false);
    counter.add({ tier: 'gold' }, false);
    for (let i = 0; i < 60; i++) counter.add([{ band: i }], false);
    counter.add({ big: 'x'.repeat(300) }, false);
    await reporter.flush();
    const counts = sent[0].runs[0].customCounts!;
    expect(counts['{"tier":"gold"}']).toBe(2);
    expect(Object.keys(counts)).toHaveLength(51);
    expect(counts['(other)']).toBe(60 - 49 + 1);
    await reporter.close(100);
  });

  it('keeps a report that could not be sent and sends it again with the same id; refused ones are dropped', async () => {
    const attempts: RunReport[] = [];
    let up = false;
    const reporter = new Reporter(
      async (r): Promise<RunReportReply> => {
        attempts.push(r);
        if (!up) throw new ArbiterError('dependency_unavailable', 'down');
        return { accepted: 1, ignored: [] };
      },
      60_000,
      10,
    );
    reporter.counterFor('policy', P, B, null).add(true, false);
    await reporter.flush();
    expect(reporter.stats()).toMatchObject({ pendingReports: 1, pendingRuns: 1, failures: 1 });
    up = true;
    await reporter.flush();
    expect(attempts.map((a) => a.reportId)).toEqual([attempts[0].reportId, attempts[0].reportId]);
    expect(reporter.stats()).toMatchObject({ pendingReports: 0, reportedRuns: 1 });
    await reporter.close(100);

    const refusing = new Reporter(async () => Promise.reject(new ArbiterError('validation_failed', 'bad')), 60_000, 10);
    refusing.counterFor('policy', P, B, null).add(true, false);
    await refusing.flush();
    expect(refusing.stats()).toMatchObject({ pendingReports: 0, droppedRuns: 1 });
    await refusing.close(100);
  });

  it('while the service is away, keeps at most maxPending reports (oldest dropped) and never blocks counting', async () => {
    const reporter = new Reporter(async () => Promise.reject(new ArbiterError('dependency_unavailable', 'down')), 60_000, 3);
    const counter = reporter.counterFor('policy', P, B, null);
    for (let window = 0; window < 5; window++) {
      for (let i = 0; i < 10; i++) counter.add(true, false);
      await reporter.flush();
    }
    expect(reporter.stats()).toMatchObject({ pendingReports: 3, pendingRuns: 30, droppedRuns: 20 });
    await reporter.close(50);
    expect(reporter.stats()).toMatchObject({ pendingReports: 0, droppedRuns: 50 });
  });
});
