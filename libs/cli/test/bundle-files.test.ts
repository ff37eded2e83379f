/** `rules pull` / `rules push`: the mapping between a bundle and its files, and the commands over a stand-in gateway. */

import { describe, expect, it } from 'vitest';
import { BundleFileError, baseDirName, bundleToFiles, filesToBundle, stableJson, type FileTree } from '../src/bundle-files.js';
import { runCli, type CliIo } from '../src/run.js';
import type { RemoteIo } from '../src/sync.js';

const POLICY_BASE = '01a20911-4320-7270-9cc8-4886037e0df9';
const FLOW_BASE = '01a20911-5555-7270-9cc8-aaaabbbbcccc';
const record = (over: Record<string, unknown>) => ({
  recordId: '01a20911-468a-77b2-9c35-0f7a33870453',
  status: 'published',
  version: 1,
  basedOnVersion: null,
  name: 'Driving licence',
  description: '',
  rule: 'A **driver** gets a licence if the __age__ of the **driver** is at least 17.',
  definition: null,
  schema: null,
  tests: [{ name: 'adult', data: { driver: { age: 18 } }, expect: true }],
  createdAt: '2026-11-23T15:40:56.842Z',
  createdBy: 'admin',
  updatedAt: '2026-11-23T15:40:56.894Z',
  updatedBy: 'admin',
  publishedAt: '2026-11-23T15:40:56.894Z',
  publishedBy: 'admin',
  ...over,
});
const BUNDLE = {
  format: 'arbiter-bundle',
  formatVersion: 1,
  orgId: 'acme',
  exportedAt: '2026-11-23T16:00:00.000Z',
  policies: [
    {
      baseId: POLICY_BASE,
      createdBy: 'admin',
      createdAt: '2026-11-23T15:40:56.842Z',
      latestVersion: 2,
      records: [
        record({}),
        record({
          recordId: '01a20911-468a-77b2-9c35-000000000002',
          version: 2,
          basedOnVersion: 1,
          rule: 'A **x** is ok if the __y__ of the **x** is 1.',
        }),
        record({
          recordId: '01a20911-468a-77b2-9c35-000000000003',
          status: 'draft',
          version: null,
          publishedAt: null,
          publishedBy: null,
          rule: 'no newline at the end\n',
        }),
      ],
    },
  ],
  flows: [
    {
      baseId: FLOW_BASE,
      createdBy: 'admin',
      createdAt: '2026-11-23T15:40:56.842Z',
      latestVersion: null,
      records: [
        record({
          recordId: '01a20911-468a-77b2-9c35-000000000009',
          name: 'Route / check!',
          status: 'draft',
          version: null,
          publishedAt: null,
          publishedBy: null,
          rule: null,
          definition: {
            start: 'a',
            nodes: { a: { type: 'policy', baseId: POLICY_BASE, onTrue: 'y', onFalse: 'y' }, y: { type: 'return', value: true } },
          },
        }),
      ],
    },
  ],
  groups: [
    {
      groupId: '01a20911-0000-7000-8000-000000000002',
      name: 'zeta',
      description: '',
      createdBy: 'admin',
      createdAt: '2026-11-23T15:40:56.842Z',
      members: [],
    },
    {
      groupId: '01a20911-0000-7000-8000-000000000001',
      name: 'alpha',
      description: '',
      createdBy: 'admin',
      createdAt: '2026-11-23T15:40:56.842Z',
      members: [{ memberId: POLICY_BASE, memberType: 'policy' }],
    },
  ],
};

describe('bundleToFiles / filesToBundle', () => {
  it('writes one directory per base, one .rule file per version and the draft, sorted JSON; reads back the same bundle', () => {
    const files = bundleToFiles(BUNDLE);
    expect([...files.keys()].sort()).toEqual([
      'arbiter-bundle.json',
      'flows/route-check-bbbbcccc/flow.json',
      'groups.json',
      'policies/driving-licence-037e0df9/draft.rule',
      'policies/driving-licence-037e0df9/policy.json',
      'policies/driving-licence-037e0df9/v1.rule',
      'policies/driving-licence-037e0df9/v2.rule',
    ]);
    expect(files.get('arbiter-bundle.json')).toBe('{\n  "format": "arbiter-bundle",\n  "formatVersion": 1,\n  "orgId": "acme"\n}\n');
    expect(files.get('policies/driving-licence-037e0df9/v1.rule')).toBe(`${BUNDLE.policies[0]!.records[0]!.rule}\n`);
    const meta = JSON.parse(files.get('policies/driving-licence-037e0df9/policy.json')!);
    expect(meta.records.map((r: { ruleFile: string }) => r.ruleFile)).toEqual(['v1.rule', 'v2.rule', 'draft.rule']);
    expect(meta.records[0]).not.toHaveProperty('rule');
    expect(JSON.parse(files.get('groups.json')!).map((g: { name: string }) => g.name)).toEqual(['alpha', 'zeta']);

    const now = new Date('2026-12-01T00:00:00.000Z');
    const back = filesToBundle(files, now);
    expect(back).toEqual({ ...BUNDLE, exportedAt: now.toISOString(), groups: [BUNDLE.groups[1], BUNDLE.groups[0]] });
  });

  it('a second pull of the same bundle writes byte-identical files (nothing to diff)', () => {
    const a = bundleToFiles(BUNDLE);
    const b = bundleToFiles(JSON.parse(JSON.stringify({ ...BUNDLE, exportedAt: '2027-01-01T00:00:00.000Z' })));
    expect(b).toEqual(a);
  });

  it('names directories after the current name and the end of the base id', () => {
    expect(baseDirName('Élan: Vital??', 'abcdef01-2345-7000-8000-0123456789ab')).toBe('elan-vital-456789ab');
    expect(baseDirName('***', 'abcdef01-2345-7000-8000-0123456789ab')).toBe('unnamed-456789ab');
    expect(baseDirName('x'.repeat(200), 'abcdef01-2345-7000-8000-0123456789ab')).toHaveLength(50 + 9);
  });

  it('sorts keys at every level', () => {
    expect(stableJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{\n  "a": {\n    "c": null,\n    "d": [\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n',
    );
  });

  it('refuses files that cannot be reassembled, naming the file', () => {
    const files = bundleToFiles(BUNDLE);
    const missingRule: FileTree = new Map(files);
    missingRule.delete('policies/driving-licence-037e0df9/v2.rule');
    expect(() => filesToBundle(missingRule, new Date())).toThrow(
      new BundleFileError('policies/driving-licence-037e0df9/v2.rule is missing'),
    );
    const escaping: FileTree = new Map(files);
    escaping.set('policies/driving-licence-037e0df9/policy.json', JSON.stringify({ records: [{ ruleFile: '../../etc/passwd' }] }));
    expect(() => filesToBundle(escaping, new Date())).toThrow(/ruleFile/);
    const badJson: FileTree = new Map(files);
    badJson.set('flows/route-check-bbbbcccc/flow.json', '{');
    expect(() => filesToBundle(badJson, new Date())).toThrow(/flows\/route-check-bbbbcccc\/flow.json: not valid JSON/);
    expect(() => filesToBundle(new Map(), new Date())).toThrow(/arbiter-bundle.json is missing/);
    expect(() => bundleToFiles({ nope: true })).toThrow(BundleFileError);
  });
});

/** A CLI whose gateway answers `answer` and whose directory is an in-memory tree. */
function cliWith(answer: (url: string, init: { method: string; headers: Record<string, string>; body?: string }) => Response) {
  const out = {
    stdout: '',
    stderr: '',
    tree: new Map() as FileTree,
    calls: [] as Array<{ url: string; headers: Record<string, string>; body?: string }>,
  };
  const remote: RemoteIo = {
    fetch: (url, init) => {
      out.calls.push({ url, headers: init.headers, ...(init.body !== undefined ? { body: init.body } : {}) });
      return Promise.resolve(answer(url, init));
    },
    env: (name) => (name === 'ARBITER_API_KEY' ? 'arb_from_env' : undefined),
    readTree: () => Promise.resolve(out.tree),
    writeTree: (_dir, files) => {
      out.tree = files;
      return Promise.resolve();
    },
    now: () => new Date('2026-12-01T00:00:00.000Z'),
  };
  const io: CliIo = {
    readFile: () => Promise.reject(new Error('no files')),
    stdinLines: () => (async function* () {})(),
    stdout: (c) => void (out.stdout += c),
    stderr: (c) => void (out.stderr += c),
    remote,
  };
  return { io, out };
}

const json = (status: number, body: unknown, type = 'application/json') =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': type } });

describe('rules pull / push against a stand-in gateway', () => {
  it('pull sends the key from the environment, writes the files, and never prints the key', async () => {
    const { io, out } = cliWith(() => json(200, BUNDLE));
    expect(await runCli(['pull', '--url', 'http://gw.example/'], io)).toBe(0);
    expect(out.calls[0]).toMatchObject({ url: 'http://gw.example/export', headers: { 'x-api-key': 'arb_from_env' } });
    expect(out.tree.has('policies/driving-licence-037e0df9/v1.rule')).toBe(true);
    expect(out.stdout).toBe('pulled 1 policies and 1 flows into rules\n');
    expect(out.stdout + out.stderr).not.toContain('arb_from_env');
  });

  it('push --dry-run posts the reassembled bundle and prints the plan; a conflict exits 1', async () => {
    const plan = {
      dryRun: true,
      created: 1,
      unchanged: 0,
      conflicts: 1,
      items: [
        { type: 'policy', name: 'Driving licence', sourceId: POLICY_BASE, action: 'create', targetId: null },
        {
          type: 'flow',
          name: 'Route / check!',
          sourceId: FLOW_BASE,
          action: 'conflict',
          targetId: null,
          reason: 'a live flow named "Route / check!" exists',
        },
      ],
    };
    const { io, out } = cliWith(() => json(200, plan));
    out.tree = bundleToFiles(BUNDLE);
    expect(await runCli(['push', '--url', 'http://gw.example', '--key', 'arb_given', '--dry-run'], io)).toBe(1);
    expect(out.calls[0]!.url).toBe('http://gw.example/import?dryRun=true');
    expect(out.calls[0]!.headers['x-api-key']).toBe('arb_given');
    expect(JSON.parse(out.calls[0]!.body!)).toEqual({
      ...BUNDLE,
      exportedAt: '2026-12-01T00:00:00.000Z',
      groups: [BUNDLE.groups[1], BUNDLE.groups[0]],
    });
    expect(out.stdout).toBe(
      'create     policy  Driving licence\n' +
        'conflict   flow    Route / check!  (a live flow named "Route / check!" exists)\n' +
        'dry run: 1 to create, 0 unchanged, 1 conflicts\n',
    );
  });

  it('prints the detail, status, code and reasons of a problem and exits 1', async () => {
    const problem = {
      type: 'urn:x',
      title: 'Conflict',
      status: 409,
      detail: 'the bundle conflicts',
      errors: [{ code: 'import_conflict', message: 'policy "a": taken', path: POLICY_BASE }],
    };
    const { io, out } = cliWith(() => json(409, problem, 'application/problem+json'));
    out.tree = bundleToFiles(BUNDLE);
    expect(await runCli(['push', '--url', 'http://gw.example', '--key', 'arb_secret'], io)).toBe(1);
    expect(out.stderr).toBe(`rules push: the bundle conflicts (HTTP 409 conflict)\n  - policy "a": taken (${POLICY_BASE})\n`);
    expect(out.stderr).not.toContain('arb_secret');
  });

  it('usage errors: no --url, no key, a bad URL', async () => {
    const { io, out } = cliWith(() => json(200, BUNDLE));
    expect(await runCli(['pull'], io)).toBe(2);
    expect(out.stderr).toContain('missing --url');
    const noEnv = cliWith(() => json(200, BUNDLE));
    noEnv.io.remote!.env = () => undefined;
    expect(await runCli(['pull', '--url', 'http://gw.example'], noEnv.io)).toBe(2);
    expect(noEnv.out.stderr).toContain('ARBITER_API_KEY');
    expect(await runCli(['pull', '--url', 'gw.example', '--key', 'k'], io)).toBe(2);
  });
});
