/**
 * docs/getting-started.md and the README's curl session stay true: their `sh` blocks run, in
 * order, against one freshly started stack with `npm start`'s defaults (org `default`, user `admin`,
 * no bearer tokens) — the README's first, then getting-started's in the same org, as a newcomer
 * does — and what each command prints must have the shape written under it. The two values a
 * reader copies from `npm start`'s output — `B=` and `ADMIN_KEY=` on `export` lines — are this
 * stack's; every other variable must be set by a command of the document. The org they leave then
 * round-trips: its export imports whole into an empty org.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type Stack } from './harness.js';
import { matchesShape, runSteps, shellSteps, type Step } from './docs-walk.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DOC = 'docs/getting-started.md';

/** Where the walk runs: inside the clone (so `npm run admin` finds the root package), git-ignored. */
function workDir(): string {
  const dir = path.join(root, 'tmp', `getting-started-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The reader's two settings from `npm start`'s output, on `export` lines, replaced by this stack's. */
function withStack(doc: string, steps: readonly Step[], stack: Pick<Stack, 'baseUrl' | 'adminKey'>): Step[] {
  const seen = { B: false, ADMIN_KEY: false };
  const settle = (line: string) =>
    line.startsWith('export ')
      ? line
          .replace(/\bB=\S+/, () => ((seen.B = true), `B=${stack.baseUrl}`))
          .replace(/\bADMIN_KEY=\S+/, () => ((seen.ADMIN_KEY = true), `ADMIN_KEY=${stack.adminKey}`))
      : line;
  const out = steps.map((s) => ({ ...s, command: s.command.split('\n').map(settle).join('\n') }));
  if (!seen.B || !seen.ADMIN_KEY) throw new Error(`${doc} must set \`B=…\` and \`ADMIN_KEY=…\` on \`export\` lines`);
  return out;
}

const bashEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => ({
  ...process.env,
  ...extra,
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
});

describe('the walk-through runner', () => {
  it('splits sh blocks into commands and the shapes under them, leaving prose comments and other blocks out', () => {
    const md = [
      '```sh',
      '# prose before a command',
      'echo one   # a trailing remark',
      '# one',
      'echo two \\',
      '  three',
      '',
      '# prose after a blank line',
      'echo four',
      '```',
      '```console',
      '$ npm start',
      '```',
    ].join('\n');
    expect(shellSteps(md)).toEqual([
      { block: 1, command: 'echo one   # a trailing remark', shape: 'one' },
      { block: 1, command: 'echo two \\\n  three' },
      { block: 1, command: 'echo four' },
    ]);
  });

  it('matches shapes with … as anything and loose whitespace, and nothing else', () => {
    expect(matchesShape('{"result":true,…,"version":1}', '{"result":true,"trace":["a"],"version":1}')).toBe(true);
    expect(matchesShape('{"a":1,\n   "b":2}', '{"a":1,"b":2}\n')).toBe(true);
    expect(matchesShape('{"result":true,…}', '{"result":false,"trace":[]}')).toBe(false);
    expect(matchesShape('{"result":true}', '{"result":true,"extra":1}')).toBe(false);
    expect(matchesShape('a.b', 'axb')).toBe(false);
  });

  it('stops at a step that needs a variable nobody set, and at a failing command', async () => {
    const dir = workDir();
    try {
      const env = bashEnv({});
      const unset = await runSteps(shellSteps('```sh\necho ok\n# ok\necho "$NOBODY_SET_THIS"\necho never\n```'), { cwd: dir, env });
      expect(unset.exitCode).not.toBe(0);
      expect(unset.failedStep).toBe(1);
      expect(unset.outputs).toEqual(['ok\n']);
      expect(unset.stderr).toContain('NOBODY_SET_THIS');
      const failing = await runSteps(shellSteps('```sh\nfalse | cat\n\necho never\n```'), { cwd: dir, env });
      expect(failing.failedStep).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** npm start's defaults: the bootstrap org is `default` and bearer tokens are off. */
const NPM_START_DEFAULTS = { POLICY_BOOTSTRAP_ORG: 'default', AUTH_JWT_SECRET: '', AUTH_ISSUER: '', AUTH_AUDIENCE: '' };

/** Runs `doc`'s sh blocks against `stack` in a fresh directory; fails naming the step that stopped or every shape that did not match. */
async function walkDocument(doc: string, stack: Stack, minSteps: number): Promise<void> {
  const steps = withStack(doc, shellSteps(readFileSync(path.join(root, doc), 'utf8')), stack);
  expect(steps.length).toBeGreaterThanOrEqual(minSteps);
  const dir = workDir();
  try {
    const walk = await runSteps(steps, { cwd: dir, env: bashEnv(stack.env), timeoutMs: 180_000 });
    if (walk.failedStep !== undefined) {
      const step = steps[walk.failedStep]!;
      expect.fail(
        `${doc}: step ${walk.failedStep + 1} (sh block ${step.block}) exited with ${walk.exitCode}:\n${step.command}\n--- printed ---\n` +
          `${walk.failedOutput ?? ''}\n--- stderr ---\n${walk.stderr.slice(-2000)}`,
      );
    }
    const mismatches = steps.flatMap((step, i) =>
      step.shape !== undefined && !matchesShape(step.shape, walk.outputs[i]!)
        ? [
            `${doc}, sh block ${step.block}:\n${step.command}\n--- expected the shape ---\n${step.shape}\n--- printed ---\n${walk.outputs[i]}`,
          ]
        : [],
    );
    expect(mismatches.join('\n\n')).toBe('');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A bundle's bases without ids: each flow node names its policy by place in the bundle (`policies.1`, `policies.1.records.0`). */
function contentOf(bundle: any): unknown {
  const places = new Map<string, string>();
  bundle.policies.forEach((b: any, i: number) => {
    places.set(b.baseId, `policies.${i}`);
    b.records.forEach((r: any, j: number) => places.set(r.recordId, `policies.${i}.records.${j}`));
  });
  const record = ({ recordId: _recordId, definition, ...rest }: any) => ({
    ...rest,
    definition:
      definition === null
        ? null
        : {
            start: definition.start,
            nodes: Object.fromEntries(
              Object.entries(definition.nodes).map(([id, node]: [string, any]) => [
                id,
                {
                  ...node,
                  ...(node.baseId !== undefined ? { baseId: places.get(node.baseId) ?? 'elsewhere' } : {}),
                  ...(node.policyId !== undefined ? { policyId: places.get(node.policyId) ?? 'elsewhere' } : {}),
                },
              ]),
            ),
          },
  });
  const base = ({ latestVersion, createdAt, records }: any) => ({ latestVersion, createdAt, records: records.map(record) });
  return { policies: bundle.policies.map(base), flows: bundle.flows.map(base), groups: bundle.groups.length };
}

describe('README.md, then docs/getting-started.md in the same org', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({
      services: ['execution', 'registry', 'governance', 'audit', 'webhooks', 'mcp', 'gateway'],
      env: NPM_START_DEFAULTS,
    });
  });
  afterAll(async () => stack?.stop());

  it('runs the ten lines of curl on a fresh stack, each output of the shape shown', async () => {
    await walkDocument('README.md', stack, 3);
  });

  it('runs every shell block of getting-started after them, to a governed publish by two users, each output of the shape shown', async () => {
    await walkDocument(DOC, stack, 40);
  });

  it('round-trips the org they leave: its export, with two policies named "Driving licence", imports whole into an empty org', async () => {
    const exported = await call(stack, 'GET', '/export', { key: stack.adminKey });
    expect(exported.status).toBe(200);
    const bundle = exported.body;
    const current = (b: any) => b.records.find((r: any) => r.version === b.latestVersion).name;
    expect(bundle.policies.map(current)).toEqual(['Driving licence', 'Driving licence', 'Senior discount']);
    expect(bundle.flows.map(current)).toEqual(['Licence desk']);

    const made = stack.admin(['create-org', 'roundtrip', '--admin', 'rita']);
    expect(made.status, made.stderr).toBe(0);
    const key = /arb_[A-Za-z0-9_-]+/.exec(made.stdout)![0];
    const imported = await call(stack, 'POST', '/import', { key, body: bundle });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    expect(imported.body).toMatchObject({ created: 4, unchanged: 0, conflicts: 0 });

    const copy = await call(stack, 'GET', '/export', { key });
    expect(copy.status).toBe(200);
    expect(contentOf(copy.body)).toEqual(contentOf(bundle));
    const flow = imported.body.items.find((i: any) => i.type === 'flow').targetId;
    const run = await call(stack, 'POST', `/run/flow/${flow}`, { key, body: { driver: { age: 15 } } });
    expect([run.status, run.body.result]).toEqual([200, 'manual review']);
  });
});
