import { Gauge, type Registry } from 'prom-client';

// Request counts and latencies of every HTTP door (this one and the mcp service's own port).
export { instrumentRequests } from '@arbiter/service-kit';

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
