// Baseline servers for the HTTP benchmark, each run as its own process like the gateway:
//   node servers.mjs inprocess  — one fastify process evaluating the same compiled policy (the no-microservices floor)
//   node servers.mjs hello      — fastify answering a constant (the HTTP ceiling)
import Fastify from 'fastify';
import { compile } from '@arbiter/rule-lang';

const mode = process.argv[2];
const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
if (mode === 'inprocess') {
  const cache = new Map();
  app.post('/run', async (req) => {
    const { rule, data } = req.body;
    let policy = cache.get(rule);
    if (!policy) {
      policy = compile(rule);
      cache.set(rule, policy);
    }
    const r = policy.evaluate(data, { trace: true });
    return { result: r.result, outcomes: r.outcomes, trace: r.trace, ...(r.error ? { error: r.error, errorCode: r.errorCode } : {}) };
  });
} else if (mode === 'hello') {
  app.post('/run', async () => ({ hello: 'world' }));
} else {
  console.error('usage: servers.mjs inprocess|hello');
  process.exit(2);
}
const address = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening ${address}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
