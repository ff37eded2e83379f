import { collectDefaultMetrics, Registry } from 'prom-client';

/** A Prometheus registry with the process's default metrics, every series labelled with `service`. */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}
