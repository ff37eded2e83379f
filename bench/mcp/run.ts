/**
 * `npm run bench:mcp`: the cost of an MCP `evaluate_rules` call against a `POST /run` of the same
 * rule and data (both with the trace), on the same stack, measured in the same run (autocannon,
 * same connections and duration, alternating rounds), through both MCP doors: the mcp service's own
 * port (`MCP_HTTP_PORT`, where the Kubernetes ingress routes `/mcp`) and the gateway's `/mcp`
 * (forwarded over the bus). Cost is CPU per call summed over every serving process (gateway, mcp,
 * execution with its workers, nats-server, redis-server: the bench's own servers) as `bench:http`
 * counts it. Target: evaluate_rules on the mcp service's own port ≤ 1.6× the CPU of a `POST /run`.
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
    mcpHttp: true,
    env: { ...BENCH_STACK_ENV, NATS_URL: nats.url, REDIS_URL: redis.url },
  });
  const pids = () =>
    ['gateway', 'mcp', 'execution'].map((s) => stack.pid(s as 'gateway')).concat(nats.process?.pid, redis.process?.pid) as number[];
  try {
    const runUrl = `${stack.baseUrl}/run`;
    const directUrl = `${stack.mcpUrl()}/mcp`;
    const viaGatewayUrl = `${stack.baseUrl}/mcp`;
    const runBody = JSON.stringify({ rule: LICENCE_POLICY, data: LICENCE_DATA });
    // Stateless Streamable HTTP: every call is one self-contained JSON-RPC request.
    const mcpBody = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'evaluate_rules', arguments: { rule: LICENCE_POLICY, data: LICENCE_DATA } },
    });
    const mcpHeaders = { 'x-mcp-api-key': stack.adminKey, accept: 'application/json, text/event-stream' };

    for (const url of [directUrl, viaGatewayUrl]) {
      const check = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...mcpHeaders }, body: mcpBody });
      const text = await check.text();
      if (check.status !== 200 || !text.includes('"result\\":true'))
        throw new Error(`evaluate_rules at ${url} answered ${check.status}: ${text.slice(0, 300)}`);
    }

    const runTarget = { url: runUrl, body: runBody, headers: { 'x-api-key': stack.adminKey }, pids };
    const directTarget = { url: directUrl, body: mcpBody, headers: mcpHeaders, pids };
    const viaGatewayTarget = { url: viaGatewayUrl, body: mcpBody, headers: mcpHeaders, pids };
    await measure('warm-up', runTarget, { duration: 2 });
    await measure('warm-up', directTarget, { duration: 2 });
    await measure('warm-up', viaGatewayTarget, { duration: 2 });
    const slice = Math.max(1, Math.round(DURATION_S / ROUNDS));
    const runRounds: Measured[] = [];
    const directRounds: Measured[] = [];
    const viaGatewayRounds: Measured[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      runRounds.push(await measure('POST /run', runTarget, { duration: slice }));
      directRounds.push(await measure('MCP own port', directTarget, { duration: slice }));
      viaGatewayRounds.push(await measure('MCP via gateway', viaGatewayTarget, { duration: slice }));
    }
    const run = combineRounds('POST /run', runRounds);
    const direct = combineRounds('MCP own port', directRounds);
    const viaGateway = combineRounds('MCP via gateway', viaGatewayRounds);
    const all = [run, direct, viaGateway];

    console.log(`\n${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${slice} s each, 7-rule policy\n`);
    for (const m of all) console.log(formatRow(m, 20));
    const names = ['gateway', 'mcp', 'execution', 'nats-server', 'redis-server'];
    for (const m of all) {
      console.log(
        `  ${m.name.padEnd(20)} ${(m.cpuUsByProcess ?? []).map((us, k) => `${names[k]} ${(us / (m.requests ?? 1)).toFixed(0)}`).join('   ')} µs`,
      );
    }
    const cpuRun = cpuPerRequest(run);
    console.log('');
    for (const m of [direct, viaGateway]) {
      const cpu = cpuPerRequest(m);
      console.log(
        `CPU of evaluate_rules (${m.name}) / CPU of POST /run: ${cpuRun && cpu ? (cpu / cpuRun).toFixed(2) : 'n/a'}x` +
          `${m === direct ? '   (target <= 1.6x)' : ''}; throughput /run / evaluate_rules: ${(run.rps / m.rps).toFixed(2)}x`,
      );
    }
    const date = new Date().toISOString();
    for (const m of all) console.log(jsonLine('mcp', m, date));
    reportFailures(all);
  } finally {
    await stack.stop();
    await nats.stop();
    await redis.stop();
  }
}

await main();
