import type { ArbiterEvent } from '@arbiter/contracts';

/** An event taken from an outbox for publication; `ref` identifies it to the store. */
export interface ClaimedEvent {
  ref: string;
  event: ArbiterEvent;
  /** Earlier publish attempts. */
  attempts: number;
}

/** Why the relay removed an event without publishing it: `too_large`, bigger than the bus takes. */
export type OutboxDropReason = 'too_large';

/**
 * Where a service keeps the events it emitted until JetStream has them. A claim leases events to one
 * relay for a while (so replicas share the work and a relay that dies mid-publish only delays its
 * events); `markSent` removes them for good; `markFailed` gives them back for a later retry;
 * `markDropped` removes events that can never be published (retrying them would only pile up).
 */
export interface OutboxStore {
  /** Short name for logs and metrics (`postgres:registry_outbox`, `redis:…`). */
  readonly name: string;
  /** Leases up to `limit` unsent events whose lease has lapsed, oldest first. */
  claim(limit: number): Promise<ClaimedEvent[]>;
  markSent(refs: string[]): Promise<void>;
  markFailed(refs: string[], error: string): Promise<void>;
  /** Removes events the bus refused for good (never claimed again), noting why where the store keeps sent rows. */
  markDropped(refs: string[], reason: OutboxDropReason): Promise<void>;
  /** Unsent events and the age of the oldest in seconds (for the outbox-lag metrics). */
  backlog(): Promise<{ pending: number; oldestSeconds: number }>;
  /** Housekeeping now and then (drop long-sent rows); optional. */
  prune?(): Promise<void>;
}

/**
 * What a service's logic sees of a transactional outbox: queue the events of a change in the change's
 * transaction, then, once it committed, tell the relay to publish soon.
 */
export interface EventOutbox<Trx> {
  enqueue(trx: Trx, events: readonly ArbiterEvent[]): Promise<void>;
  committed(): void;
}
