/**
 * `npm run bench:mcp`: the cost of an MCP `evaluate_rules` call against a `POST /run` of the same
 * rule and data, both through the gateway on the same stack, measured in the same run (autocannon,
 * same connections and duration). Target: evaluate_rules ≤ 2× the cost of /run.
 */

import autocannon from 'autocannon';
import { startStack } from '../../test/e2e/harness.js';
import { LICENCE_DATA, LICENCE_POLICY } from '../fixtures.js';

const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

interface Measured {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  failures: number;
}

async function measure(name: string, url: string, headers: Record<string, string>, body: string, duration = DURATION_S): Promise<Measured> {
  const r = await autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, connections: CONNECTIONS, duration });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, failures: r.errors + r.timeouts + r.non2xx };
}

async function main(): Promise<void> {
  const stack = await startStack({ services: ['execution', 'mcp', 'gateway'], env: { LOG_LEVEL: 'warn' } });
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
    if (check.status !== 200 || !text.includes('"result\\":true')) throw new Error(`evaluate_rules answered ${check.status}: ${text.slice(0, 300)}`);

    await measure('warm-up', runUrl, { 'x-api-key': stack.adminKey }, runBody, 2);
    await measure('warm-up', mcpUrl, mcpHeaders, mcpBody, 2);
    const run = await measure('POST /run', runUrl, { 'x-api-key': stack.adminKey }, runBody);
    const mcp = await measure('MCP evaluate_rules', mcpUrl, mcpHeaders, mcpBody);

    console.log(`\n${CONNECTIONS} connections, ${DURATION_S} s each, 7-rule policy, through the gateway\n`);
    for (const m of [run, mcp]) {
      console.log(`${m.name.padEnd(20)} ${m.rps.toFixed(0).padStart(7)} req/s   p50 ${String(m.p50).padStart(4)} ms   p99 ${String(m.p99).padStart(4)} ms${m.failures ? `   (${m.failures} failed)` : ''}`);
    }
    console.log(`\ncost of evaluate_rules / cost of POST /run: ${(run.rps / mcp.rps).toFixed(2)}x   (target <= 2x)`);
    const date = new Date().toISOString();
    for (const m of [run, mcp]) console.log(JSON.stringify({ bench: 'mcp', name: m.name, rps: Math.round(m.rps), p50: m.p50, p99: m.p99, failures: m.failures, date }));
  } finally {
    await stack.stop();
  }
}

await main();
