import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** A Prometheus registry with the process's default metrics, every series labelled with `service`. */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Requests a service answered on the bus, per subject and outcome (`ok` or the error code), and how long each took. */
export interface BusMetrics {
  observe(subject: string, outcome: string, seconds: number): void;
}

const busMetricsOf = new WeakMap<Registry, BusMetrics>();

/** The bus metrics of `registry` (made once per registry: two buses of one process share them). */
export function busMetrics(registry: Registry): BusMetrics {
  let made = busMetricsOf.get(registry);
  if (!made) {
    const requests = new Counter({
      name: 'arbiter_bus_requests_total',
      help: 'Bus requests this service answered, by subject and outcome (ok or the error code)',
      labelNames: ['subject', 'outcome'],
      registers: [registry],
    });
    const duration = new Histogram({
      name: 'arbiter_bus_request_duration_seconds',
      help: 'Time from receiving a bus request to replying, by subject',
      labelNames: ['subject'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    made = {
      observe(subject, outcome, seconds) {
        requests.inc({ subject, outcome });
        duration.observe({ subject }, seconds);
      },
    };
    busMetricsOf.set(registry, made);
  }
  return made;
}
