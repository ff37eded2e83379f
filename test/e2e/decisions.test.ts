/**
 * Decision records end to end: the built services (execution, registry, audit, gateway);
 * stored runs are recorded through the execution outbox, JetStream and the audit service, masked by
 * the org's and the base's masks, and read back by admins and auditors only, in their own org.
 */
import { MAX_MASKS } from '@arbiter/contracts';
import { compile } from '@arbiter/rule-lang';
import { companionDatabaseUrl } from '@arbiter/service-kit';
import { eventually } from '@arbiter/test-kit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, memberKey as sharedMemberKey, startStack, type Stack } from './harness.js';

let stack: Stack;
const key: Record<'admin' | 'auditor' | 'editor' | 'publisher' | 'orgB', string> = {
  admin: '',
  auditor: '',
  editor: '',
  publisher: '',
  orgB: '',
};

const memberKey = (userId: string, role: string, scopes: string[]): Promise<string> => sharedMemberKey(stack, userId, role, scopes);

/** Polls `probe` (through test-kit's `eventually`) until it gives a value. */
function until<T>(probe: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> {
  return eventually(
    async () => {
      const got = await probe();
      if (got === undefined) throw new Error(`timed out waiting for ${what}`);
      return got;
    },
    { timeoutMs: ms, intervalMs: 100 },
  );
}

const RULE = 'An **applicant** is approved if the __score__ of the **applicant** is at least 600.';

beforeAll(async () => {
  stack = await startStack({
    services: ['execution', 'registry', 'audit', 'gateway'],
    env: { EVENTS_FLUSH_MS: '200', DECISIONS_FLUSH_MS: '50', DECISIONS_SETTINGS_TTL_MS: '200' },
  });
  key.admin = stack.adminKey;
  key.auditor = await memberKey('audrey', 'auditor', ['view', 'audit']);
  key.editor = await memberKey('eddie', 'editor', ['view', 'edit']);
  key.publisher = await memberKey('pia', 'publisher', ['view', 'edit', 'publish']);
  const created = stack.admin(['create-org', 'globex', '--admin', 'gus']);
  expect(created.status, created.stderr).toBe(0);
  key.orgB = /\n\s+(\S+)\s*$/.exec(created.stdout)![1]!;
}, 120_000);
afterAll(async () => stack?.stop());

describe('decision records', () => {
  let baseId = '';
  let decisionId = '';

  it('records stored runs with the org masks and the base masks applied, readable by admins and auditors', async () => {
    const created = await call(stack, 'POST', '/policy', { key: key.admin, body: { name: 'Approval', rule: RULE } });
    expect(created.status).toBe(201);
    baseId = created.body.baseId as string;
    const policyId = created.body.policyId as string;
    expect((await call(stack, 'PUT', `/policy/${policyId}`, { key: key.admin, body: { status: 'published' } })).status).toBe(201);
    const org = await call(stack, 'PUT', '/decisions/settings', { key: key.admin, body: { masks: ['applicant.ssn'] } });
    expect(org.status, JSON.stringify(org.body)).toBe(200);
    // A publisher may set a base's settings, an editor may not; only admins set the org masks.
    expect((await call(stack, 'PUT', '/decisions/settings', { key: key.publisher, body: { masks: [] } })).status).toBe(403);
    expect(
      (await call(stack, 'PUT', `/decisions/settings/${baseId}`, { key: key.editor, body: { masks: ['cards.*.number'] } })).status,
    ).toBe(403);
    const base = await call(stack, 'PUT', `/decisions/settings/${baseId}`, { key: key.publisher, body: { masks: ['cards.*.number'] } });
    expect(base.status, JSON.stringify(base.body)).toBe(200);
    expect(base.body).toEqual({
      masks: ['applicant.ssn'],
      bases: { [baseId]: { enabled: true, sampleRate: 1, masks: ['cards.*.number'] } },
    });

    const data = { applicant: { score: 700, ssn: '078-05-1120' }, cards: [{ number: '4111', kind: 'visa' }, { number: '5500' }] };
    const run = await call(stack, 'POST', `/run/policy/${baseId}`, { key: key.admin, body: data });
    expect(run.status).toBe(200);
    expect((await call(stack, 'POST', `/run/policy/${baseId}`, { key: key.admin, body: { applicant: { ssn: 'x' } } })).body).toMatchObject({
      errorCode: expect.any(String),
    });
    const page = await until(async () => {
      const res = await call(stack, 'GET', `/decisions?baseId=${baseId}`, { key: key.auditor });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.items.length === 2 ? res.body : undefined;
    }, 'two decisions');
    const [error, ok] = page.items;
    expect(ok).toMatchObject({
      kind: 'policy',
      baseId,
      policyId,
      version: 1,
      result: true,
      errorCode: null,
      masked: true,
      input: { applicant: { score: 700, ssn: '***' }, cards: [{ number: '***', kind: 'visa' }, { number: '***' }] },
    });
    expect(error).toMatchObject({ result: false, errorCode: expect.any(String), input: { applicant: { ssn: '***' } } });
    decisionId = ok.decisionId as string;
    const one = await call(stack, 'GET', `/decisions/${decisionId}`, { key: key.admin });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(ok);
  });

  it('filters by result, error code, version and caller, and pages with the cursor', async () => {
    const only = async (q: string) =>
      (await call(stack, 'GET', `/decisions?baseId=${baseId}&${q}`, { key: key.auditor })).body.items.length;
    expect(await only('result=true')).toBe(1);
    expect(await only('result=false')).toBe(1);
    expect(await only('version=1')).toBe(2);
    expect(await only('version=2')).toBe(0);
    expect(await only('caller=nobody')).toBe(0);
    const first = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=1`, { key: key.auditor });
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`, {
      key: key.auditor,
    });
    expect(second.body.items[0].decisionId).not.toBe(first.body.items[0].decisionId);
    expect(second.body.nextCursor).toBeNull();
  });

  it('refuses editors, answers 404 to another org, and 400 to bad filters and cursors', async () => {
    expect((await call(stack, 'GET', '/decisions', { key: key.editor })).status).toBe(403);
    expect((await call(stack, 'GET', `/decisions/${decisionId}`, { key: key.editor })).status).toBe(403);
    expect((await call(stack, 'GET', `/decisions/${decisionId}`, { key: key.orgB })).status).toBe(404);
    expect((await call(stack, 'GET', `/decisions?baseId=${baseId}`, { key: key.orgB })).body.items).toEqual([]);
    expect((await call(stack, 'GET', '/decisions')).status).toBe(401);
    for (const q of ['version=abc', 'result=maybe', 'from=yesterday', 'limit=0', 'cursor=not-a-cursor']) {
      const res = await call(stack, 'GET', `/decisions?${q}`, { key: key.auditor });
      expect(res.status, q).toBe(400);
    }
    expect((await call(stack, 'GET', '/decisions/not-a-uuid', { key: key.auditor })).status).toBe(400);
    const bad = await call(stack, 'PUT', `/decisions/settings/${baseId}`, { key: key.admin, body: { sampleRate: 2 } });
    expect(bad.status).toBe(400);
  });

  it('lists the routes in /openapi.json', async () => {
    const doc = (await call(stack, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths['/decisions']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/decisions/{id}']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/decisions/settings']!).sort()).toEqual(['get', 'put']);
    expect(Object.keys(doc.paths['/decisions/settings/{baseId}']!).sort()).toEqual(['delete', 'put']);
    expect(Object.keys(doc.paths['/decisions/stats/{baseId}']!)).toEqual(['get']);
  });

  it('stops recording a base whose settings turn it off', async () => {
    expect(
      (await call(stack, 'PUT', `/decisions/settings/${baseId}`, { key: key.admin, body: { enabled: false, masks: ['cards.*.number'] } }))
        .status,
    ).toBe(200);
    const count = async (id: string): Promise<number> =>
      (await call(stack, 'GET', `/decisions?baseId=${id}&limit=200`, { key: key.admin })).body.items.length as number;
    // A run of another base after the base's runs is recorded: once it is in, the runs before it would be too.
    const other = await call(stack, 'POST', '/policy', { key: key.admin, body: { name: 'Other', rule: RULE } });
    let witnesses = 0;
    const recordsAny = async (runs: number): Promise<boolean> => {
      const before = await count(baseId);
      for (let i = 0; i < runs; i++)
        await call(stack, 'POST', `/run/policy/${baseId}`, { key: key.admin, body: { applicant: { score: 1 } } });
      await call(stack, 'POST', `/run/policy/${other.body.baseId}`, { key: key.admin, body: { applicant: { score: 1 } } });
      witnesses++;
      await until(async () => ((await count(other.body.baseId)) === witnesses ? true : undefined), 'the other base recorded');
      return (await count(baseId)) !== before;
    };
    // Settings reach the execution service within DECISIONS_SETTINGS_TTL_MS (200 ms here): probe
    // with one run until one is not recorded, then five more are not either.
    await until(async () => ((await recordsAny(1)) ? undefined : true), 'the settings to reach the execution service');
    expect(await recordsAny(5)).toBe(false);
  });

  it("exposes the ingest lag of the stored decisions on the audit service's /metrics", async () => {
    const text = await (await fetch(`${stack.opsUrl('audit')}/metrics`)).text();
    const stored = Number(/^arbiter_decisions_ingested_total\{service="audit"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    const observed = Number(/^arbiter_decisions_ingest_lag_seconds_count\{service="audit"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    // The runs of the tests above were recorded and stored: each one's lag observed once.
    expect(stored).toBeGreaterThanOrEqual(2);
    expect(observed).toBe(stored);
    expect(text).toMatch(/^arbiter_decisions_ingest_lag_seconds_bucket\{le="\+Inf",service="audit"\} \d+$/m);
  });

  it('answers 503 dependency_unavailable while the audit service is down, runs still answering 200', async () => {
    await stack.stopService('audit');
    try {
      for (const path of ['/decisions', `/decisions?baseId=${baseId}`, `/decisions/${decisionId}`, '/decisions/settings']) {
        const res = await call(stack, 'GET', path, { key: key.admin });
        expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(503);
        expect(res.body).toMatchObject({ status: 503, code: 'dependency_unavailable' });
      }
      const run = await call(stack, 'POST', `/run/policy/${baseId}`, { key: key.admin, body: { applicant: { score: 700 } } });
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      expect(run.body).toMatchObject({ result: true });
    } finally {
      await stack.startService('audit');
    }
    expect((await call(stack, 'GET', '/decisions', { key: key.admin })).status).toBe(200);
  });
});

/** A published policy of the stack's org with `rule`; answers its base id and its record id. */
async function published(name: string, rule: string, who = key.admin): Promise<{ baseId: string; policyId: string }> {
  const created = await call(stack, 'POST', '/policy', { key: who, body: { name, rule } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const policyId = created.body.policyId as string;
  const version = await call(stack, 'PUT', `/policy/${policyId}`, { key: who, body: { status: 'published' } });
  expect(version.status, JSON.stringify(version.body)).toBe(201);
  return { baseId: created.body.baseId as string, policyId: version.body.policyId as string };
}

/** The inputs of a base's stored decisions, newest first. */
async function inputsOf(baseId: string): Promise<Array<Record<string, unknown>>> {
  const res = await call(stack, 'GET', `/decisions?baseId=${baseId}&limit=200`, { key: key.admin });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.items as Array<{ input: Record<string, unknown> }>).map((d) => d.input);
}

/** Runs `data` on the base until its record is stored and `ready` holds for its input (settings reach the execution service within their TTL). */
async function runUntilRecorded(baseId: string, data: unknown, ready: (input: Record<string, unknown>) => boolean): Promise<void> {
  await until(async () => {
    const before = (await inputsOf(baseId)).length;
    const run = await call(stack, 'POST', `/run/policy/${baseId}`, { key: key.admin, body: data });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const input = await until(async () => {
      const inputs = await inputsOf(baseId);
      return inputs.length > before ? inputs[0] : undefined;
    }, 'the probe record');
    return ready(input) ? true : undefined;
  }, 'a record with the settings applied');
}

describe('decision settings: masks in every spelling, settings only for bases of the org, reading them fails closed', () => {
  it('masks a key written in one spelling in data sent with another (creditScore → credit_score, credit score, CreditScore)', async () => {
    const { baseId } = await published(
      'Credit',
      'An **applicant** is approved if the __credit score__ of the **applicant** is at least 600.',
    );
    const put = await call(stack, 'PUT', `/decisions/settings/${baseId}`, { key: key.admin, body: { masks: ['applicant.creditScore'] } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    // The mask has reached the execution service once a run with the mask's own spelling is recorded masked.
    await runUntilRecorded(baseId, { applicant: { creditScore: 1 } }, (input) => JSON.stringify(input).includes('***'));
    // The probe may have taken several runs (the settings reach the execution service within their TTL): count from here.
    const probes = (await inputsOf(baseId)).length;
    // The rule reads `credit_score` and `credit score` (LANGUAGE.md §4.4); `CreditScore` is masked too though the rule does not read it.
    const spellings = ['credit_score', 'credit score', 'CreditScore'];
    for (const spelling of spellings) {
      const run = await call(stack, 'POST', `/run/policy/${baseId}`, {
        key: key.admin,
        body: { applicant: { [spelling]: 712, name: 'Ann' } },
      });
      expect(run.status, spelling).toBe(200);
      if (spelling !== 'CreditScore') expect(run.body, spelling).toMatchObject({ result: true });
    }
    const inputs = await until(async () => {
      const all = await inputsOf(baseId);
      return all.length === probes + spellings.length ? all : undefined;
    }, 'the records of every spelling');
    expect(inputs.slice(0, spellings.length).reverse()).toEqual(spellings.map((s) => ({ applicant: { [s]: '***', name: 'Ann' } })));
  });

  it("takes settings only for live policy and flow bases of the org (404 for a record id, an unknown id, another org's base, a deleted one) and removes them", async () => {
    const { baseId, policyId } = await published('Settings target', RULE);
    const flow = await call(stack, 'POST', '/flow', {
      key: key.admin,
      body: { name: 'Settings flow', definition: { start: 'r', nodes: { r: { type: 'return', value: true } } } },
    });
    expect(flow.status, JSON.stringify(flow.body)).toBe(201);
    const theirs = await published('Theirs', RULE, key.orgB);
    const gone = await published('Gone', RULE);
    expect((await call(stack, 'DELETE', `/policy/${gone.policyId}`, { key: key.admin })).status).toBe(204);
    expect(policyId).not.toBe(baseId);
    const before = await call(stack, 'GET', '/decisions/settings', { key: key.admin });
    for (const [what, id] of [
      ['a record id', policyId],
      ['an unknown id', '019ad000-0000-7000-8000-000000000000'],
      ["another org's base", theirs.baseId],
      ['a deleted base', gone.baseId],
    ] as const) {
      const res = await call(stack, 'PUT', `/decisions/settings/${id}`, { key: key.publisher, body: { masks: ['a'] } });
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(404);
    }
    expect((await call(stack, 'GET', '/decisions/settings', { key: key.admin })).body).toEqual(before.body);
    const ok = await call(stack, 'PUT', `/decisions/settings/${flow.body.baseId as string}`, {
      key: key.publisher,
      body: { sampleRate: 0.5 },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await call(stack, 'DELETE', `/decisions/settings/${flow.body.baseId as string}`, { key: key.publisher })).status).toBe(204);
    expect((await call(stack, 'GET', '/decisions/settings', { key: key.admin })).body).toEqual(before.body);
    expect((await call(stack, 'DELETE', `/decisions/settings/${theirs.baseId}`, { key: key.admin })).status).toBe(404);
  });

  it('records nothing (dropped, counted) while the settings cannot be read, not even after a restart, and masks again once they can', async () => {
    const { baseId } = await published('Fail closed', RULE);
    expect((await call(stack, 'PUT', `/decisions/settings/${baseId}`, { key: key.admin, body: { masks: ['applicant.ssn'] } })).status).toBe(
      200,
    );
    await runUntilRecorded(baseId, { applicant: { score: 700, ssn: '1' } }, (input) => JSON.stringify(input).includes('***'));
    const stats = async () =>
      (await call(stack, 'GET', `/decisions/stats/${baseId}`, { key: key.admin })).body as {
        recorded: number;
        dropped: { settings: number };
      };
    /** One run, and whether its record was stored or dropped for unreadable settings. */
    const probe = async (): Promise<'recorded' | 'dropped'> => {
      const before = await stats();
      const run = await call(stack, 'POST', `/run/policy/${baseId}`, { key: key.admin, body: { applicant: { score: 700, ssn: 'p' } } });
      expect(run.status).toBe(200);
      return until(async () => {
        const now = await stats();
        if (now.dropped.settings > before.dropped.settings) return 'dropped' as const;
        return now.recorded > before.recorded ? ('recorded' as const) : undefined;
      }, 'the probe recorded or dropped');
    };

    // Settings written before the bounds existed, past the bus limit: the audit service cannot answer them any more.
    const db = new pg.Client({ connectionString: companionDatabaseUrl(stack.env.DATABASE_URL!, 'audit') });
    await db.connect();
    const legacy = Array.from({ length: 90 }, (_, i) => `019ad000-0000-7000-8000-${String(i).padStart(12, '0')}`);
    const masks = Array.from({ length: MAX_MASKS }, (_, i) => `m${i}.${'x'.repeat(190)}`);
    try {
      await db.query(
        "insert into decision_settings (org_id, base_id, settings) select $1, unnest($2::text[]), jsonb_build_object('enabled', true, 'sampleRate', 1, 'masks', $3::jsonb)",
        [stack.orgId, legacy, JSON.stringify(masks)],
      );
    } finally {
      await db.end();
    }
    expect((await call(stack, 'GET', '/decisions/settings', { key: key.admin })).status).toBe(422);
    // A change that makes them larger still is refused, and changes nothing.
    const refused = await call(stack, 'PUT', `/decisions/settings/${baseId}`, {
      key: key.admin,
      body: { masks: ['applicant.ssn', 'applicant.name'] },
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(413);

    // The execution service reads them again within DECISIONS_SETTINGS_TTL_MS and stops recording the org.
    await until(async () => ((await probe()) === 'dropped' ? true : undefined), 'a run dropped for unreadable settings');
    const recorded = (await stats()).recorded;
    // Runs go on answering; their records are dropped (reason `settings`), never sent with the masks held before.
    const dropped = async (runs: number) => {
      const from = (await stats()).dropped.settings;
      for (let i = 0; i < runs; i++) {
        const run = await call(stack, 'POST', `/run/policy/${baseId}`, { key: key.admin, body: { applicant: { score: 700, ssn: 'x' } } });
        expect(run.status).toBe(200);
      }
      return until(async () => {
        const now = (await stats()).dropped.settings;
        return now >= from + runs ? now - from : undefined;
      }, `${runs} drops for unreadable settings`);
    };
    expect(await dropped(5)).toBe(5);
    expect((await stats()).recorded).toBe(recorded);
    // Restarted, the execution service cannot read them either: still nothing recorded without masks.
    await stack.stopService('execution');
    await stack.startService('execution');
    expect(await dropped(3)).toBe(3);
    expect((await stats()).recorded).toBe(recorded);

    // The old settings removed (DELETE needs no live base), the settings read again: recorded, masked.
    for (const id of legacy) expect((await call(stack, 'DELETE', `/decisions/settings/${id}`, { key: key.admin })).status).toBe(204);
    expect((await call(stack, 'GET', '/decisions/settings', { key: key.admin })).status).toBe(200);
    await until(async () => ((await probe()) === 'recorded' ? true : undefined), 'a run recorded again');
    expect((await inputsOf(baseId))[0]).toEqual({ applicant: { score: 700, ssn: '***' } });
  });
});

/**
 * A run whose caller already got `timeout` is not a decision, even when the execution service
 * finishes it later: one worker thread, a short gateway wait and a policy that takes well over it.
 */
describe('decision records of runs answered too late', () => {
  let late: Stack;
  // Two levels of `any` over the list: n² steps, n sized so that the run takes about 3 s on this
  // machine (timed in this process on 1,000² steps, the best of five), well over the gateway's 400 ms
  // wait. A fixed n is luck: 6·10⁸ steps took 1.4–6 s on one day and over 20 s on another.
  const SLOW_RULE =
    'A **x** is slow if any of the __n__ of the **x** where (any of the __n__ of the **x** where (its is greater than 1000000)).';
  const small = { x: { n: [1, 2, 3] } };
  const big = (() => {
    const policy = compile(SLOW_RULE);
    const probe = { x: { n: Array.from({ length: 1000 }, (_, i) => i) } };
    let best = Infinity;
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      policy.evaluate(probe, { stepBudget: Number.MAX_SAFE_INTEGER });
      best = Math.min(best, performance.now() - started);
    }
    const n = Math.max(1000, Math.round(1000 * Math.sqrt(3000 / Math.max(best, 0.01))));
    return { x: { n: Array.from({ length: n }, (_, i) => i) } };
  })();

  beforeAll(async () => {
    late = await startStack({
      services: ['execution', 'registry', 'audit', 'gateway'],
      env: {
        DECISIONS_FLUSH_MS: '50',
        DECISIONS_SETTINGS_TTL_MS: '200',
        ENGINE_TIMEOUT_MS: '400',
        EXEC_POOL_SIZE: '1',
        EXEC_STEP_BUDGET: '10000000000',
        EXEC_TASK_TIMEOUT_MS: '60000',
      },
    });
  }, 120_000);
  afterAll(async () => late?.stop());

  it('does not record a run finished after the caller got 504 timeout', async () => {
    const created = await call(late, 'POST', '/policy', { key: late.adminKey, body: { name: 'Runaway', rule: SLOW_RULE } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const baseId = created.body.baseId as string;
    const published = await call(late, 'PUT', `/policy/${created.body.policyId}`, { key: late.adminKey, body: { status: 'published' } });
    expect(published.status).toBe(201);
    const decisions = async (): Promise<Array<{ input: unknown }>> => {
      const res = await call(late, 'GET', `/decisions?baseId=${baseId}&limit=200`, { key: late.adminKey });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.items;
    };
    // Untraced: a traced run has the much smaller traced step budget.
    const run = (data: unknown) => call(late, 'POST', `/run/policy/${baseId}?trace=false`, { key: late.adminKey, body: data });
    // A first run resolves and compiles the policy, so the slow run below starts at once.
    expect((await run(small)).status).toBe(200);
    await until(async () => ((await decisions()).length === 1 ? true : undefined), 'the first run recorded');

    const slow = await run(big);
    expect(slow.status, JSON.stringify(slow.body).slice(0, 500)).toBe(504);
    expect(slow.body).toMatchObject({ code: 'timeout' });
    // The single worker runs nothing else until the slow run is done: the first small run to answer
    // 200 ran after it (those queued behind it time out unrecorded), and its record is written after
    // the slow run's would have been.
    await until(async () => ((await run(small)).status === 200 ? true : undefined), 'a run answered after the slow one');
    const items = await until(async () => {
      const got = await decisions();
      return got.length >= 2 ? got : undefined;
    }, 'the second small run recorded');
    expect(items.map((d) => d.input)).toEqual([small, small]);
  });
});
