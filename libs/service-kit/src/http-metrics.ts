import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Latency buckets of the API, in seconds: fine below 10 ms, where `/run` lives. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Counts every answered request of an HTTP door (the gateway, the mcp service's own port; the
 * registry's `service` label tells them apart) and observes its latency, labelled by method, route pattern (e.g.
 * `/run/policy/:baseId`, never the raw URL, so labels stay bounded; `unmatched` for a 404 without
 * a route) and status.
 */
export function instrumentRequests(app: FastifyInstance, registry: Registry): RequestCounter {
  const requests = new Counter({
    name: 'arbiter_http_requests_total',
    help: 'HTTP requests answered (the gateway; the mcp service on its own port)',
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
  const answered: RequestCounter = (method, route, status, seconds) => {
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
    histogram.observe(seconds);
  };
  app.addHook('onResponse', (request, reply, done) => {
    answered(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  return answered;
}

/** Counts one answered request of a door (method, route pattern, status) and observes its latency in seconds. */
export type RequestCounter = (method: string, route: string, status: number, seconds: number) => void;
