// Baseline servers for the HTTP benchmark, each run as its own process like the gateway:
//   node servers.mjs inprocess  — one fastify process evaluating the same compiled policy (the no-microservices
//       floor); `"trace": false` in the body turns the trace off, as on the full path
//   node servers.mjs hello      — fastify answering a constant (the HTTP ceiling)
//   node servers.mjs skeleton-exec SUBJECT RESPONSE_JSON — the design's execution side with no work:
//       a queue-group subscriber handing each request to a piscina worker that returns RESPONSE_JSON
//   node servers.mjs skeleton-gateway SUBJECT — fastify forwarding each POST /run body over NATS to SUBJECT
//   node servers.mjs skeleton-gateway-coalesced SUBJECT — the same, sending the bodies received in one
//       event-loop turn as one NATS message (flushed in setImmediate, no timer)
//   node servers.mjs skeleton-exec-coalesced SUBJECT RESPONSE_JSON — answers such a message with one
//       piscina task for the whole batch and one reply
// The two skeleton processes are the bare hops of docs/architecture.md (HTTP → NATS → worker thread and back)
// without authentication, rate limiting, validation or evaluation: what any implementation of the
// design pays on this machine before doing anything.
import { availableParallelism } from 'node:os';
import Fastify from 'fastify';
import { connect } from '@nats-io/transport-node';
import { Piscina } from 'piscina';
import { compile } from '@arbiter/rule-lang';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

const mode = process.argv[2];
const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
if (mode === 'inprocess') {
  const cache = new Map();
  app.post('/run', async (req) => {
    const { rule, data, trace } = req.body;
    let policy = cache.get(rule);
    if (!policy) {
      policy = compile(rule);
      cache.set(rule, policy);
    }
    const r = policy.evaluate(data, { trace: trace !== false });
    return { result: r.result, trace: r.trace, outcomes: r.outcomes, ...(r.error ? { error: r.error, errorCode: r.errorCode } : {}) };
  });
} else if (mode === 'hello') {
  app.post('/run', async () => ({ hello: 'world' }));
} else if (mode === 'skeleton-gateway') {
  const nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
  const subject = process.argv[3];
  app.post('/run', async (req) => {
    const reply = await nc.request(subject, JSON.stringify(req.body), { timeout: 5000 });
    return reply.json().data;
  });
} else if (mode === 'skeleton-gateway-coalesced') {
  const nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
  const subject = process.argv[3];
  let turn = [];
  const flush = () => {
    const batch = turn;
    turn = [];
    nc.request(subject, `[${batch.map((b) => b.body).join(',')}]`, { timeout: 5000 }).then(
      (reply) => reply.json().data.forEach((data, i) => batch[i].resolve(data)),
      (err) => batch.forEach((b) => b.reject(err)),
    );
  };
  app.post(
    '/run',
    (req) =>
      new Promise((resolve, reject) => {
        if (turn.push({ body: JSON.stringify(req.body), resolve, reject }) === 1) setImmediate(flush);
      }),
  );
} else if (mode === 'skeleton-exec' || mode === 'skeleton-exec-coalesced') {
  const coalesced = mode === 'skeleton-exec-coalesced';
  const nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
  const size = Math.max(1, availableParallelism() - 1); // the execution service's default pool size
  const pool = new Piscina({
    filename: new URL('./skeleton-worker.mjs', import.meta.url).href,
    minThreads: size,
    maxThreads: size,
    workerData: { response: JSON.parse(process.argv[4]) },
  });
  nc.subscribe(process.argv[3], {
    queue: 'skeleton',
    callback: (_err, msg) => {
      const body = msg.json();
      const task = coalesced ? { items: body.map(({ rule, data }) => ({ rule, data })) } : { rule: body.rule, data: body.data };
      pool.run(task).then((response) => msg.respond(JSON.stringify({ ok: true, data: response })));
    },
  });
  await nc.flush();
  console.log('listening nats');
  process.on('SIGTERM', () => nc.close().then(() => process.exit(0)));
} else {
  console.error('usage: servers.mjs inprocess|hello|skeleton-gateway SUBJECT|skeleton-exec SUBJECT RESPONSE_JSON');
  process.exit(2);
}
if (mode !== 'skeleton-exec' && mode !== 'skeleton-exec-coalesced') {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  console.log(`listening ${address}`);
  process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
}
