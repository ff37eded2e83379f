import { z } from 'zod';
import { WireError } from './errors.js';

/** Reply envelope of every request/reply subject (docs/design/bus.md). */
export function replyEnvelope<T extends z.ZodType>(data: T) {
  return z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), data }), z.object({ ok: z.literal(false), error: WireError })]);
}
export type Reply<T> = { ok: true; data: T } | { ok: false; error: WireError };
