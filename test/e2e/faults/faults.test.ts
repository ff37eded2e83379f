/**
 * The fault suite (issue 13): the whole stack under steady load on its own NATS, Redis and
 * PostgreSQL processes while each dependency is killed and frozen and each service is killed
 * (SIGKILL) and restarted. It prints, per fault, the answers by status, the slowest answer, the
 * time to recovery and the events lost, and fails on a 500, an error that is not an RFC 9457
 * problem, an answer slower than the deadline, no recovery, or a lost or duplicated event.
 * `npm run test:faults` runs it alone; `npm test` runs it with the other end-to-end suites.
 */

import { ArbiterEvent, eventStreamName } from '@arbiter/contracts';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startStack, type ServiceName, type Stack } from '../harness.js';
import { CLIENT_DEADLINE_MS, KINDS, startLoad, type Answer } from './load.js';
import { postgresUnavailable, startNats, startPostgres, startRedis, type Dependency } from './servers.js';

/** The slowest answer allowed: the gateway's longest deadline to a service (5 s) plus scheduling slack. */
const MAX_ANSWER_MS = 6500;
/** Every kind of request must succeed again within this time after the fault ends. */
const MAX_RECOVERY_MS = 30_000;
const FAULT_MS = 3000;
const SERVICES: ServiceName[] = ['execution', 'registry', 'governance', 'mcp', 'gateway'];

interface Fault {
  name: string;
  inject(): Promise<void>;
  restore(): Promise<void>;
}

interface Row {
  fault: string;
  answers: number;
  byStatus: Record<string, number>;
  slowestMs: number;
  recoveryMs: number | null;
  bad: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let nats: Dependency;
let redis: Dependency;
let postgres: Dependency | undefined;
const noPostgres = postgresUnavailable();
let stack: Stack;
const prefix = `faults_${Date.now().toString(36)}`;

beforeAll(async () => {
  [nats, redis] = await Promise.all([startNats(), startRedis()]);
  if (!noPostgres) postgres = await startPostgres();
  stack = await startStack({
    services: SERVICES,
    env: {
      NATS_URL: nats.url,
      REDIS_URL: redis.url,
      NATS_SUBJECT_PREFIX: prefix,
      ...(postgres
        ? { DATABASE_URL: `${postgres.url}/arbiter_faults`, GOVERNANCE_DATABASE_URL: `${postgres.url}/arbiter_faults_governance` }
        : {}),
      LOG_LEVEL: 'warn',
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop().catch(() => undefined);
  await Promise.allSettled([nats?.close(), redis?.close(), postgres?.close()]);
});

function dependencyFaults(dep: Dependency): Fault[] {
  return [
    { name: `${dep.name} killed`, inject: () => dep.kill(), restore: () => dep.start() },
    { name: `${dep.name} frozen`, inject: async () => dep.freeze(), restore: async () => dep.thaw() },
  ];
}

function serviceFault(name: ServiceName): Fault {
  return { name: `${name} killed -9`, inject: () => stack.killService(name), restore: () => stack.startService(name) };
}

/** When every kind of request has succeeded after `since`, or null if one has not yet. */
function recoveredAt(answers: Answer[], since: number): number | null {
  let last = 0;
  for (const kind of KINDS) {
    const ok = answers.find((a) => a.kind === kind && a.startedAt >= since && a.status >= 200 && a.status < 300);
    if (!ok) return null;
    last = Math.max(last, ok.startedAt + ok.ms);
  }
  return last;
}

/** What is wrong with the answers of one fault's window (empty when nothing is). */
function defects(window: Answer[]): string[] {
  const bad: string[] = [];
  const count = (p: (a: Answer) => boolean) => window.filter(p).length;
  if (count((a) => a.status === 500)) bad.push(`${count((a) => a.status === 500)} × 500`);
  const notProblem = window.filter((a) => a.status >= 400 && !a.problem);
  if (notProblem.length) bad.push(`${notProblem.length} errors not RFC 9457 (e.g. ${notProblem[0].kind} ${notProblem[0].status})`);
  const slow = window.filter((a) => a.ms > MAX_ANSWER_MS);
  if (slow.length) bad.push(`${slow.length} answers slower than ${MAX_ANSWER_MS} ms (slowest ${Math.max(...slow.map((a) => a.ms))} ms)`);
  return bad;
}

/** `created` events of policies in the stream, by policy id (a count above 1 is a duplicate). */
async function createdEvents(): Promise<Map<string, number>> {
  const nc = await connect({ servers: nats.url });
  const seen = new Map<string, number>();
  try {
    const consumer = await jetstream(nc).consumers.get(eventStreamName(prefix));
    const messages = await consumer.consume();
    for await (const m of messages) {
      const event = ArbiterEvent.parse(m.json());
      if (event.kind === 'created' && event.resource.type === 'policy') seen.set(event.resource.id, (seen.get(event.resource.id) ?? 0) + 1);
      if (m.info.pending === 0) break;
    }
  } finally {
    await nc.close();
  }
  return seen;
}

function printTable(rows: Row[], lost: number, duplicated: number): void {
  const statuses = [...new Set(rows.flatMap((r) => Object.keys(r.byStatus)))].sort();
  const header = ['fault', 'answers', ...statuses.map((s) => (s === '0' ? 'no answer' : s)), 'slowest ms', 'recovery ms', 'defects'];
  const lines = rows.map((r) => [
    r.fault,
    String(r.answers),
    ...statuses.map((s) => String(r.byStatus[s] ?? 0)),
    String(r.slowestMs),
    r.recoveryMs === null ? 'never' : String(r.recoveryMs),
    r.bad.join('; ') || 'none',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(' | ');
  const out = [fmt(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...lines.map(fmt)];
  out.push(`events: ${lost} lost, ${duplicated} duplicated (created events of every 201 create)`);
  if (noPostgres) out.push(`PostgreSQL faults not run: ${noPostgres} (the stack used the machine's PostgreSQL)`);
  process.stdout.write(`\nfault suite (${FAULT_MS} ms per dependency fault, load: ${KINDS.join(', ')})\n${out.join('\n')}\n\n`);
}

describe('fault suite', () => {
  it('answers every request cleanly through each fault, recovers by itself and loses no event', async () => {
    const draft = await call(stack, 'POST', '/policy', {
      key: stack.adminKey,
      body: { name: 'faults', rule: 'An **applicant** is adult if the __age__ of the **applicant** is at least 18.' },
    });
    expect(draft.status, JSON.stringify(draft.body)).toBe(201);
    const published = await call(stack, 'PUT', `/policy/${draft.body.policyId}`, { key: stack.adminKey, body: { status: 'published' } });
    expect(published.status, JSON.stringify(published.body)).toBe(201);

    const faults: Fault[] = [
      ...dependencyFaults(nats),
      ...dependencyFaults(redis),
      ...(postgres ? dependencyFaults(postgres) : []),
      ...SERVICES.map(serviceFault),
    ];
    const load = startLoad({ baseUrl: stack.baseUrl, key: stack.adminKey, baseId: draft.body.baseId });
    const rows: Row[] = [];
    try {
      await sleep(1500);
      const steady = load.answers.slice();
      expect(defects(steady)).toEqual([]);
      for (const fault of faults) {
        const from = load.answers.length;
        await fault.inject();
        await sleep(FAULT_MS);
        await fault.restore();
        const restoredAt = Date.now();
        let recovered: number | null = null;
        while (recovered === null && Date.now() - restoredAt < MAX_RECOVERY_MS) {
          await sleep(100);
          recovered = recoveredAt(load.answers.slice(from), restoredAt);
        }
        await sleep(500);
        const window = load.answers.slice(from);
        const byStatus: Record<string, number> = {};
        for (const a of window) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
        const bad = defects(window);
        if (recovered === null) bad.push(`not recovered within ${MAX_RECOVERY_MS} ms`);
        rows.push({
          fault: fault.name,
          answers: window.length,
          byStatus,
          slowestMs: Math.max(0, ...window.map((a) => a.ms)),
          recoveryMs: recovered === null ? null : Math.max(0, recovered - restoredAt),
          bad,
        });
      }
    } finally {
      await load.stop();
    }

    // Every 201 create has its `created` event in the stream, once (outboxes drain after recovery).
    const created = load.answers.filter((a) => a.createdId !== undefined).map((a) => a.createdId!);
    let events = new Map<string, number>();
    const deadline = Date.now() + 30_000;
    do {
      events = await createdEvents();
      if (created.every((id) => events.has(id))) break;
      await sleep(500);
    } while (Date.now() < deadline);
    const lost = created.filter((id) => !events.has(id)).length;
    const duplicated = [...events.values()].filter((n) => n > 1).length;
    printTable(rows, lost, duplicated);

    expect(created.length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.bad.length > 0).map((r) => `${r.fault}: ${r.bad.join('; ')}`)).toEqual([]);
    expect({ lost, duplicated }).toEqual({ lost: 0, duplicated: 0 });
    expect(CLIENT_DEADLINE_MS).toBeGreaterThan(MAX_ANSWER_MS);
  }, 600_000);
});
