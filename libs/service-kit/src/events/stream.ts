import { eventStreamName, eventSubjectFilter } from '@arbiter/contracts';
import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';

/** How long JetStream remembers message ids to drop a re-sent event (2 minutes). */
export const DUPLICATE_WINDOW_MS = 120_000;
const STREAM_NOT_FOUND = 10059;

/**
 * Creates the events stream of `prefix` (subjects `${prefix}.events.>`) or brings an existing one
 * to that subject set. Idempotent, and safe when several services race to create it. Every service
 * that publishes events calls it at start, so none depends on another having started first.
 */
export async function ensureEventStream(nc: NatsConnection, prefix: string, opts: { timeoutMs?: number } = {}): Promise<string> {
  const jsm = await jetstreamManager(nc, { timeout: opts.timeoutMs ?? 5000 });
  const name = eventStreamName(prefix);
  const subjects = [eventSubjectFilter(prefix)];
  try {
    const info = await jsm.streams.info(name);
    if (info.config.subjects?.join() !== subjects.join()) await jsm.streams.update(name, { subjects });
    return name;
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== STREAM_NOT_FOUND) throw err;
  }
  try {
    await jsm.streams.add({ name, subjects, duplicate_window: DUPLICATE_WINDOW_MS * 1_000_000 });
  } catch (err) {
    // Another service created it since the lookup: fine as long as it now exists.
    await jsm.streams.info(name).catch(() => {
      throw err;
    });
  }
  return name;
}
