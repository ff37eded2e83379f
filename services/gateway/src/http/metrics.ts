import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Latency buckets of the API, in seconds: fine below 10 ms, where `/run` lives. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Counts every answered request and observes its latency, labelled by method, route pattern (e.g.
 * `/run/policy/:baseId`, never the raw URL, so labels stay bounded; `unmatched` for a 404 without
 * a route) and status.
 */
export function instrumentRequests(app: FastifyInstance, registry: Registry): void {
  const requests = new Counter({
    name: 'arbiter_http_requests_total',
    help: 'HTTP requests answered by the gateway',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'arbiter_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer',
    labelNames: ['method', 'route'],
    buckets: BUCKETS,
    registers: [registry],
  });
  // The labelled children, made once per (method, route, status): labelling a sample per request hashed its labels every time.
  const counted = new Map<string, ReturnType<typeof requests.labels>>();
  const timed = new Map<string, ReturnType<typeof duration.labels>>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const method = request.method;
    const status = reply.statusCode;
    const routeKey = `${method} ${route}`;
    const countKey = `${routeKey} ${status}`;
    let counter = counted.get(countKey);
    if (counter === undefined) {
      counter = requests.labels({ method, route, status: String(status) });
      counted.set(countKey, counter);
    }
    let histogram = timed.get(routeKey);
    if (histogram === undefined) {
      histogram = duration.labels({ method, route });
      timed.set(routeKey, histogram);
    }
    counter.inc();
    histogram.observe(reply.elapsedTime / 1000);
    done();
  });
}

/** Messages the evaluation client sent to the execution service and the items they carried (read at each scrape). */
export function watchEvalClient(registry: Registry, evals: { stats(): { messages: number; items: number } }): void {
  new Gauge({
    name: 'arbiter_eval_messages_sent',
    help: '`exec.eval` messages sent to the execution service (one per event-loop turn with evaluations, or more when full)',
    registers: [registry],
    collect() {
      this.set(evals.stats().messages);
    },
  });
  new Gauge({
    name: 'arbiter_eval_items_sent',
    help: 'Evaluations carried by the `exec.eval` messages sent (items per message = this ÷ arbiter_eval_messages_sent)',
    registers: [registry],
    collect() {
      this.set(evals.stats().items);
    },
  });
}
