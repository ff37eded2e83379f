/**
 * Checking a flow definition compiles its decision tables, which takes long for a big one (a
 * 1,000-row × 50-input table: hundreds of milliseconds). Saving, publishing and importing flows
 * must do it in the registry's worker threads, never on the main thread that answers everyone.
 */
import {
  ExportPage,
  ExportSubject,
  FlowDefinition,
  FlowRecord,
  FlowUpdateReply,
  ImportSubject,
  RegistrySubject as S,
  type BundleBase,
} from '@arbiter/contracts';
import { validateDefinition } from '@arbiter/flow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, startTestEnv, type TestEnv } from './support.js';

let env: TestEnv;
beforeAll(async () => {
  env = await startTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const publisher = as('publisher');

/** A 1,000-row × 50-input decision table (about 790 KB of JSON); `badCell` makes one cell unparsable. */
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

/** CPU time (ms) this thread has used: unlike the clock, it does not grow while other processes have the machine's cores. */
function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/** What `validateDefinition` finds in `definition`, and this thread's CPU time finding it (on a fresh copy: compiles are cached per node object). */
function checked(definition: FlowDefinition) {
  const copy = FlowDefinition.parse(JSON.parse(JSON.stringify(definition)));
  const before = threadCpuMs();
  const problems = validateDefinition(copy);
  return { problems, cpuMs: threadCpuMs() - before };
}

/** This thread's CPU time while `request` is answered (the registry runs on this thread; its workers are threads of their own). */
async function cpuOf<T>(request: () => Promise<T>): Promise<{ answer: T; cpuMs: number }> {
  const pending = request();
  const before = threadCpuMs();
  const answer = await pending;
  return { answer, cpuMs: threadCpuMs() - before };
}

/**
 * The same table with nothing to compile: every cell `-`, the cells' text moved into an output
 * value instead, so the request has as many bytes (its JSON, schema check and SQL cost the same).
 */
function twinOf(definition: FlowDefinition): FlowDefinition {
  const table = definition.nodes.t;
  if (table.type !== 'table') throw new Error('a table node `t` is expected');
  const rules = table.rules.map((rule) => ({ when: rule.when.map(() => '-'), then: { ...rule.then, pad: rule.when.join('').slice(50) } }));
  return { start: 't', nodes: { t: { ...table, outputs: [...table.outputs, { name: 'pad' }], rules } } };
}

/** Main-thread CPU time of saving `definition` as a new flow, then publishing it. */
async function saveAndPublish(name: string, definition: FlowDefinition) {
  const saved = await cpuOf(() => env.call(S.flowCreate, { principal: publisher, name, definition }, FlowRecord));
  const published = await cpuOf(() =>
    env.call(S.flowUpdate, { principal: publisher, flowId: saved.answer.flowId, status: 'published' }, FlowUpdateReply),
  );
  expect(published.answer.outcome).toBe('published');
  return { save: saved.cpuMs, publish: published.cpuMs };
}

describe('big decision tables', () => {
  it('saves and publishes a flow with one, compiling it in a worker: the main thread spends no more than on a table with nothing to compile', async () => {
    const definition = bigTable();
    const twin = twinOf(definition);
    expect(Math.abs(JSON.stringify(twin).length - JSON.stringify(definition).length)).toBeLessThan(JSON.stringify(definition).length / 50);
    // Warm both sides (engine code, JIT) so no measurement pays for a first load.
    await saveAndPublish('warm-up', bigTable());
    await saveAndPublish('warm-up twin', twinOf(bigTable()));
    checked(bigTable());

    // Three rounds, the least of each: a collector's pass or a busy machine only ever adds to one
    // request, while a compile on this thread would add to every round of the big table.
    const bigs: Array<{ save: number; publish: number }> = [];
    const plains: Array<{ save: number; publish: number }> = [];
    for (let round = 0; round < 3; round++) {
      bigs.push(await saveAndPublish(`Big table ${round}`, definition));
      plains.push(await saveAndPublish(`Big table, nothing to compile ${round}`, twin));
    }
    const least = (runs: Array<{ save: number; publish: number }>) => ({
      save: Math.min(...runs.map((r) => r.save)),
      publish: Math.min(...runs.map((r) => r.publish)),
    });
    const big = least(bigs);
    const plain = least(plains);
    const compile = checked(definition);
    // On the main thread, the big table's compile would add about `compile.cpuMs` to each request
    // over its twin's; off it, the two cost this thread about the same. CPU time, not the clock:
    // a loaded machine stretches them alike.
    const extra = { save: (big.save - plain.save) / compile.cpuMs, publish: (big.publish - plain.publish) / compile.cpuMs };
    expect({ ...extra, big, plain, compileMs: compile.cpuMs }).toMatchObject({
      save: expect.toSatisfy((r: number) => r < 0.5),
      publish: expect.toSatisfy((r: number) => r < 0.5),
    });
  }, 180_000);

  it('answers a bad table exactly as before: validation_failed with every problem, in order, on save and on import', async () => {
    const definition = bigTable({ row: 500, input: 7 });
    const { problems } = checked(definition);
    expect(problems.map((p) => p.code)).toEqual(['invalid_cell']);
    const err = await env.fail(S.flowCreate, { principal: publisher, name: 'bad', definition });
    expect(err.code).toBe('validation_failed');
    expect(err.message).toBe(`invalid flow: ${problems.map((p) => p.message).join('; ')}`);
    expect(err.errors).toEqual(problems);

    // The same table in an import bundle: the problem's path is prefixed with the record's place.
    const source = as('admin', { orgId: 'big-table-source' });
    await env.call(S.flowCreate, { principal: source, name: 'exported', definition: bigTable() }, FlowRecord);
    const flows = (await env.call(ExportSubject, { principal: source, section: 'flows' }, ExportPage)).items as BundleBase[];
    flows[0].records[0].definition = definition;
    const bundle = { format: 'arbiter-bundle', formatVersion: 1, orgId: source.orgId, exportedAt: new Date().toISOString() };
    const refused = await env.fail(ImportSubject, {
      principal: as('admin', { orgId: 'big-table-target' }),
      bundle: { ...bundle, policies: [], flows, groups: [] },
      dryRun: true,
    });
    expect(refused.code).toBe('validation_failed');
    expect(refused.errors).toEqual(problems.map((p) => ({ ...p, path: `flows.0.records.0.definition.${p.path}` })));
  });
});
