/** The `rules` CLI's pure functions, without spawning a process. */

import { describe, expect, it } from 'vitest';
import { compile } from '@arbiter/rule-lang';
import { parseCases, runCheck, runEval, runTests } from '../src/commands.js';
import { parseRequest, runJsonl, type JsonlResult } from '../src/jsonl.js';
import { CliUsageError, parseNow } from '../src/output.js';
import { runCli, type CliIo } from '../src/run.js';

const RULE = `A **guest** may book the flat
  if the __nights__ of the **booking** is no more than 14
  and the __email__ of the **guest** is a valid email.
`;
const ADULT = `A **guest** is an adult if the __date of birth__ of the **guest** is older than 18 years.`;
const OK_DATA = { guest: { email: 'mara@fjordstay.example' }, booking: { nights: 5 } };

describe('runEval', () => {
  it('prints the evaluation JSON with a 2-space indent and exits 0', () => {
    const out = runEval({ rule: RULE, data: JSON.stringify(OK_DATA) });
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('');
    expect(out.stdout).toMatch(/^\{\n {2}"result": true,\n/);
    const json = JSON.parse(out.stdout);
    expect(Object.keys(json)).toEqual(['result', 'outcomes', 'trace']);
    expect(json.outcomes).toEqual({ 'may book the flat': true });
    expect(json.trace.at(-1)).toBe('result: true');
  });

  it('exits 0 with result false, and reports missing data in the JSON', () => {
    const out = runEval({ rule: RULE, data: '{"guest": {"email": "a@b.example"}, "booking": {}}' });
    expect(out.code).toBe(0);
    const json = JSON.parse(out.stdout);
    expect(json).toMatchObject({ result: false, outcomes: {}, error: 'Missing property: booking.nights', errorCode: 'missing_property' });
  });

  it('leaves the trace empty with trace: false', () => {
    expect(JSON.parse(runEval({ rule: RULE, data: JSON.stringify(OK_DATA), trace: false }).stdout).trace).toEqual([]);
  });

  it('uses the injected clock', () => {
    const data = JSON.stringify({ guest: { dateOfBirth: '2000-06-15' } });
    expect(JSON.parse(runEval({ rule: ADULT, data, now: parseNow('2018-01-01') }).stdout).result).toBe(false);
    expect(JSON.parse(runEval({ rule: ADULT, data, now: parseNow('2019-01-01') }).stdout).result).toBe(true);
  });

  it('prints the parse_error JSON, a located message on stderr, and exits 1', () => {
    const out = runEval({ rule: 'A **x** is ok if the __y__ of the **x** is greater than.', data: '{}', ruleName: 'r.rules' });
    expect(out.code).toBe(1);
    const json = JSON.parse(out.stdout);
    expect(json.errorCode).toBe('parse_error');
    expect(json.error).toMatch(/^Parse error: line 1, column \d+: /);
    const lines = out.stderr.split('\n');
    expect(lines[0]).toBe(json.error);
    expect(lines[1]).toMatch(/^ {2}--> r\.rules:1:\d+$/);
    expect(lines[2]).toBe('  1 | A **x** is ok if the __y__ of the **x** is greater than.');
    expect(lines[3].indexOf('^')).toBe(lines[2].indexOf('.', 40));
  });

  it.each([
    ['not JSON', '{oops', /invalid JSON/],
    ['an array', '[1]', /must be a JSON object, got an array/],
    ['null', 'null', /got null/],
  ])('rejects data that is %s with exit 2', (_what, data, message) => {
    const out = runEval({ rule: RULE, data, dataName: 'd.json' });
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(/^rules eval: d\.json: /);
    expect(out.stderr).toMatch(message);
  });

  it('accepts a data file with a byte-order mark', () => {
    expect(runEval({ rule: RULE, data: '\uFEFF' + JSON.stringify(OK_DATA) }).code).toBe(0);
  });
});

describe('runCheck', () => {
  it('prints ok for a valid rule', () => {
    expect(runCheck(RULE)).toEqual({ stdout: 'ok\n', stderr: '', code: 0 });
  });

  it('prints the parse error with its position on stderr and exits 1', () => {
    const out = runCheck('A **guest** may book\n  if the __nights__ of the **booking** is no more than.\n', 'p.rules');
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr.split('\n')[0]).toMatch(/^Parse error: line 2, column \d+: .+/);
    expect(out.stderr).toContain('--> p.rules:2:');
  });

  it('prints static-check warnings with their place on stderr, after ok, and still exits 0', () => {
    const out = runCheck('A **x** is ok\n  if x.n > 5\n  and x.n < 3\n  and x.tier is in [].\n', 'w.rules');
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('ok\n');
    expect(out.stderr).toBe(
      [
        'warning[contradiction]: `x.n < 3` cannot hold together with `x.n > 5`: no value of x.n satisfies them all, so the conditions joined by `and` are always false',
        '  --> w.rules:3:7',
        '  3 |   and x.n < 3',
        '    |       ^',
        'warning[constant_condition]: `x.tier is in []` is always false: nothing is in an empty list',
        '  --> w.rules:4:7',
        '  4 |   and x.tier is in [].',
        '    |       ^',
        '',
      ].join('\n'),
    );
  });

  it('prints a whole-policy error (no position) as it is', () => {
    const out = runCheck('');
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^Parse error: /);
  });
});

describe('parseCases', () => {
  it('reads boolean and object expectations and a per-case clock', () => {
    const cases = parseCases(
      JSON.stringify([
        { name: 'a', data: {}, expect: true },
        { name: 'b', data: {}, expect: { result: false, errorCode: 'missing_property' } },
        { name: 'c', data: {}, expect: { result: false, errorCode: null }, now: '2024-01-01' },
      ]),
    );
    expect(cases.map((c) => c.expect)).toEqual([
      { result: true },
      { result: false, errorCode: 'missing_property' },
      { result: false, errorCode: null },
    ]);
    expect(cases[2].now?.toISOString()).toBe('2024-01-01T00:00:00.000Z');
  });

  it.each([
    ['{', /cases\.json: invalid JSON/],
    ['{}', /expected a JSON array of cases/],
    ['[1]', /case 1: expected an object/],
    ['[{"data": {}, "expect": true}]', /case 1: `name` must be a non-empty string/],
    ['[{"name": "x", "expect": true}]', /case 1 \(`x`\): `data` must be a JSON object, got nothing/],
    ['[{"name": "x", "data": {}}]', /`expect` must be true, false or/],
    ['[{"name": "x", "data": {}, "expect": "yes"}]', /`expect` must be true, false or/],
    ['[{"name": "x", "data": {}, "expect": {"result": true, "code": 1}}]', /unknown key `code`/],
    ['[{"name": "x", "data": {}, "expect": true, "now": "soon"}]', /`now`: `soon` is not an ISO 8601 date/],
  ])('rejects %s', (text, message) => {
    expect(() => parseCases(text, 'cases.json')).toThrow(CliUsageError);
    expect(() => parseCases(text, 'cases.json')).toThrow(message);
  });
});

describe('runTests', () => {
  const cases = JSON.stringify([
    { name: 'short stay', data: OK_DATA, expect: true },
    { name: 'long stay', data: { ...OK_DATA, booking: { nights: 20 } }, expect: false },
    { name: 'no booking', data: { guest: OK_DATA.guest }, expect: { result: false, errorCode: 'missing_selector' } },
  ]);

  it('prints a tick per passing case and the summary, exit 0', () => {
    const out = runTests({ rule: RULE, cases });
    expect(out).toEqual({ stdout: '✓ short stay\n✓ long stay\n✓ no booking\n3 passed, 0 failed\n', stderr: '', code: 0 });
  });

  it('explains each failure and exits 1', () => {
    const failing = JSON.stringify([
      { name: 'wrong result', data: OK_DATA, expect: false },
      { name: 'missing data', data: { guest: OK_DATA.guest }, expect: true },
      { name: 'wrong code', data: { guest: OK_DATA.guest }, expect: { result: false, errorCode: 'missing_property' } },
      { name: 'demands no error', data: { guest: OK_DATA.guest }, expect: { result: false, errorCode: null } },
      { name: 'fine', data: OK_DATA, expect: { result: true, errorCode: null } },
    ]);
    const out = runTests({ rule: RULE, cases: failing });
    expect(out.code).toBe(1);
    expect(out.stdout.split('\n')).toEqual([
      '✗ wrong result: expected false, got true',
      '✗ missing data: expected true, got false (error missing_selector: Missing selector: booking)',
      '✗ wrong code: expected false with errorCode missing_property, got false (error missing_selector: Missing selector: booking)',
      '✗ demands no error: expected false with no error, got false (error missing_selector: Missing selector: booking)',
      '✓ fine',
      '1 passed, 4 failed',
      '',
    ]);
  });

  it('prints the trace under failing cases with verbose', () => {
    const out = runTests({ rule: RULE, cases: JSON.stringify([{ name: 'x', data: OK_DATA, expect: false }]), verbose: true });
    expect(out.stdout).toContain('\n    rule "may book the flat" [golden]\n');
  });

  it('applies --now and a per-case now', () => {
    const data = { guest: { dateOfBirth: '2000-06-15' } };
    const dated = JSON.stringify([
      { name: 'by --now', data, expect: false },
      { name: 'own clock', data, expect: true, now: '2030-01-01' },
    ]);
    expect(runTests({ rule: ADULT, cases: dated, now: parseNow('2018-01-01') }).code).toBe(0);
  });

  it('reports coverage with --coverage: each condition both ways, and what is uncovered with its line and column', () => {
    const out = runTests({ rule: RULE, cases: JSON.stringify([{ name: 'short stay', data: OK_DATA, expect: true }]), coverage: true });
    expect(out.code).toBe(0);
    expect(out.stdout.split('\n')).toEqual([
      '✓ short stay',
      '1 passed, 0 failed',
      'coverage: conditions 0/2 both ways, 50 %',
      '  line 2, column 6: the __nights__ of the **booking** is no more than 14 (seen true only)',
      '  line 3, column 7: the __email__ of the **guest** is a valid email (seen true only)',
      '',
    ]);
    const full = runTests({ rule: RULE, cases, coverage: true, minCoverage: 75 });
    expect(full.stdout).toContain(
      'coverage: conditions 1/2 both ways, 75 %\n  line 3, column 7: the __email__ of the **guest** is a valid email (seen true only)\n',
    );
    expect(full.code).toBe(0);
  });

  it('fails (exit 1) below --min, with the cases all passing', () => {
    const out = runTests({ rule: RULE, cases, coverage: true, minCoverage: 80 });
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/\ncoverage 75 % is below --min 80\n$/);
  });

  it('prints one JSON document with --json, the same answers and coverage as the lines', () => {
    const out = runTests({ rule: RULE, cases, coverage: true, json: true });
    const doc = JSON.parse(out.stdout) as {
      passed: number;
      failed: number;
      cases: unknown[];
      coverage: { summary: { percent: number }; text: string };
    };
    expect(doc).toMatchObject({ passed: 3, failed: 0, coverage: { summary: { percent: 75 }, text: 'conditions 1/2 both ways, 75 %' } });
    expect(doc.cases[2]).toEqual({
      name: 'no booking',
      passed: true,
      expected: { result: false, errorCode: 'missing_selector' },
      got: { result: false, errorCode: 'missing_selector' },
    });
    expect(out.code).toBe(0);
  });

  it('exits 1 with the parse error when the rule does not parse', () => {
    const out = runTests({ rule: 'A **x**', cases: '[]' });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^Parse error: /);
  });

  it('exits 2 on a malformed cases file (checked before the rule)', () => {
    const out = runTests({ rule: 'A **x**', cases: '{}', casesName: 'c.json' });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/^rules test: c\.json: expected a JSON array/);
  });

  it('passes an empty case list', () => {
    expect(runTests({ rule: RULE, cases: '[]' })).toMatchObject({ stdout: '0 passed, 0 failed\n', code: 0 });
  });
});

describe('parseNow', () => {
  it.each(['2025-01-31', '2025-01-31T12:00:00Z', '2025-01-31T12:00:00.5+02:00', '2025-01-31T12:00'])('accepts %s', (v) => {
    expect(Number.isNaN(parseNow(v).getTime())).toBe(false);
  });
  it.each(['tomorrow', '2025-02-30x', '2025-13-01', '31/01/2025', '1738300000000'])('rejects %s', (v) => {
    expect(() => parseNow(v)).toThrow(CliUsageError);
  });
});

describe('runJsonl', () => {
  async function run(lines: string[], options: Parameters<typeof runJsonl>[2] = {}) {
    const chunks: string[] = [];
    const stats = await runJsonl(lines, (c) => void chunks.push(c), options);
    expect(chunks.every((c) => c.endsWith('\n') && c.indexOf('\n') === c.length - 1)).toBe(true);
    return { results: chunks.map((c) => JSON.parse(c) as JsonlResult), stats };
  }
  const req = (rule: string, data: unknown) => JSON.stringify({ rule, data });

  it('answers each line in order, null error fields when absent, and skips blank lines', async () => {
    const { results, stats } = await run([req(RULE, OK_DATA), '', '   ', req(RULE, { guest: {}, booking: { nights: 1 } })]);
    expect(results).toHaveLength(2);
    expect(results[0]).toEqual({
      result: true,
      outcomes: { 'may book the flat': true },
      trace: expect.any(Array),
      error: null,
      errorCode: null,
    });
    expect(Object.keys(results[0])).toEqual(['result', 'outcomes', 'trace', 'error', 'errorCode']);
    expect(results[1]).toMatchObject({ result: false, error: 'Missing property: guest.email', errorCode: 'missing_property' });
    expect(stats).toEqual({ requests: 2, badInput: 0, compiled: 1, cacheHits: 1 });
  });

  it('never stops on a bad line and names its line number', async () => {
    const { results, stats } = await run([
      'not json',
      '[1, 2]',
      '{"data": {}}',
      '{"rule": 5, "data": {}}',
      req(RULE, [1]),
      req(RULE, 'x'),
      '',
      req('A **x** is', {}),
      req(RULE, OK_DATA),
    ]);
    expect(results.map((r) => r.errorCode)).toEqual([
      'bad_input',
      'bad_input',
      'bad_input',
      'bad_input',
      'bad_input',
      'bad_input',
      'parse_error',
      null,
    ]);
    expect(results.map((r) => r.error?.split(':')[0])).toEqual([
      'line 1',
      'line 2',
      'line 3',
      'line 4',
      'line 5',
      'line 6',
      'Parse error',
      undefined,
    ]);
    expect(results[0].error).toMatch(/^line 1: invalid JSON: /);
    expect(results[1].error).toBe('line 2: expected an object {"rule": string, "data": object}, got an array');
    expect(results[2].error).toBe('line 3: `rule` must be a string, got nothing');
    expect(results[4].error).toBe('line 5: `data` must be a JSON object, got an array');
    for (const r of results.slice(0, 6)) expect(r).toMatchObject({ result: false, outcomes: {}, trace: [] });
    expect(results[7].result).toBe(true);
    expect(stats.badInput).toBe(6);
  });

  it('compiles a repeated rule once, parse errors included', async () => {
    let calls = 0;
    const counting = (text: string) => {
      calls++;
      return compile(text);
    };
    const bad = 'A **x** is';
    const lines = [req(RULE, OK_DATA), req(bad, {}), req(RULE, {}), req(bad, {}), req(RULE, OK_DATA)];
    const { results, stats } = await run(lines, { compile: counting });
    expect(calls).toBe(2);
    expect(stats).toMatchObject({ compiled: 2, cacheHits: 3 });
    expect(results.map((r) => r.errorCode)).toEqual([null, 'parse_error', 'missing_selector', 'parse_error', null]);
  });

  it('keeps at most cacheSize policies, dropping the least recently used', async () => {
    const rules = ['A', 'B', 'C'].map((n) => `A **x** is ${n} if the __v__ of the **x** is 1.`);
    const seq = [0, 1, 0, 2, 0, 1].map((i) => req(rules[i], { x: { v: 1 } }));
    const { stats } = await run(seq, { cacheSize: 2 });
    // 0 miss, 1 miss, 0 hit, 2 miss (evicts 1), 0 hit, 1 miss.
    expect(stats).toMatchObject({ compiled: 4, cacheHits: 2 });
  });

  it('honours trace: false and now', async () => {
    const { results } = await run([req(ADULT, { guest: { dateOfBirth: '2000-06-15' } })], { trace: false, now: new Date('2019-01-01') });
    expect(results[0]).toEqual({ result: true, outcomes: { 'an adult': true }, trace: [], error: null, errorCode: null });
  });

  it('reads async line sources and waits for the writer', async () => {
    async function* source() {
      yield req(RULE, OK_DATA);
      yield req(RULE, OK_DATA);
    }
    const seen: string[] = [];
    await runJsonl(source(), async (c) => {
      await new Promise((r) => setImmediate(r));
      seen.push(c);
    });
    expect(seen).toHaveLength(2);
  });

  it('parseRequest strips a byte-order mark on line 1 only', () => {
    expect(parseRequest('\uFEFF' + req(RULE, {}), 1)).toEqual({ rule: RULE, data: {} });
    expect(parseRequest('\uFEFF' + req(RULE, {}), 2)).toMatchObject({ error: expect.stringMatching(/^line 2: invalid JSON/) });
  });
});

describe('runCli', () => {
  function fakeIo(files: Record<string, string>, stdin: string[] = []) {
    const out = { stdout: '', stderr: '' };
    const io: CliIo = {
      readFile: async (p) => {
        if (p === '-') return stdin.join('\n');
        const text = files[p];
        if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${p}'`);
        return text;
      },
      stdinLines: async function* () {
        yield* stdin;
      },
      stdout: (c) => void (out.stdout += c),
      stderr: (c) => void (out.stderr += c),
    };
    return { io, out };
  }
  const files = {
    'r.rules': RULE,
    'd.json': JSON.stringify(OK_DATA),
    'c.json': JSON.stringify([{ name: 'ok', data: OK_DATA, expect: true }]),
  };

  it.each([
    [['eval', '--rule', 'r.rules', '--data', 'd.json'], 0, /"result": true/],
    [['eval', '-r', 'r.rules', '-d', 'd.json', '--no-trace', '--now', '2025-01-01'], 0, /"trace": \[\]/],
    [['check', 'r.rules'], 0, /^ok\n$/],
    [['test', 'r.rules', '--cases', 'c.json'], 0, /1 passed, 0 failed/],
    [['--help'], 0, /^Usage: rules <command>/],
    [['help', 'test'], 0, /^Usage: rules test FILE --cases FILE/],
    [['eval', '--help'], 0, /^Usage: rules eval --rule FILE/],
    [['check', '-h'], 0, /^Usage: rules check FILE/],
  ])('%j → exit %i', async (argv, code, stdout) => {
    const { io, out } = fakeIo(files);
    expect(await runCli(argv, io)).toBe(code);
    expect(out.stdout).toMatch(stdout);
    expect(out.stderr).toBe('');
  });

  it.each([
    [[], /^Usage: rules <command>/],
    [['frob'], /^rules: unknown command `frob`\n\nUsage: rules <command>/],
    [['help', 'frob'], /^rules: unknown command `frob`/],
    [['eval', '--rule', 'r.rules'], /^rules eval: missing --data FILE/],
    [['eval', '--data', 'd.json'], /^rules eval: missing --rule FILE/],
    [['eval', '--rule', 'r.rules', '--data', 'd.json', '--frob'], /^rules eval: Unknown option '--frob'/],
    [['eval', '--rule', 'r.rules', '--data', 'd.json', 'extra'], /unexpected argument `extra`/],
    [['eval', '--rule'], /^rules eval: Option '-r, --rule <value>' argument missing/],
    [['eval', '--rule', 'r.rules', '--data', 'd.json', '--now', 'soon'], /--now: `soon` is not an ISO 8601/],
    [['eval', '--rule', 'r.rules', '--data', 'd.json', '--step-budget', '1.5'], /--step-budget: `1\.5` is not a non-negative integer/],
    [['test', 'r.rules', '--cases', 'c.json', '--step-budget', 'lots'], /--step-budget: `lots` is not a non-negative integer/],
    [['eval', '--jsonl', '--rule', 'r.rules'], /--jsonl reads rule and data from stdin/],
    [['eval', '--rule', '-', '--data', '-'], /cannot both read stdin/],
    [['eval', '--rule', 'nope.rules', '--data', 'd.json'], /^rules eval: cannot read rule file `nope\.rules`: ENOENT/],
    [['check'], /^rules check: missing FILE/],
    [['check', 'a', 'b'], /expected one FILE, got 2/],
    [['test', 'r.rules'], /^rules test: missing --cases FILE/],
    [['test', '--cases', 'c.json'], /^rules test: missing the rule FILE/],
    [['test', 'r.rules', '--cases', 'd.json'], /^rules test: d\.json: expected a JSON array/],
  ])('%j → usage error, exit 2', async (argv, stderr) => {
    const { io, out } = fakeIo(files);
    expect(await runCli(argv, io)).toBe(2);
    expect(out.stderr).toMatch(stderr);
    expect(out.stdout).toBe('');
  });

  it('shows the synopsis after an argument error but not after an unreadable file', async () => {
    const a = fakeIo(files);
    await runCli(['check'], a.io);
    expect(a.out.stderr).toBe('rules check: missing FILE\n\nUsage: rules check FILE\nRun `rules check --help` for details.\n');
    const b = fakeIo(files);
    await runCli(['check', 'nope'], b.io);
    expect(b.out.stderr).toBe("rules check: cannot read rule file `nope`: ENOENT: no such file or directory, open 'nope'\n");
  });

  it('stops an evaluation past --step-budget with budget_exceeded (eval, --jsonl and test)', async () => {
    const { io, out } = fakeIo(files, [JSON.stringify({ rule: RULE, data: OK_DATA })]);
    expect(await runCli(['eval', '-r', 'r.rules', '-d', 'd.json', '--step-budget', '0'], io)).toBe(0);
    const evaluated = JSON.parse(out.stdout) as { result: boolean; errorCode: string; error: string };
    expect(evaluated).toMatchObject({ result: false, errorCode: 'budget_exceeded' });
    expect(evaluated.error).toBe('Budget exceeded: the evaluation needs more than 0 steps');
    out.stdout = '';
    expect(await runCli(['eval', '--jsonl', '--step-budget', '0'], io)).toBe(0);
    expect((JSON.parse(out.stdout) as { errorCode: string }).errorCode).toBe('budget_exceeded');
    out.stdout = '';
    expect(await runCli(['test', 'r.rules', '--cases', 'c.json', '--step-budget', '0'], io)).toBe(1);
    expect(out.stdout).toMatch(/0 passed, 1 failed/);
    out.stdout = '';
    expect(await runCli(['test', 'r.rules', '--cases', 'c.json', '--step-budget', '1000'], io)).toBe(0);
  });

  it('reads the rule or the data from stdin with -', async () => {
    const { io, out } = fakeIo(files, [JSON.stringify(OK_DATA)]);
    expect(await runCli(['eval', '--rule', 'r.rules', '--data', '-'], io)).toBe(0);
    expect(JSON.parse(out.stdout).result).toBe(true);
  });

  it('runs --jsonl over stdin lines and exits 0 even with bad lines', async () => {
    const { io, out } = fakeIo(files, [JSON.stringify({ rule: RULE, data: OK_DATA }), 'nope']);
    expect(await runCli(['eval', '--jsonl', '--no-trace'], io)).toBe(0);
    const lines = out.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.errorCode)).toEqual([null, 'bad_input']);
    expect(lines[0].trace).toEqual([]);
  });
});

describe('--reasons', () => {
  const ADULT = 'A **user** is adult if the __age__ of the **user** is at least 18.';

  it('rules eval --reasons adds why the result came out, uncapped; without it the output is as before', async () => {
    const files: Record<string, string> = { 'r.rules': ADULT, 'd.json': '{"user": {"age": 16}}' };
    const io = (out: { stdout: string }): CliIo => ({
      readFile: async (p) => files[p]!,
      stdinLines: async function* () {},
      stdout: (c) => void (out.stdout += c),
      stderr: () => undefined,
    });
    const plain = { stdout: '' };
    expect(await runCli(['eval', '-r', 'r.rules', '-d', 'd.json', '--no-trace'], io(plain))).toBe(0);
    expect(plain.stdout).toBe('{\n  "result": false,\n  "outcomes": {\n    "adult": false\n  },\n  "trace": []\n}\n');
    const asked = { stdout: '' };
    expect(await runCli(['eval', '-r', 'r.rules', '-d', 'd.json', '--no-trace', '--reasons'], io(asked))).toBe(0);
    const printed = JSON.parse(asked.stdout) as Record<string, unknown>;
    expect(Object.keys(printed)).toEqual(['result', 'outcomes', 'trace', 'reasons']);
    expect(printed.reasons).toMatchObject({
      result: false,
      sentence: 'adult is false because the age of the user (16) is not at least 18',
      because: [{ kind: 'condition', path: 'user.age', value: 16, holds: false, line: 1, column: 24 }],
    });
  });

  it('rules eval --reasons on a rule that does not parse: one error entry, exit 1', () => {
    const out = runEval({ rule: 'if x.a >= -> ok.', data: '{}', reasons: true, trace: false });
    expect(out.code).toBe(1);
    expect((JSON.parse(out.stdout) as { reasons: { because: Array<{ kind: string }> } }).reasons.because[0].kind).toBe('error');
  });

  it('--jsonl --reasons adds them to each line; without it a line has no reasons key', async () => {
    let with_ = '';
    await runJsonl([JSON.stringify({ rule: ADULT, data: { user: { age: 30 } } })], (c) => void (with_ += c), {
      reasons: true,
      trace: false,
    });
    expect((JSON.parse(with_) as JsonlResult).reasons?.sentence).toBe('adult is true because the age of the user (30) is at least 18');
    let without = '';
    await runJsonl([JSON.stringify({ rule: ADULT, data: { user: { age: 30 } } })], (c) => void (without += c), { trace: false });
    expect(without).toBe('{"result":true,"outcomes":{"adult":true},"trace":[],"error":null,"errorCode":null}\n');
  });
});

describe('unpaired UTF-16 surrogates', () => {
  const surrogateData = String.raw`{"x": {"s": "😀", "t": "\ude00"}}`;
  const CONTAINS = 'A **x** is ok if the __s__ of the **x** contains the __t__ of the **x**.';

  it('eval refuses data holding one with exit 2, naming its path (was: evaluated, half of a pair matched)', () => {
    const out = runEval({ rule: CONTAINS, data: surrogateData, dataName: 'd.json' });
    expect(out).toEqual({
      stdout: '',
      stderr: 'rules eval: d.json: `data` must not contain an unpaired UTF-16 surrogate (`\\ud800`–`\\udfff` alone), found at `data.x.t`\n',
      code: 2,
    });
  });

  it('eval answers a rule holding one with the parse error, exit 1', () => {
    const out = runEval({ rule: 'A **x** is ok if x.s contains "\ude00".', data: '{"x": {"s": "😀"}}' });
    expect(out.code).toBe(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ result: false, errorCode: 'parse_error' });
    expect(out.stderr.split('\n')[0]).toBe(
      'Parse error: line 1, column 32: unpaired UTF-16 surrogate `\\ude00`: the text must be well-formed Unicode',
    );
  });

  it('a key holding one is refused too, and test cases are checked the same way', () => {
    expect(runEval({ rule: CONTAINS, data: String.raw`{"x": {"\ud800": 1}}` }).stderr).toMatch(/found at `data\.x`/);
    expect(() => parseCases(`[{"name": "half", "data": ${surrogateData}, "expect": false}]`, 'cases.json')).toThrow(
      /case 1 \(`half`\): `data` must not contain an unpaired UTF-16 surrogate .*found at `data\.x\.t`/,
    );
  });

  it('eval --jsonl answers such data with bad_input and a rule with the parse error', async () => {
    const chunks: string[] = [];
    await runJsonl(
      [
        `{"rule": ${JSON.stringify(CONTAINS)}, "data": ${surrogateData}}`,
        String.raw`{"rule": "if x.s contains \"\ude00\" -> ok.", "data": {"x": {"s": "a"}}}`,
      ],
      (c) => void chunks.push(c),
    );
    const [data, rule] = chunks.map((c) => JSON.parse(c) as JsonlResult);
    expect(data).toMatchObject({
      errorCode: 'bad_input',
      error: expect.stringMatching(/^line 1: `data` must not contain an unpaired UTF-16 surrogate/),
    });
    expect(rule).toMatchObject({ errorCode: 'parse_error', error: expect.stringContaining('unpaired UTF-16 surrogate') });
  });
});
