import type { ArbiterError, RunSpec } from '@arbiter/contracts';
import { isArbiterError } from '@arbiter/contracts';
import { createLogger, EvalClient, type Bus } from '@arbiter/service-kit';
import type { z } from 'zod';
import { deleteRedisKeys, randomPrefix as newPrefix, rejectionOf, testServers } from '@arbiter/test-kit';

export const { nats: NATS_URL, redis: REDIS_URL } = testServers();

/** A subject and Redis key prefix no other test file uses. */
export const randomPrefix = (): string => newPrefix('test');

export const silentLogger = () => createLogger({ service: 'execution-test', level: 'silent' });

/** Deletes every Redis key under `prefix:`. */
export function dropKeys(prefix: string): Promise<void> {
  return deleteRedisKeys(REDIS_URL, `${prefix}:`);
}

/** The ArbiterError a promise rejects with. */
export function rejection(p: Promise<unknown>): Promise<ArbiterError> {
  return rejectionOf(p, isArbiterError);
}

/** A rule whose evaluation never ends in practice: `levels` nested quantifiers over `x.n` (100^levels steps). */
export function runawayRule(levels = 6): string {
  let inner = 'its is greater than 1000000';
  for (let i = 0; i < levels; i++) inner = `any of the __n__ of the **x** where (${inner})`;
  return `A **x** is slow if ${inner}.`;
}
export const runawayData = { x: { n: Array.from({ length: 100 }, (_, i) => i) } };

export const ADULT_RULE = 'A **user** is adult if the __age__ of the **user** is at least 18.';

/** A value nested `depth` levels deep (an object at each level). */
export function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}

/** Polls a check until it stops throwing, with a deadline (not a timing assertion). */
export { eventually } from '@arbiter/test-kit';

const decoder = new TextDecoder();

/**
 * One run on `data` through `exec.eval`, the one road of runs (as the gateway sends it: a group of
 * one, alone in its message): its answer parsed by `reply`; its error (refused, not found, no
 * replica, time-out) thrown as the `ArbiterError` it is.
 */
export async function runOne<T>(bus: Bus, spec: RunSpec, data: unknown, reply: z.ZodType<T>): Promise<T> {
  const answer = await new EvalClient(bus, { coalesce: false }).one({ timeoutMs: 20_000, ...spec }, JSON.stringify(data));
  return reply.parse(JSON.parse(decoder.decode(answer)));
}
