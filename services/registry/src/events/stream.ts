import { eventStreamName, eventSubjectFilter } from '@arbiter/contracts';
import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import type { Bus } from '@arbiter/service-kit';

/** How long JetStream remembers message ids to drop a re-sent event (2 minutes). */
const DUPLICATE_WINDOW_NS = 120 * 1_000_000_000;

/**
 * Creates the events stream of `prefix` (subjects `${prefix}.events.>`) or brings an existing one
 * to that subject set. Idempotent, and safe when several services race to create it.
 */
export async function ensureEventStream(nc: Bus['nc'], prefix: string): Promise<string> {
  const jsm = await jetstreamManager(nc);
  const name = eventStreamName(prefix);
  const subjects = [eventSubjectFilter(prefix)];
  try {
    const info = await jsm.streams.info(name);
    if (info.config.subjects?.join() !== subjects.join()) await jsm.streams.update(name, { subjects });
    return name;
  } catch (err) {
    if (!(err instanceof JetStreamApiError) || err.code !== 10059) throw err;
  }
  try {
    await jsm.streams.add({ name, subjects, duplicate_window: DUPLICATE_WINDOW_NS });
  } catch (err) {
    // Another service created it since the lookup: fine as long as it now exists.
    await jsm.streams.info(name).catch(() => {
      throw err;
    });
  }
  return name;
}
