import { chunkItems, itemCost, UNKNOWN_ITEM_MS, type ChunkPolicy } from './chunking.js';
import { LOW_PRIORITY, type Scheduler } from './callers.js';
import type { Person } from './jobs.js';
import type { Chunk, EvalEntry } from './jobs.js';

/** A chunk handed out, with what its person prepaid for it (ms of its deficit). */
export interface Handout {
  readonly chunk: Chunk;
  readonly prepaid: number;
}

/**
 * Batch assembly: one worker task from the chunks of several callers' eval jobs. The first chunk
 * comes from `first` (whose turn it is); more come from persons in turn whose deficit is still
 * positive (no turns are earned while filling), each chunk sized to the task's room left and
 * prepaid at its expected cost, until the task's expected worker time reaches `policy.targetMs` or
 * it holds `policy.maxItems` items. So a person with slow items cannot fill a task others' fast
 * items wait in, and a task stays short whoever's work it carries.
 *
 * Low-priority chunks (replays) take at most `policy.lowPriorityTargetMs` of a task, so others' live
 * runs never wait behind much of them.
 *
 * A job whose cost nothing is known of (no chunk of it, or of its person, measured yet) gives one
 * chunk of `firstItems` to a task: the next comes once that one has told what an item costs.
 *
 * `take(person)` yields the job whose chunk goes next (its key's turn taken, jobs past their
 * deadline dropped), or undefined when the person has no eval job at the head of its queue.
 */
export function assembleTask(
  scheduler: Scheduler,
  first: Person,
  take: (p: Person) => EvalEntry | undefined,
  cut: (job: EvalEntry, items: number) => Chunk,
  policy: ChunkPolicy,
): Handout[] {
  const handouts: Handout[] = [];
  /** Jobs of unknown cost in this task: one chunk each, until the first is measured. */
  const unknown = new Set<EvalEntry>();
  let expected = 0;
  /** Expected worker time of the low-priority chunks in the task. */
  let lowExpected = 0;
  /** Persons whose low-priority job was passed over (the task had its share of such work). */
  const passed = new Set<Person>();
  let items = 0;
  for (let p: Person | undefined = first; p !== undefined; p = scheduler.pickReady()) {
    const job = take(p);
    if (job !== undefined) {
      if (unknown.has(job)) break;
      const low = job.key.id.startsWith(LOW_PRIORITY);
      if (low && handouts.length > 0 && lowExpected + Math.max(itemCost(job, job.key), UNKNOWN_ITEM_MS) > policy.lowPriorityTargetMs) {
        if (passed.has(p)) break;
        passed.add(p);
        continue;
      }
      if (itemCost(job, job.key) === 0) unknown.add(job);
      const room = Math.max(0, Math.min(policy.targetMs - expected, low ? policy.lowPriorityTargetMs - lowExpected : Infinity));
      const n = Math.min(chunkItems(job, job.key, room, policy), policy.maxItems - items);
      const cost = itemCost(job, job.key);
      const prepaid = cost * n;
      p.deficit -= prepaid;
      const chunkExpected = cost > 0 ? prepaid : UNKNOWN_ITEM_MS * n;
      expected += chunkExpected;
      if (low) lowExpected += chunkExpected;
      items += n;
      handouts.push({ chunk: cut(job, n), prepaid });
    }
    if (expected >= policy.targetMs || items >= policy.maxItems) break;
  }
  return handouts;
}
