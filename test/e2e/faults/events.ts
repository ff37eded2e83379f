/**
 * Where the fault suite looks for the `created` event of every policy a 201 answered: the stack's
 * JetStream stream, and the audit trail (`GET /audit/export`). Each returns policy id → events seen.
 */

import { ArbiterEvent, eventStreamName } from '@arbiter/contracts';
import { natsServers } from '@arbiter/service-kit';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';

/** `created` events of policies in the events stream of `prefix`, read with an ordered consumer. */
export async function streamCreatedEvents(natsUrl: string, prefix: string): Promise<Map<string, number>> {
  const nc = await connect({ servers: natsServers(natsUrl) });
  const seen = new Map<string, number>();
  try {
    const consumer = await jetstream(nc).consumers.get(eventStreamName(prefix));
    const messages = await consumer.consume();
    for await (const m of messages) {
      const event = ArbiterEvent.parse(m.json());
      if (event.kind === 'created' && event.resource.type === 'policy') seen.set(event.resource.id, (seen.get(event.resource.id) ?? 0) + 1);
      if (m.info.pending === 0) break;
    }
  } finally {
    await nc.close();
  }
  return seen;
}

/** `created` events of policies in the audit trail of the key's org, through a gateway's `GET /audit/export`. */
export async function auditCreatedEvents(baseUrl: string, key: string): Promise<Map<string, number>> {
  const res = await fetch(`${baseUrl}/audit/export?kind=created&resourceType=policy`, { headers: { 'x-api-key': key } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /audit/export answered ${res.status}: ${text.slice(0, 300)}`);
  const seen = new Map<string, number>();
  for (const line of text.split('\n').filter(Boolean)) {
    const event = JSON.parse(line) as { error?: unknown; resource?: { id: string } };
    if (event.error !== undefined || event.resource === undefined) throw new Error(`the audit export failed: ${line}`);
    seen.set(event.resource.id, (seen.get(event.resource.id) ?? 0) + 1);
  }
  return seen;
}
