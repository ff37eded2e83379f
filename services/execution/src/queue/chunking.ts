import type { Key } from './jobs.js';
import type { EvalEntry } from './jobs.js';

/**
 * How work is cut into worker tasks: a task aims at `targetMs` of worker time, so a caller waits
 * behind at most about that much of anyone else's work (plus one item that alone takes longer: an
 * evaluation cannot be stopped midway, its step budget bounds it); a chunk has at most `maxItems`
 * items, and `firstItems` while nothing is known of its cost.
 */
export interface ChunkPolicy {
  targetMs: number;
  maxItems: number;
  firstItems: number;
  /**
   * Worker time (ms) of low-priority work (replays) one task carries at most: live runs of others
   * wait behind a task that holds replays for about this long, not `targetMs`.
   */
  lowPriorityTargetMs: number;
}

export const DEFAULT_CHUNK_POLICY: ChunkPolicy = { targetMs: 5, maxItems: 256, firstItems: 1, lowPriorityTargetMs: 1 };

/** What an item whose cost nothing is known of is assumed to take (ms), when a task is filled. */
export const UNKNOWN_ITEM_MS = 0.05;

/**
 * The expected worker time (ms) of one item of `job`: its own last chunk's, else its key's
 * person's recent one (a new key of a person already busy inherits the person's cost), else 0
 * (unknown).
 */
export function itemCost(job: EvalEntry, key: Key): number {
  return job.perItemMs > 0 ? job.perItemMs : key.person.perItemMs;
}

/** Items of the next chunk of `job`, given `roomMs` of the task's target left. */
export function chunkItems(job: EvalEntry, key: Key, roomMs: number, policy: ChunkPolicy): number {
  const left = job.total - job.next;
  const cost = itemCost(job, key);
  const size = cost > 0 ? Math.floor(roomMs / cost) : policy.firstItems;
  return Math.max(1, Math.min(left, policy.maxItems, size));
}

/** Learns from a chunk of `items` items of `job` that took `ms` of worker time. */
export function learn(job: EvalEntry, key: Key, items: number, ms: number): void {
  const perItem = ms / items;
  job.perItemMs = perItem;
  const p = key.person;
  p.perItemMs = p.perItemMs === 0 ? perItem : (3 * p.perItemMs + perItem) / 4;
}
