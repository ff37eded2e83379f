import { AuditEvent, type ArbiterEvent } from '@arbiter/contracts';
import { v7 } from 'uuid';

/**
 * The body of a delivery: the event as `GET /audit` shows it (the contracts' `AuditEvent`, keys the
 * trail does not show dropped), as JSON. Signed and sent byte for byte as stored.
 */
export function webhookBody(event: ArbiterEvent): string {
  return JSON.stringify(AuditEvent.parse(event));
}

/** The event of `POST /webhooks/{id}/test`: kind `ping`, about the endpoint, sent to it alone. */
export function pingEvent(
  orgId: string,
  actor: ArbiterEvent['actor'],
  webhookId: string,
  at: Date,
): Omit<ArbiterEvent, 'kind'> & { kind: 'ping' } {
  return { eventId: v7(), orgId, kind: 'ping', at: at.toISOString(), actor, resource: { type: 'webhook', id: webhookId }, details: {} };
}
