/** `rules test FLOW.json`: a pulled flow's cases and coverage, its policy nodes found in the pulled directory. */

import { describe, expect, it } from 'vitest';
import { bundleToFiles, type FileTree } from '../src/bundle-files.js';
import { runCli, type CliIo } from '../src/run.js';

const POLICY_ID = '11111111-1111-4111-8111-111111111111';
const FLOW_ID = '22222222-2222-4222-8222-222222222222';
const AT = '2026-01-01T00:00:00.000Z';

function record(fields: Record<string, unknown>) {
  return {
    recordId: fields.recordId,
    status: fields.version === null ? 'draft' : 'published',
    version: fields.version,
    basedOnVersion: null,
    name: 'n',
    description: '',
    rule: null,
    definition: null,
    schema: null,
    tests: [],
    createdAt: AT,
    createdBy: 'u',
    updatedAt: AT,
    updatedBy: 'u',
    publishedAt: fields.version === null ? null : AT,
    publishedBy: fields.version === null ? null : 'u',
    ...fields,
  };
}

/** Adults (18, version 1; 21 in version 2) go to the table; the table's tier routes gold to a return. */
function definition(pinned?: number) {
  return {
    start: 'adult',
    nodes: {
      adult: { type: 'policy', baseId: POLICY_ID, ...(pinned !== undefined && { version: pinned }), onTrue: 'tier', onFalse: 'minor' },
      tier: {
        type: 'table',
        hitPolicy: 'first',
        inputs: [{ name: 'country', path: 'applicant.country' }],
        outputs: [{ name: 'tier' }],
        rules: [
          { when: ['is in ["NL", "BE"]'], then: { tier: 'gold' } },
          { when: ['is in ["DE"]'], then: { tier: 'silver' } },
          { when: ['-'], then: { tier: 'basic' } },
        ],
        routeOn: 'tier',
        routes: { gold: 'fast' },
        default: 'review',
      },
      fast: { type: 'return', value: true },
      review: { type: 'custom', outcome: 'manual review' },
      minor: { type: 'return', value: false },
    },
  };
}

const adult = (min: number) => `An **applicant** is an adult if the __age__ of the **applicant** is at least ${min}.`;

function pulled(flowTests: unknown[], draftDefinition = definition()): FileTree {
  return bundleToFiles({
    format: 'arbiter-bundle',
    formatVersion: 1,
    orgId: 'org',
    exportedAt: AT,
    policies: [
      {
        baseId: POLICY_ID,
        createdBy: 'u',
        createdAt: AT,
        latestVersion: 2,
        records: [
          record({ recordId: '33333333-3333-4333-8333-333333333331', version: 1, rule: adult(18) }),
          record({ recordId: '33333333-3333-4333-8333-333333333332', version: 2, rule: adult(21) }),
        ],
      },
    ],
    flows: [
      {
        baseId: FLOW_ID,
        createdBy: 'u',
        createdAt: AT,
        latestVersion: 1,
        records: [
          record({ recordId: '44444444-4444-4444-8444-444444444441', version: 1, definition: definition(1), tests: [] }),
          record({ recordId: '44444444-4444-4444-8444-444444444442', version: null, definition: draftDefinition, tests: flowTests }),
        ],
      },
    ],
    groups: [],
  });
}

function io(tree: FileTree, dir: string, extra: Record<string, string> = {}) {
  const out = { stdout: '', stderr: '' };
  const files = new Map([...tree].map(([p, t]) => [`${dir}/${p}`, t]));
  const cli: CliIo = {
    readFile: async (p) => {
      const text = extra[p] ?? files.get(p);
      if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${p}'`);
      return text;
    },
    stdinLines: async function* () {},
    stdout: (c) => void (out.stdout += c),
    stderr: (c) => void (out.stderr += c),
    remote: {
      fetch: () => Promise.reject(new Error('no network in this test')),
      env: () => undefined,
      readTree: async (d) => {
        if (d !== dir) throw new Error(`ENOENT: ${d}`);
        return tree;
      },
      writeTree: () => Promise.reject(new Error('read-only')),
      now: () => new Date(AT),
    },
  };
  return { cli, out };
}

const flowPath = (tree: FileTree) => [...tree.keys()].find((p) => p.endsWith('/flow.json'))!;

const cases = [
  { name: 'dutch adult', data: { applicant: { age: 30, country: 'NL' } }, expect: true },
  { name: 'german adult', data: { applicant: { age: 30, country: 'DE' } }, expect: 'manual review' },
  { name: 'minor', data: { applicant: { age: 19, country: 'NL' } }, expect: false },
];

describe('rules test FLOW.json', () => {
  it("runs the draft's saved tests, its policy node on the latest version, and prints the coverage of rows and edges", async () => {
    const tree = pulled(cases);
    const { cli, out } = io(tree, 'rules');
    expect(await runCli(['test', `rules/${flowPath(tree)}`, '--coverage'], cli)).toBe(0);
    expect(out.stderr).toBe('');
    // age 19 is not at least 21 (version 2, the latest): a minor.
    expect(out.stdout.split('\n')).toEqual([
      '✓ dutch adult',
      '✓ german adult',
      '✓ minor',
      '3 passed, 0 failed',
      'coverage: rows 2/3, edges 4/4, 85.7 %',
      '  node tier, row 3: - (never matched)',
      '',
    ]);
  });

  it('tests a pinned version with --version (its node pins policy version 1), with cases from a file, and fails below --min', async () => {
    const tree = pulled([]);
    const { cli, out } = io(tree, 'rules', { 'c.json': JSON.stringify(cases) });
    const code = await runCli(
      ['test', `rules/${flowPath(tree)}`, '--version', '1', '--cases', 'c.json', '--coverage', '--min', '90', '--json'],
      cli,
    );
    expect(code).toBe(1);
    const doc = JSON.parse(out.stdout);
    expect(doc.tested).toBe('version 1');
    // Version 1 of the policy: 19 is at least 18, so the "minor" case fails.
    expect(doc.cases.map((c: { name: string; passed: boolean }) => [c.name, c.passed])).toEqual([
      ['dutch adult', true],
      ['german adult', true],
      ['minor', false],
    ]);
    expect(doc.coverage.summary).toMatchObject({ rows: { total: 3, covered: 2 }, edges: { total: 4, covered: 3 } });
    expect(doc.minCoverage).toBe(90);
  });

  it('runs a bare definition with --bundle, and a node whose policy is not there fails the runs that reach it', async () => {
    const tree = pulled([]);
    const other = { ...definition(), nodes: { ...definition().nodes, adult: { ...definition().nodes.adult, baseId: FLOW_ID } } };
    const { cli, out } = io(tree, 'pulled', { 'flow.json': JSON.stringify(other), 'c.json': JSON.stringify(cases.slice(0, 1)) });
    expect(await runCli(['test', 'flow.json', '--bundle', 'pulled', '--cases', 'c.json'], cli)).toBe(1);
    expect(out.stdout).toContain(`✗ dutch adult: expected true, got error unknown_policy: `);
    expect(out.stdout).toContain(`policy \`${FLOW_ID}\` is not in the pulled directory`);
  });

  it.each([
    [['test', 'rules/flows/x/flow.json', '--version', '0'], /--version must be a version number/],
    [['test', 'r.rule', '--bundle', 'rules', '--cases', 'c.json'], /--bundle and --version apply to a flow/],
    [['test', 'missing.json', '--cases', 'c.json'], /cannot read flow file `missing.json`/],
  ])('%j is a usage error (exit 2)', async (argv, message) => {
    const { cli, out } = io(pulled([]), 'rules');
    expect(await runCli(argv, cli)).toBe(2);
    expect(out.stderr).toMatch(message);
  });

  it('refuses malformed flow files and cases with exit 2, naming what is wrong', async () => {
    const tree = pulled([]);
    const path = `rules/${flowPath(tree)}`;
    const { cli, out } = io(tree, 'rules', {
      'bad-def.json': JSON.stringify({ start: 'a', nodes: { a: { type: 'frob' } } }),
      'c.json': JSON.stringify([{ name: 'x', data: {}, expect: { not: ['a', 'table output'] } }]),
    });
    expect(await runCli(['test', 'bad-def.json', '--cases', 'c.json'], cli)).toBe(2);
    expect(out.stderr).toMatch(/^rules test: bad-def\.json: not a valid flow definition at `nodes\.a/);
    out.stderr = '';
    expect(await runCli(['test', path, '--cases', 'c.json'], cli)).toBe(2);
    expect(out.stderr).toMatch(/case 1 \(`x`\): `expect` must be the flow's result/);
    out.stderr = '';
    expect(await runCli(['test', path, '--version', '7'], cli)).toBe(2);
    expect(out.stderr).toMatch(/the flow has no version 7/);
  });
});
