/**
 * Checking a flow definition compiles its decision tables, which takes long for a big one (a
 * 1,000-row × 50-input table: hundreds of milliseconds). `POST /flow/test` must do it in the
 * workers, as the caller's work, never on the main thread that answers everyone else's requests.
 */
import { FlowDefinition, FlowRunResponse, StoredRunSubject, type FlowTestInput } from '@arbiter/contracts';
import { validateDefinition } from '@arbiter/flow';
import { connectBus, inProcessKit, loadConfig, type Bus } from '@arbiter/service-kit';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecConfig } from '../src/config.js';
import { startExecution, type Execution } from '../src/service.js';
import { dropKeys, NATS_URL, randomPrefix, rejection, REDIS_URL, silentLogger } from './helpers.js';

const prefix = randomPrefix();
const logger = silentLogger();
const viewer = { orgId: 'acme', userId: 'viewer', role: 'viewer' as const };

let exec: Execution;
let client: Bus;

beforeAll(async () => {
  const config = loadConfig(ExecConfig, {
    NATS_URL,
    REDIS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    EXEC_POOL_SIZE: '1',
    EXEC_INDEX_FLUSH_MS: '600000',
    // A shared, slow machine must not turn the big compile into a time-out: this test is about where it runs.
    EXEC_TASK_TIMEOUT_MS: '60000',
  });
  exec = await startExecution(inProcessKit('exec-offthread-test', config, { logger, metrics: new Registry() }));
  client = await connectBus({ url: NATS_URL, prefix, name: 'exec-offthread-client', logger });
});

afterAll(async () => {
  await client?.close();
  await exec?.close();
  await dropKeys(prefix);
});

/** A 1,000-row × 50-input decision table (about 790 KB of JSON): row `r` matches `in0 = r` and every other input `"Z"`. */
function bigTable(badCell?: { row: number; input: number }): FlowDefinition {
  const inputs = Array.from({ length: 50 }, (_, i) => ({ name: `in${i}`, path: `a.f${i}` }));
  const rules = Array.from({ length: 1000 }, (_, r) => ({
    when: inputs.map((_, i) => {
      if (badCell?.row === r && badCell.input === i) return 'is between and';
      if (i === 0) return `${r}`;
      return i % 3 === 0 ? `matches pattern "^Z${r % 7}?$"` : i % 3 === 1 ? `!= "A${r}"` : '-';
    }),
    then: { row: r },
  }));
  return { start: 't', nodes: { t: { type: 'table', hitPolicy: 'first', inputs, outputs: [{ name: 'row' }], rules } } };
}

const flowTest = (definition: FlowDefinition, data: Record<string, unknown>) =>
  client.request(
    StoredRunSubject.flowTest,
    { principal: viewer, definition, data, trace: false } satisfies FlowTestInput,
    FlowRunResponse,
    {
      timeoutMs: 60_000,
    },
  );

/** CPU time (ms) this thread has used: unlike the clock, it does not grow while other processes have the machine's cores. */
function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/** This thread's CPU time checking `definition` (on a fresh copy: compiles are cached per node object). */
function compileCpuMs(definition: FlowDefinition): number {
  const copy = FlowDefinition.parse(JSON.parse(JSON.stringify(definition)));
  const before = threadCpuMs();
  validateDefinition(copy);
  return threadCpuMs() - before;
}

describe('POST /flow/test with a big decision table', () => {
  it('compiles it in a worker: the main thread spends a small part of the compile on the whole request', async () => {
    const definition = bigTable();
    const data = { a: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, i === 0 ? 999 : 'Z'])) };
    // Warm both sides (engine code, JIT) so neither measurement pays for a first load.
    expect((await flowTest(bigTable(), data)).result).toEqual({ row: 999 });
    compileCpuMs(bigTable());
    const pending = flowTest(definition, data);
    const before = threadCpuMs();
    const answer = await pending;
    const requestCpuMs = threadCpuMs() - before;
    const ownCompileCpuMs = compileCpuMs(definition);
    expect(answer.result).toEqual({ row: 999 });
    // The service's main thread is this one (its workers are threads of their own): on it the
    // compile alone would take about `ownCompileCpuMs`; off it, what is left of the request (its
    // JSON, the schema check, the hash of the table) is a small part of that. CPU time, not the
    // clock: a loaded machine stretches both alike.
    expect({ requestCpuMs, ownCompileCpuMs, ratio: requestCpuMs / ownCompileCpuMs }).toMatchObject({
      ratio: expect.toSatisfy((r: number) => r < 0.5),
    });
  });

  it('answers a bad table exactly as before: validation_failed with every problem, in order', async () => {
    const definition = bigTable({ row: 500, input: 7 });
    const expected = validateDefinition(FlowDefinition.parse(JSON.parse(JSON.stringify(definition))));
    expect(expected.length).toBeGreaterThan(0);
    const err = await rejection(flowTest(definition, {}));
    expect(err.code).toBe('validation_failed');
    expect(err.message).toBe(`invalid flow definition: ${expected.map((p) => p.message).join('; ')}`);
    expect(err.errors).toEqual(expected);
  });
});
