/**
 * `npm run bench:profile`: `POST /run` (16 connections, trace on; `BENCH_TRACE=off` for trace off)
 * through the full path with the gateway and execution under `--cpu-prof`, on the bench's own
 * nats-server and redis-server, then prints the top self-time entries of each profile (the main
 * thread of each process; worker threads are not profiled by `--cpu-prof`). `BENCH_DURATION`
 * seconds of load (default 8) after a 2 s warm-up; `BENCH_TOP` entries (default 25). `BENCH_LOAD=batch`: `/run/batch`;
 * `BENCH_LOAD=mcp`: MCP `evaluate_rules` calls, the mcp service profiled too.
 */

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startNatsServer, startRedisServer } from '@arbiter/test-kit';
import { startStack } from '../../test/e2e/harness.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';
import { BENCH_STACK_ENV, DURATION_S, formatRow, measure, runsOn } from '../load.js';

const TOP = Number(process.env.BENCH_TOP ?? 25);
const TRACE = process.env.BENCH_TRACE !== 'off';
/** `BENCH_LOAD=batch`: `POST /run/batch` of `BENCH_BATCH_ITEMS` items (default 100) on 4 connections instead of `POST /run`. */
const BATCH = process.env.BENCH_LOAD === 'batch';
/** `BENCH_LOAD=mcp`: MCP `evaluate_rules` calls (`POST /mcp`, as `bench:mcp` sends them), with the mcp service profiled too. */
const MCP = process.env.BENCH_LOAD === 'mcp';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/** Self time by function (name, file and line), as a share of all samples. */
function topSelf(file: string, top: number): string[] {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  for (const [i, id] of profile.samples.entries()) {
    const node = byId.get(id);
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    if (!node) continue;
    const f = node.callFrame;
    const where = f.url ? `${f.url.replace(/^.*\/(node_modules|services|libs)\//, '$1/')}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, t]) => `${((t / total) * 100).toFixed(1).padStart(5)} %  ${k}`);
}

async function main(): Promise<void> {
  console.log(`bench:profile on ${runsOn()}, trace ${TRACE ? 'on' : 'off'}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'arbiter-profile-'));
  const nats = await startNatsServer();
  const redis = await startRedisServer();
  try {
    const stack = await startStack({
      services: MCP ? ['execution', 'mcp', 'gateway'] : ['execution', 'gateway'],
      env: { ...BENCH_STACK_ENV, NATS_URL: nats.url, REDIS_URL: redis.url },
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
    });
    const pids = {
      gateway: stack.pid('gateway'),
      execution: stack.pid('execution'),
      ...(MCP ? { mcp: stack.pid('mcp') } : {}),
    };
    try {
      const body = BATCH
        ? JSON.stringify({
            rule: LICENCE_POLICY,
            items: Array.from({ length: Number(process.env.BENCH_BATCH_ITEMS ?? 100) }, () => LICENCE_DATA),
            ...(TRACE ? {} : { trace: false }),
          })
        : JSON.stringify({ rule: LICENCE_POLICY, data: LICENCE_DATA, ...(TRACE ? {} : { trace: false }) });
      const target: { url: string; body: string; headers: Record<string, string> } = MCP
        ? {
            url: `${stack.baseUrl}/mcp`,
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'evaluate_rules', arguments: { rule: LICENCE_POLICY, data: LICENCE_DATA } },
            }),
            headers: { 'x-mcp-api-key': stack.adminKey, accept: 'application/json, text/event-stream' },
          }
        : { url: `${stack.baseUrl}/run${BATCH ? '/batch' : ''}`, body, headers: { 'x-api-key': stack.adminKey } };
      const connections = BATCH ? 4 : undefined;
      await measure('warm-up', target, { duration: 2, ...(connections ? { connections } : {}) });
      console.log(
        formatRow(
          await measure(MCP ? 'MCP evaluate_rules' : BATCH ? 'POST /run/batch' : 'POST /run', target, {
            duration: DURATION_S,
            ...(connections ? { connections } : {}),
          }),
        ),
      );
    } finally {
      await stack.stop();
    }
    for (const [name, pid] of Object.entries(pids)) {
      // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread.
      const files = readdirSync(dir).filter((f) => f.includes(`.${pid}.`) && f.endsWith('.cpuprofile'));
      for (const file of files) {
        const thread = file.split('.')[4];
        console.log(`\n${name} (pid ${pid}) ${thread === '0' ? 'main thread' : `thread ${thread}`}: top ${TOP} self time`);
        for (const line of topSelf(path.join(dir, file), TOP)) console.log(`  ${line}`);
      }
      if (files.length === 0) console.log(`\n${name} (pid ${pid}): no profile written`);
    }
    console.log(`\nprofiles: ${dir}`);
  } finally {
    await nats.stop();
    await redis.stop();
  }
}

await main();
