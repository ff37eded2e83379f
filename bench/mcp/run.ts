/**
 * `npm run bench:mcp`: the cost of an MCP `evaluate_rules` call against a `POST /run` of the same
 * rule and data (both with the trace), both through the gateway on the same stack, measured in the
 * same run (autocannon, same connections and duration, alternating rounds). Cost is CPU per call
 * summed over every serving process (gateway, mcp, execution with its workers, nats-server,
 * redis-server: the bench's own servers) as `bench:http` counts it. Target: evaluate_rules ≤ 1.6×
 * the CPU of a `POST /run`.
 */

import { startNatsServer, startRedisServer } from '@arbiter/test-kit';
import { startStack } from '../../test/e2e/harness.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';
import {
  BENCH_STACK_ENV,
  combineRounds,
  CONNECTIONS,
  DURATION_S,
  formatRow,
  jsonLine,
  cpuPerRequest,
  measure,
  reportFailures,
  runsOn,
  type Measured,
} from '../load.js';

/** The two loads alternate in rounds so drifting background load hits both alike. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);

async function main(): Promise<void> {
  console.log(`bench:mcp on ${runsOn()}`);
  const nats = await startNatsServer();
  const redis = await startRedisServer();
  const stack = await startStack({
    services: ['execution', 'mcp', 'gateway'],
    env: { ...BENCH_STACK_ENV, NATS_URL: nats.url, REDIS_URL: redis.url },
  });
  const pids = () =>
    ['gateway', 'mcp', 'execution'].map((s) => stack.pid(s as 'gateway')).concat(nats.process?.pid, redis.process?.pid) as number[];
  try {
    const runUrl = `${stack.baseUrl}/run`;
    const mcpUrl = `${stack.baseUrl}/mcp`;
    const runBody = JSON.stringify({ rule: LICENCE_POLICY, data: LICENCE_DATA });
    // Stateless Streamable HTTP: every call is one self-contained JSON-RPC request.
    const mcpBody = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'evaluate_rules', arguments: { rule: LICENCE_POLICY, data: LICENCE_DATA } },
    });
    const mcpHeaders = { 'x-mcp-api-key': stack.adminKey, accept: 'application/json, text/event-stream' };

    const check = await fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...mcpHeaders }, body: mcpBody });
    const text = await check.text();
    if (check.status !== 200 || !text.includes('"result\\":true'))
      throw new Error(`evaluate_rules answered ${check.status}: ${text.slice(0, 300)}`);

    const runTarget = { url: runUrl, body: runBody, headers: { 'x-api-key': stack.adminKey }, pids };
    const mcpTarget = { url: mcpUrl, body: mcpBody, headers: mcpHeaders, pids };
    await measure('warm-up', runTarget, { duration: 2 });
    await measure('warm-up', mcpTarget, { duration: 2 });
    const slice = Math.max(1, Math.round(DURATION_S / ROUNDS));
    const runRounds: Measured[] = [];
    const mcpRounds: Measured[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      runRounds.push(await measure('POST /run', runTarget, { duration: slice }));
      mcpRounds.push(await measure('MCP evaluate_rules', mcpTarget, { duration: slice }));
    }
    const run = combineRounds('POST /run', runRounds);
    const mcp = combineRounds('MCP evaluate_rules', mcpRounds);

    console.log(`\n${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${slice} s each, 7-rule policy, through the gateway\n`);
    for (const m of [run, mcp]) console.log(formatRow(m, 20));
    const names = ['gateway', 'mcp', 'execution', 'nats-server', 'redis-server'];
    for (const m of [run, mcp]) {
      console.log(
        `  ${m.name.padEnd(20)} ${(m.cpuUsByProcess ?? []).map((us, k) => `${names[k]} ${(us / (m.requests ?? 1)).toFixed(0)}`).join('   ')} µs`,
      );
    }
    const cpuRun = cpuPerRequest(run);
    const cpuMcp = cpuPerRequest(mcp);
    console.log(
      `\nCPU of evaluate_rules / CPU of POST /run: ${cpuRun && cpuMcp ? (cpuMcp / cpuRun).toFixed(2) : 'n/a'}x   (target <= 1.6x);` +
        ` throughput /run / evaluate_rules: ${(run.rps / mcp.rps).toFixed(2)}x`,
    );
    const date = new Date().toISOString();
    for (const m of [run, mcp]) console.log(jsonLine('mcp', m, date));
    reportFailures([run, mcp]);
  } finally {
    await stack.stop();
    await nats.stop();
    await redis.stop();
  }
}

await main();
