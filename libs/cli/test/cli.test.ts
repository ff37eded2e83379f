/**
 * The BUILT `rules` CLI (dist/main.js), spawned on temp files. The root `npm test` builds
 * first; when running vitest alone, build with `npm run build -w @arbiter/cli`.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PKG = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(PKG, 'dist', 'main.js');

const RULE = `# Short-term rental: may a guest book the flat?
A **guest** may book the flat
  if the **guest** passes the identity check
  and $deposit is satisfied
  and the __nights__ of the **booking** is no more than 14.

A **guest** passes the identity check
  if the __email__ of the **guest** is a valid email
  and the __date of birth__ of the **guest** is older than 18 years.

deposit: if booking.deposit.amount >= 200 -> deposit received.
`;
const GOOD = { guest: { email: 'mara@fjordstay.example', dateOfBirth: '1990-04-12' }, booking: { nights: 5, deposit: { amount: 250 } } };
const BAD_RULE = 'A **guest** may book\n  if the __nights__ of the **booking** is no more than.\n';

let dir = '';
const file = (name: string, content: string | object): string => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};

function rules(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: dir, input: input ?? '', encoding: 'utf8', timeout: 30_000 });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  if (!existsSync(MAIN)) {
    throw new Error(
      `${relative(process.cwd(), MAIN)} is missing: build the package first (npm run build -w @arbiter/cli; the root npm test builds before vitest)`,
    );
  }
  dir = mkdtempSync(join(tmpdir(), 'rules-cli-'));
  file('policy.rules', RULE);
  file('bad.rules', BAD_RULE);
  file('good.json', GOOD);
  file('no-nights.json', { ...GOOD, booking: { deposit: { amount: 250 } } });
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the built executable', () => {
  it('starts with a node shebang', () => {
    expect(readFileSync(MAIN, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
  });
});

describe('rules eval', () => {
  it('prints the evaluation JSON (2-space indent) and exits 0', () => {
    const r = rules(['eval', '--rule', 'policy.rules', '--data', 'good.json', '--now', '2025-01-31']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith('{\n  "result": true,')).toBe(true);
    const json = JSON.parse(r.stdout);
    expect(json).toEqual({
      result: true,
      outcomes: { 'may book the flat': true, 'the identity check': true, 'deposit received': true },
      trace: expect.arrayContaining(['rule "may book the flat" [golden]', 'result: true']),
    });
  });

  it('reports a missing property in the JSON, result false, exit 0', () => {
    const r = rules(['eval', '--rule', 'policy.rules', '--data', 'no-nights.json', '--no-trace']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      result: false,
      outcomes: {},
      trace: [],
      error: 'Missing property: booking.nights',
      errorCode: 'missing_property',
    });
  });

  it('exits 1 on a rule that does not parse, still printing the JSON', () => {
    const r = rules(['eval', '--rule', 'bad.rules', '--data', 'good.json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).errorCode).toBe('parse_error');
    expect(r.stderr).toMatch(/^Parse error: line 2, column \d+: /);
  });

  it('reads the data from stdin with --data -', () => {
    const r = rules(['eval', '--rule', 'policy.rules', '--data', '-'], JSON.stringify(GOOD));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).result).toBe(true);
  });

  it('exits 2 on data that is not JSON', () => {
    file('broken.json', '{"guest": ');
    const r = rules(['eval', '--rule', 'policy.rules', '--data', 'broken.json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^rules eval: broken\.json: invalid JSON: /);
  });
});

describe('rules check', () => {
  it('prints ok and exits 0', () => {
    expect(rules(['check', 'policy.rules'])).toEqual({ code: 0, stdout: 'ok\n', stderr: '' });
  });

  it('prints the parse error on stderr and exits 1', () => {
    const r = rules(['check', 'bad.rules']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines[0]).toMatch(/^Parse error: line 2, column (\d+): .+/);
    const column = Number(/column (\d+)/.exec(lines[0])![1]);
    expect(lines[1]).toBe(`  --> bad.rules:2:${column}`);
    expect(lines[2]).toBe('  2 |   if the __nights__ of the **booking** is no more than.');
    expect(lines[3]).toBe(`    | ${' '.repeat(column - 1)}^`);
  });
});

describe('rules test', () => {
  it('passes saved cases: one line each, summary, exit 0', () => {
    file('pass.json', [
      { name: 'happy guest', data: GOOD, expect: true },
      { name: 'long stay', data: { ...GOOD, booking: { nights: 30, deposit: { amount: 250 } } }, expect: false },
      {
        name: 'no nights',
        data: { ...GOOD, booking: { deposit: { amount: 250 } } },
        expect: { result: false, errorCode: 'missing_property' },
      },
    ]);
    const r = rules(['test', 'policy.rules', '--cases', 'pass.json', '--now', '2025-01-31']);
    expect(r).toEqual({ code: 0, stdout: '✓ happy guest\n✓ long stay\n✓ no nights\n3 passed, 0 failed\n', stderr: '' });
  });

  it('reports failing cases and exits 1', () => {
    file('fail.json', [
      { name: 'happy guest', data: GOOD, expect: true },
      { name: 'wrongly expected', data: GOOD, expect: false },
      { name: 'no booking', data: { guest: GOOD.guest }, expect: true },
    ]);
    const r = rules(['test', 'policy.rules', '--cases', 'fail.json']);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')).toEqual([
      '✓ happy guest',
      '✗ wrongly expected: expected false, got true',
      '✗ no booking: expected true, got false (error missing_selector: Missing selector: booking)',
      '1 passed, 2 failed',
      '',
    ]);
  });

  it('exits 1 when the rule does not parse', () => {
    file('one.json', [{ name: 'x', data: GOOD, expect: true }]);
    const r = rules(['test', 'bad.rules', '--cases', 'one.json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^Parse error: line 2/);
  });

  it('exits 2 on a malformed cases file', () => {
    file('malformed.json', [{ name: 'x', data: GOOD }]);
    const r = rules(['test', 'policy.rules', '--cases', 'malformed.json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^rules test: malformed\.json: case 1 \(`x`\): `expect` must be/);
  });
});

describe('rules eval --jsonl', () => {
  it('answers every line, never stopping on a bad one', () => {
    const lines = [
      JSON.stringify({ rule: RULE, data: GOOD }),
      '{"rule": "A **x**", "data": ',
      '',
      JSON.stringify({ rule: RULE, data: 'not an object' }),
      JSON.stringify({ rule: BAD_RULE, data: {} }),
      JSON.stringify({ data: GOOD }),
      JSON.stringify({ rule: RULE, data: GOOD }),
      JSON.stringify({ rule: RULE, data: { guest: GOOD.guest } }),
    ];
    const r = rules(['eval', '--jsonl', '--now', '2025-01-31'], lines.join('\n') + '\n');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = r.stdout.split('\n');
    expect(out.pop()).toBe('');
    const results = out.map((l) => JSON.parse(l));
    expect(results).toHaveLength(7);
    for (const res of results) expect(Object.keys(res)).toEqual(['result', 'outcomes', 'trace', 'error', 'errorCode']);
    expect(results.map((x) => x.errorCode)).toEqual([null, 'bad_input', 'bad_input', 'parse_error', 'bad_input', null, 'missing_selector']);
    expect(results[0]).toMatchObject({ result: true, error: null });
    expect(results[1]).toEqual({
      result: false,
      outcomes: {},
      trace: [],
      error: expect.stringMatching(/^line 2: invalid JSON: /),
      errorCode: 'bad_input',
    });
    expect(results[2].error).toBe('line 4: `data` must be a JSON object, got a string');
    expect(results[3].error).toMatch(/^Parse error: line 2, column \d+: /);
    expect(results[4].error).toBe('line 6: `rule` must be a string, got nothing');
    expect(results[5]).toEqual(results[0]);
    expect(results[6]).toMatchObject({ result: false, error: 'Missing selector: booking' });
  });

  it('streams many lines', () => {
    const line = JSON.stringify({ rule: RULE, data: GOOD });
    const n = 3000;
    const r = rules(['eval', '--jsonl', '--no-trace'], `${line}\r\n`.repeat(n));
    expect(r.code).toBe(0);
    const out = r.stdout.trimEnd().split('\n');
    expect(out).toHaveLength(n);
    expect(new Set(out).size).toBe(1);
    expect(JSON.parse(out[0])).toMatchObject({ result: true, trace: [], error: null, errorCode: null });
  });
});

describe('usage', () => {
  it.each([[['--help']], [['help']], [['eval', '--help']], [['check', '--help']], [['test', '-h']]])(
    '%j prints help on stdout, exit 0',
    (args) => {
      const r = rules(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: rules /);
      expect(r.stdout).toContain('Exit codes:');
    },
  );

  it.each([
    [[], /^Usage: rules <command>/],
    [['frobnicate'], /^rules: unknown command `frobnicate`\n\nUsage: rules <command>/],
    [['eval', '--rule', 'policy.rules'], /^rules eval: missing --data FILE/],
    [['eval', '--rule', 'policy.rules', '--data', 'good.json', '--verbose'], /^rules eval: Unknown option '--verbose'/],
    [['eval', '--rule', 'policy.rules', '--data', 'good.json', '--now', 'yesterday'], /^rules eval: --now: `yesterday` is not/],
    [['eval', '--rule', 'missing.rules', '--data', 'good.json'], /^rules eval: cannot read rule file `missing\.rules`: /],
    [['check'], /^rules check: missing FILE/],
    [['test', 'policy.rules'], /^rules test: missing --cases FILE/],
  ])('%j → usage on stderr, exit 2', (args, stderr) => {
    const r = rules(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(stderr);
  });
});
