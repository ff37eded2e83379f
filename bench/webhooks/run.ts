/**
 * `npm run bench:webhooks`: the webhooks service (a built `dist/main.js` process in a stack with the
 * gateway) measured with local receivers:
 *
 * 1. healthy receiver: events published on the stream at `BENCH_WEBHOOKS_RATE` (200) a second for
 *    `BENCH_WEBHOOKS_SECONDS` (20); for each, the time from its publish ack (committed to the
 *    stream) to its arrival at the receiver; p50/p99 (target p99 <= 1 s);
 * 2. the same load while another org's endpoint never answers (every attempt hangs until the
 *    10 s deadline) receives the same number of events: the healthy endpoint's p99 against round 1's
 *    (target within 1.2x).
 * The machine is shared: figures are noisy, compare the ratio of one run.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventSubject, type ArbiterEvent } from '@arbiter/contracts';
import { connectBus, createLogger } from '@arbiter/service-kit';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { call, startStack, type Stack } from '../../test/e2e/harness.js';

const RATE = Number(process.env.BENCH_WEBHOOKS_RATE ?? 200);
const SECONDS = Number(process.env.BENCH_WEBHOOKS_SECONDS ?? 20);

/** A receiver noting when each `webhook-id` first arrived; `hang` never answers. */
async function receiver(hang = false): Promise<{ url: string; arrived: Map<string, number>; server: Server; held: ServerResponse[] }> {
  const arrived = new Map<string, number>();
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const id = String(req.headers['webhook-id']);
    if (!arrived.has(id)) arrived.set(id, performance.now());
    req.resume();
    req.on('end', () => (hang ? held.push(res) : res.writeHead(204).end()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrived, server, held };
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** Publishes `RATE` events a second for `SECONDS` to `orgIds` (one each per tick), noting each one's publish-ack time. */
async function load(js: JetStreamClient, prefix: string, orgIds: string[]): Promise<Map<string, number>> {
  const acked = new Map<string, number>();
  const total = RATE * SECONDS;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    for (const orgId of orgIds) {
      const e: ArbiterEvent = {
        eventId: randomUUID(),
        orgId,
        kind: 'edited',
        at: new Date().toISOString(),
        actor: { userId: 'bench' },
        resource: { type: 'policy', id: randomUUID(), baseId: randomUUID() },
        details: { i },
      };
      pending.push(
        js.publish(eventSubject(prefix, orgId, e.kind), JSON.stringify(e), { msgID: e.eventId }).then(() => {
          if (orgId === orgIds[0]) acked.set(e.eventId, performance.now());
        }),
      );
    }
  }
  await Promise.all(pending);
  return acked;
}

async function round(stack: Stack, js: JetStreamClient, orgIds: string[], healthy: Map<string, number>): Promise<number[]> {
  healthy.clear();
  const acked = await load(js, stack.env.NATS_SUBJECT_PREFIX, orgIds);
  const deadline = performance.now() + 120_000;
  while ([...acked.keys()].some((id) => !healthy.has(id)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  const missing = [...acked.keys()].filter((id) => !healthy.has(id)).length;
  if (missing > 0) console.error(`${missing} events not delivered within 120 s`);
  return [...acked]
    .filter(([id]) => healthy.has(id))
    .map(([id, t]) => healthy.get(id)! - t)
    .sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const stack = await startStack({
    services: ['webhooks', 'gateway'],
    env: { LOG_LEVEL: 'warn', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_ALLOW_HTTP: 'true', RATE_LIMIT_MAX: '100000' },
  });
  const good = await receiver();
  const stuck = await receiver(true);
  try {
    const created = stack.admin(['create-org', 'slowpoke', '--admin', 'sam']);
    if (created.status !== 0) throw new Error(created.stderr);
    const slowKey = /\n\s+(\S+)\s*$/.exec(created.stdout)![1];
    const hook = await call(stack, 'POST', '/webhooks', { key: stack.adminKey, body: { url: good.url, events: ['edited'] } });
    if (hook.status !== 201) throw new Error(JSON.stringify(hook.body));
    const bus = await connectBus({
      url: stack.env.NATS_URL,
      prefix: stack.env.NATS_SUBJECT_PREFIX,
      name: 'bench-webhooks',
      logger: createLogger({ service: 'bench', level: 'silent' }),
    });
    const js = jetstream(bus.nc, { timeout: 30_000 });

    const alone = await round(stack, js, [stack.orgId], good.arrived);
    const slow = await call(stack, 'POST', '/webhooks', { key: slowKey, body: { url: stuck.url, events: ['edited'] } });
    if (slow.status !== 201) throw new Error(JSON.stringify(slow.body));
    const beside = await round(stack, js, [stack.orgId, 'slowpoke'], good.arrived);
    await bus.close();

    const row = (name: string, l: number[]) =>
      `| ${name} | ${l.length} | ${pct(l, 50).toFixed(0)} | ${pct(l, 99).toFixed(0)} | ${(l.at(-1) ?? NaN).toFixed(0)} |`;
    console.log(`\nwebhooks: ${RATE} events/s for ${SECONDS} s, committed (publish ack) → received, ms\n`);
    console.log('| round | delivered | p50 | p99 | max |\n|---|---|---|---|---|');
    console.log(row('healthy receiver alone', alone));
    console.log(row('beside a receiver that never answers', beside));
    const ratio = pct(beside, 99) / pct(alone, 99);
    console.log(
      `\np99 alone ${pct(alone, 99) <= 1000 ? '<=' : '>'} 1 s (target <= 1 s); p99 beside / alone = ${ratio.toFixed(2)}x (target <= 1.2x)`,
    );
  } finally {
    for (const res of stuck.held) res.destroy();
    for (const r of [good, stuck]) {
      r.server.closeAllConnections();
      await new Promise((resolve) => r.server.close(resolve));
    }
    await stack.stop();
  }
}

await main();
