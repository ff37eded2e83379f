/** `rules eval --bundle DIR --base ID`: a pulled policy run by base id, the version picked on its timeline as the service picks it. */

import { describe, expect, it } from 'vitest';
import { bundleToFiles, filesToBundle, type FileTree } from '../src/bundle-files.js';
import { pickPulled, pulledTimeline } from '../src/pulled-versions.js';
import { runCli, type CliIo } from '../src/run.js';

const BASE = '01a20911-4320-7270-9cc8-4886037e0df9';
const older = (years: number) => `A **driver** gets a licence if the __born__ of the **driver** is older than ${years} years.`;
const id = (n: number) => `01a20911-468a-77b2-9c35-00000000000${n}`;

function version(n: number, publishedAt: string, rule: string, extra: Record<string, unknown> = {}) {
  return {
    recordId: id(n),
    status: 'published',
    version: n,
    basedOnVersion: n === 1 ? null : n - 1,
    name: 'Licence',
    description: '',
    rule,
    definition: null,
    schema: null,
    tests: [],
    createdAt: publishedAt,
    createdBy: 'admin',
    updatedAt: publishedAt,
    updatedBy: 'admin',
    publishedAt,
    publishedBy: 'admin',
    ...extra,
  };
}

/**
 * v1 from 2018; v2 scheduled for 2019; v3 scheduled for mid-2019 and cancelled; v4 a rollback to
 * v1 in 2020; v5 published before "now" (2026-12-01) but scheduled for 2027.
 */
const RECORDS: Record<string, unknown>[] = [
  version(1, '2018-01-01T00:00:00.000Z', older(18)),
  version(2, '2018-03-01T00:00:00.000Z', older(21), { effectiveFrom: '2019-01-01T00:00:00.000Z' }),
  version(3, '2018-04-01T00:00:00.000Z', older(99), {
    effectiveFrom: '2019-06-01T00:00:00.000Z',
    cancelled: true,
    cancelledAt: '2018-05-01T00:00:00.000Z',
    cancelledBy: 'admin',
  }),
  version(4, '2020-01-01T00:00:00.000Z', older(18), { rollbackOf: 1 }),
  version(5, '2026-11-01T00:00:00.000Z', older(30), { effectiveFrom: '2027-01-01T00:00:00.000Z' }),
];

const bundle = (records: unknown[]) => ({
  format: 'arbiter-bundle',
  formatVersion: 1,
  orgId: 'acme',
  exportedAt: '2026-12-01T00:00:00.000Z',
  policies: [{ baseId: BASE, createdBy: 'admin', createdAt: '2018-01-01T00:00:00.000Z', latestVersion: 5, records }],
  flows: [],
  groups: [],
});

/** A CLI whose pulled directory is `tree`, whose data file is `data`, and whose clock reads 2026-12-01. */
function cli(tree: FileTree, data: unknown = { driver: { born: '2000-06-01' } }) {
  const out = { stdout: '', stderr: '', dirs: [] as string[] };
  const io: CliIo = {
    readFile: (path) => (path === 'data.json' ? Promise.resolve(JSON.stringify(data)) : Promise.reject(new Error('ENOENT: no such file'))),
    stdinLines: () => (async function* () {})(),
    stdout: (c) => void (out.stdout += c),
    stderr: (c) => void (out.stderr += c),
    remote: {
      fetch: () => Promise.reject(new Error('no network')),
      env: () => undefined,
      readTree: (dir) => {
        out.dirs.push(dir);
        return dir === 'rules' ? Promise.resolve(tree) : Promise.reject(new Error('ENOENT: no such directory'));
      },
      writeTree: () => Promise.reject(new Error('read only')),
      now: () => new Date('2026-12-01T00:00:00.000Z'),
    },
  };
  const run = async (...args: string[]) => {
    out.stdout = '';
    out.stderr = '';
    const code = await runCli(['eval', '--bundle', 'rules', '--base', BASE, '--data', 'data.json', '--no-trace', ...args], io);
    return { code, stdout: out.stdout, stderr: out.stderr, json: out.stdout === '' ? undefined : JSON.parse(out.stdout) };
  };
  return { run, io, out };
}

describe('the pulled files keep the timeline', () => {
  it('pull writes effectiveFrom, cancelled, cancelledAt, cancelledBy and rollbackOf into policy.json; push reads them back', () => {
    const files = bundleToFiles(bundle(RECORDS));
    const meta = JSON.parse(files.get('policies/licence-037e0df9/policy.json')!);
    expect(meta.records[1]).toMatchObject({ effectiveFrom: '2019-01-01T00:00:00.000Z', ruleFile: 'v2.rule' });
    expect(meta.records[2]).toMatchObject({ cancelled: true, cancelledAt: '2018-05-01T00:00:00.000Z', cancelledBy: 'admin' });
    expect(meta.records[3]).toMatchObject({ rollbackOf: 1 });
    const now = new Date('2026-12-02T00:00:00.000Z');
    expect(filesToBundle(files, now)).toEqual({ ...bundle(RECORDS), exportedAt: now.toISOString() });
  });
});

describe('pickPulled', () => {
  const at = (iso: string) => Date.parse(iso);
  const picked = (iso: string, records: Record<string, unknown>[] = RECORDS) => {
    const pick = pickPulled(records, at(iso));
    return 'record' in pick ? pick.record.version : pick;
  };

  it('picks the version in effect: schedules at their instant, cancelled ones never, rollbacks from their publish instant', () => {
    expect(pulledTimeline(RECORDS).map((e) => e.version)).toEqual([1, 2, 4, 5]);
    expect(picked('2018-06-15T00:00:00Z')).toBe(1);
    expect(picked('2018-12-31T23:59:59.999Z')).toBe(1);
    expect(picked('2019-01-01T00:00:00Z')).toBe(2);
    expect(picked('2019-07-01T00:00:00Z')).toBe(2);
    expect(picked('2020-01-01T00:00:00Z')).toBe(4);
    // published already, scheduled for later: the version before it still runs
    expect(picked('2026-12-01T00:00:00Z')).toBe(4);
    expect(picked('2027-01-01T00:00:00Z')).toBe(5);
  });

  it('before the first version: its instant; a base never published: its draft; bundles without timeline fields: publish instants', () => {
    expect(pickPulled(RECORDS, at('2017-12-31T00:00:00Z'))).toEqual({ before: at('2018-01-01T00:00:00Z') });
    const draft = { ...version(1, '2018-01-01T00:00:00.000Z', older(18)), status: 'draft', version: null, publishedAt: null };
    expect(pickPulled([draft], 0)).toEqual({ record: draft });
    expect(pickPulled([], 0)).toEqual({ none: true });
    const plain = RECORDS.map(({ effectiveFrom: _e, cancelled: _c, cancelledAt: _a, cancelledBy: _b, rollbackOf: _r, ...rest }) => rest);
    expect(picked('2026-12-01T00:00:00Z', plain)).toBe(5);
    expect(picked('2018-03-15T00:00:00Z', plain)).toBe(2);
  });
});

describe('rules eval --bundle DIR --base ID', () => {
  const tree = bundleToFiles(bundle(RECORDS));

  it('without --as-of or --now: the version in effect now, not a later one scheduled ahead', async () => {
    const { run } = cli(tree);
    const r = await run();
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.json).toMatchObject({ result: true, policyId: id(4), version: 4 });
  });

  it('--as-of: the version runnable then, evaluated with now = asOf unless --now is given', async () => {
    const { run } = cli(tree);
    // born 2000-06-01: older than 18 years on 2018-06-15, not yet on 2018-05-01
    expect((await run('--as-of', '2018-06-15T00:00:00Z')).json).toMatchObject({ result: true, version: 1 });
    expect((await run('--as-of', '2018-05-01')).json).toMatchObject({ result: false, version: 1 });
    expect((await run('--as-of', '2018-06-15T00:00:00Z', '--now', '2018-05-01T00:00:00Z')).json).toMatchObject({
      result: false,
      version: 1,
    });
    expect((await run('--as-of', '2019-07-01T00:00:00Z')).json).toMatchObject({ result: false, version: 2 });
    expect((await run('--as-of', '2020-02-01T00:00:00+01:00')).json).toMatchObject({ result: true, version: 4, policyId: id(4) });
  });

  it('--now alone: the version in effect at it, evaluated at it', async () => {
    const { run } = cli(tree);
    expect((await run('--now', '2027-01-01T00:00:00Z')).json).toMatchObject({ result: false, version: 5 });
    expect((await run('--now', '2018-06-15T00:00:00Z')).json).toMatchObject({ result: true, version: 1 });
  });

  it('a never-published base runs its draft', async () => {
    const draft = {
      ...version(1, '2018-01-01T00:00:00.000Z', older(18)),
      status: 'draft',
      version: null,
      publishedAt: null,
      publishedBy: null,
    };
    const { run } = cli(bundleToFiles({ ...bundle([draft]), policies: [{ ...bundle([draft]).policies[0]!, latestVersion: null }] }));
    expect((await run()).json).toMatchObject({ result: true, policyId: id(1), version: null });
  });

  it("checks the data against the picked version's schema first, as the service does: schema_mismatch, the rule unrun", async () => {
    const schema = {
      type: 'object',
      required: ['driver'],
      properties: { driver: { type: 'object', required: ['born'], properties: { born: { type: 'string' } } } },
    };
    const records = RECORDS.map((r) => (r.version === 4 ? { ...r, schema } : r));
    const { run } = cli(bundleToFiles(bundle(records)), { driver: { born: 2000 } });
    const r = await run();
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.json).toMatchObject({ result: false, errorCode: 'schema_mismatch', policyId: id(4), version: 4 });
    expect(r.json.error).toMatch(/^Schema mismatch: /);
    // version 1 has no schema: the rule runs (and reads a number where it wants a date)
    expect((await run('--as-of', '2018-06-15T00:00:00Z')).json.errorCode).not.toBe('schema_mismatch');
  });

  it('before the first version: exit 2 naming its instant, nothing printed on stdout', async () => {
    const { run } = cli(tree);
    const r = await run('--as-of', '2017-12-31T00:00:00Z');
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      `rules eval: policy \`${BASE}\` has no version in effect at 2017-12-31T00:00:00.000Z: its first takes effect at 2018-01-01T00:00:00.000Z\n`,
    );
  });

  it('unhappy paths: bad ISO, missing --base or --bundle, --rule or --jsonl beside it, a base not pulled, an unreadable directory', async () => {
    const { run, io, out } = cli(tree);
    const bad = await run('--as-of', 'last tuesday');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^rules eval: --as-of: `last tuesday` is not an ISO 8601 date/);
    expect(bad.stderr).toContain('Usage: rules eval');
    expect((await run('--now', '2026-13-45')).stderr).toMatch(/--now: `2026-13-45` is not an ISO 8601/);
    expect((await run('--rule', 'x.rules')).stderr).toContain('--rule does not apply to --bundle');
    expect((await run('--jsonl')).stderr).toContain('--jsonl reads rules from stdin');

    const usage = async (args: string[]) => {
      out.stderr = '';
      return [await runCli(['eval', ...args], io), out.stderr] as const;
    };
    expect(await usage(['--bundle', 'rules', '--data', 'data.json'])).toEqual([2, expect.stringContaining('missing --base ID')]);
    expect(await usage(['--base', BASE, '--data', 'data.json'])).toEqual([2, expect.stringContaining('need --bundle DIR')]);
    expect(await usage(['--rule', 'x', '--data', 'data.json', '--as-of', '2020-01-01'])).toEqual([
      2,
      expect.stringContaining('need --bundle DIR'),
    ]);
    expect(await usage(['--bundle', 'rules', '--base', BASE])).toEqual([2, expect.stringContaining('missing --data FILE')]);

    const other = await usage(['--bundle', 'rules', '--base', '01a20911-0000-7000-8000-000000000000', '--data', 'data.json']);
    expect(other).toEqual([
      2,
      'rules eval: `01a20911-0000-7000-8000-000000000000` is neither a policy nor a flow of the pulled directory `rules`\n',
    ]);
    const missing = await usage(['--bundle', 'elsewhere', '--base', BASE, '--data', 'data.json']);
    expect(missing).toEqual([2, 'rules eval: cannot read the pulled directory `elsewhere`: ENOENT: no such directory\n']);
    const noData = await usage(['--bundle', 'rules', '--base', BASE, '--data', 'nope.json']);
    expect(noData[0]).toBe(2);
    expect(noData[1]).toContain('cannot read data file `nope.json`');
  });
});

describe('rules eval --bundle DIR --base ID of a flow', () => {
  const FLOW = '01a20911-4320-7270-9cc8-48860000f10a';
  const flowId = (n: number) => `01a20911-468a-77b2-9c35-0000000f100${n}`;
  /** Follows the licence base: true or false. */
  const following = {
    start: 'check',
    nodes: {
      check: { type: 'policy', baseId: BASE, onTrue: 'yes', onFalse: 'no' },
      yes: { type: 'return', value: true },
      no: { type: 'return', value: false },
    },
  };
  /** Pins the licence's version 1, then a table on the data's `class`. */
  const pinned = {
    start: 'check',
    nodes: {
      check: { type: 'policy', baseId: BASE, version: 1, onTrue: 'fee', onFalse: 'no' },
      fee: {
        type: 'table',
        hitPolicy: 'first',
        inputs: [{ name: 'class', path: 'driver.class' }],
        outputs: [{ name: 'fee' }],
        rules: [
          { when: ['"B"'], then: { fee: 40 } },
          { when: ['-'], then: { fee: 90 } },
        ],
      },
      no: { type: 'return', value: false },
    },
  };
  const flowVersion = (n: number, publishedAt: string, definition: unknown, extra: Record<string, unknown> = {}) => ({
    ...version(n, publishedAt, ''),
    recordId: flowId(n),
    name: 'Licence flow',
    rule: null,
    definition,
    ...extra,
  });
  const withFlow = (records: unknown[]) => ({
    ...bundle(RECORDS),
    flows: [{ baseId: FLOW, createdBy: 'admin', createdAt: '2018-01-01T00:00:00.000Z', latestVersion: records.length, records }],
  });
  const tree = bundleToFiles(
    withFlow([
      flowVersion(1, '2018-02-01T00:00:00.000Z', following),
      flowVersion(2, '2026-11-15T00:00:00.000Z', pinned, { effectiveFrom: '2027-01-01T00:00:00.000Z' }),
    ]),
  );
  const runFlowCli = (files: FileTree, data?: unknown) => {
    const { io, out } = cli(files, data);
    return async (...args: string[]) => {
      out.stdout = '';
      out.stderr = '';
      const code = await runCli(['eval', '--bundle', 'rules', '--base', FLOW, '--data', 'data.json', '--no-trace', ...args], io);
      return { code, stdout: out.stdout, stderr: out.stderr, json: out.stdout === '' ? undefined : JSON.parse(out.stdout) };
    };
  };

  it("runs the flow version in effect, a node following a base on that base's version in effect at the same instant", async () => {
    const run = runFlowCli(tree);
    const now = await run();
    expect([now.code, now.stderr]).toEqual([0, '']);
    expect(now.json).toMatchObject({ result: true, flowId: flowId(1), baseId: FLOW, version: 1 });
    expect(now.json.path[0]).toMatchObject({ nodeId: 'check', policyId: id(4), version: 4, result: true });
    // mid-2019 the licence base ran version 2 (older than 21): the same flow version refuses
    const then = await run('--as-of', '2019-07-01T00:00:00Z');
    expect(then.json).toMatchObject({ result: false, version: 1 });
    expect(then.json.path[0]).toMatchObject({ policyId: id(2), version: 2, result: false });
  });

  it('a flow version scheduled ahead runs from its instant: a pinned policy version and a table node', async () => {
    const run = runFlowCli(tree, { driver: { born: '2000-06-01', class: 'B' } });
    const later = await run('--now', '2027-01-02T00:00:00Z');
    expect([later.code, later.stderr]).toEqual([0, '']);
    expect(later.json).toMatchObject({ result: { fee: 40 }, flowId: flowId(2), version: 2 });
    expect(later.json.path.map((p: { nodeId: string; policyId?: string }) => [p.nodeId, p.policyId])).toEqual([
      ['check', id(1)],
      ['fee', undefined],
    ]);
    expect((await run('--now', '2026-12-31T23:59:59Z')).json).toMatchObject({ result: true, version: 1 });
  });

  it('answers with the trace unless --no-trace, as the service does', async () => {
    const { io, out } = cli(tree);
    expect(await runCli(['eval', '--bundle', 'rules', '--base', FLOW, '--data', 'data.json'], io)).toBe(0);
    const traced = JSON.parse(out.stdout);
    expect(traced.nodes[0].trace.length).toBeGreaterThan(0);
  });

  it("a policy node checks the data against its record's schema first: the node answers schema_mismatch", async () => {
    const schema = { type: 'object', required: ['driver'], properties: { driver: { type: 'object', required: ['licence'] } } };
    const files = bundleToFiles({
      ...withFlow([flowVersion(1, '2018-02-01T00:00:00.000Z', following)]),
      policies: bundle(RECORDS.map((r) => (r.version === 4 ? { ...r, schema } : r))).policies,
    });
    const r = await runFlowCli(files)();
    expect(r.json.nodes[0]).toMatchObject({ nodeId: 'check', errorCode: 'schema_mismatch' });
    expect(r.json).toMatchObject({ result: false, errorCode: 'schema_mismatch' });
  });

  it('a node whose policy is not pulled stops the flow: its answer with policy_not_found, exit 1', async () => {
    const missing = {
      ...following,
      nodes: { ...following.nodes, check: { ...following.nodes.check, baseId: '01a20911-0000-7000-8000-0000000000ff' } },
    };
    const run = runFlowCli(bundleToFiles(withFlow([flowVersion(1, '2018-02-01T00:00:00.000Z', missing)])));
    const r = await run();
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ result: false, errorCode: 'policy_not_found', flowId: flowId(1), version: 1 });
    expect(r.stderr).toBe(`error policy_not_found: ${r.json.error}\n`);
    expect(r.json.error).toContain('01a20911-0000-7000-8000-0000000000ff');
  });

  it('before its first version: exit 2 naming the instant; a definition that is not one: exit 2', async () => {
    const run = runFlowCli(tree);
    const early = await run('--as-of', '2018-01-15T00:00:00Z');
    expect([early.code, early.stdout]).toEqual([2, '']);
    expect(early.stderr).toBe(
      `rules eval: flow \`${FLOW}\` has no version in effect at 2018-01-15T00:00:00.000Z: its first takes effect at 2018-02-01T00:00:00.000Z\n`,
    );
    const broken = runFlowCli(bundleToFiles(withFlow([flowVersion(1, '2018-02-01T00:00:00.000Z', { start: 'nowhere' })])));
    const r = await broken();
    expect([r.code, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toBe(
      `rules eval: flow \`${FLOW}\` (version 1): not a valid flow definition at \`nodes\`: Invalid input: expected record, received undefined\n`,
    );
  });
});
