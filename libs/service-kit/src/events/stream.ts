import { eventStreamName, eventSubjectFilter } from '@arbiter/contracts';
import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/** How long JetStream remembers message ids to drop a re-sent event (2 minutes). */
export const DUPLICATE_WINDOW_MS = 120_000;
const STREAM_NOT_FOUND = 10059;

/** Options of {@link ensureEventStream}. */
export interface EventStreamOptions {
  /** Deadline of each JetStream API call; 5000 ms when absent. */
  timeoutMs?: number;
  /** Copies of the stream in a JetStream cluster (`EVENTS_STREAM_REPLICAS`); 1 when absent. */
  replicas?: number;
}

/**
 * Creates the events stream of `prefix` (subjects `${prefix}.events.>`, `replicas` copies) or
 * brings an existing one to that subject set and replica count. Idempotent, and safe when several
 * services race to create it. Every service that publishes events calls it at start, so none
 * depends on another having started first.
 */
export async function ensureEventStream(nc: NatsConnection, prefix: string, opts: EventStreamOptions = {}): Promise<string> {
  const jsm = await jetstreamManager(nc, { timeout: opts.timeoutMs ?? 5000 });
  const name = eventStreamName(prefix);
  const subjects = [eventSubjectFilter(prefix)];
  const replicas = opts.replicas ?? 1;
  try {
    const info = await jsm.streams.info(name);
    if (info.config.subjects?.join() !== subjects.join() || info.config.num_replicas !== replicas) {
      await jsm.streams.update(name, { subjects, num_replicas: replicas });
    }
    return name;
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== STREAM_NOT_FOUND) throw err;
  }
  try {
    await jsm.streams.add({ name, subjects, num_replicas: replicas, duplicate_window: DUPLICATE_WINDOW_MS * 1_000_000 });
  } catch (err) {
    // Another service created it since the lookup: fine as long as it now exists.
    await jsm.streams.info(name).catch(() => {
      throw err;
    });
  }
  return name;
}
