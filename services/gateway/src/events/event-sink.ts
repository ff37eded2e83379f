import type { ArbiterEvent } from '@arbiter/contracts';

/** Where the gateway sends the audit events it causes (DESIGN.md §7). Never throws, never waits. */
export interface EventSink {
  /** Queues `event` for publication; call it after the change it records was committed. */
  emit(event: ArbiterEvent): void;
}

/** A sink that drops everything (apps built without a bus, e.g. route tests). */
export const NO_EVENTS: EventSink = { emit: () => undefined };
