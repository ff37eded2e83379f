import { z } from 'zod';

/**
 * The flags of a run: options that change only how an evaluation runs or what its answer carries
 * (not what runs, for whom, or how long), each at its default when absent — a switch is off by default,
 * so `false` and absent mean the same. They travel as this one
 * object, unchanged, from every door — `POST /run` and `/run/batch` bodies, the query of every other
 * run route, MCP, the SDK — through the bus and the execution service's queue and workers to the
 * run layer's `resolveRun`, which applies their defaults. A new flag is a field here, its default in
 * `resolveRun`, and the code that reads it (CONTRIBUTING.md, "a new run option").
 */
export const RunFlags = z.strictObject({
  reasons: z
    .boolean()
    .optional()
    .describe("`true` adds `reasons`: why each result came out, in the rule's own words (docs/LANGUAGE.md §10.4). Default false"),
});
export type RunFlags = z.infer<typeof RunFlags>;

type FlagKey = keyof typeof RunFlags.shape;
const FLAG_KEYS = Object.keys(RunFlags.shape) as FlagKey[];

/** The flags as query parameters of the routes whose body is the data (`?reasons=true`): each `true` or `false`. */
export const RunFlagsQuery = z.object(
  Object.fromEntries(
    FLAG_KEYS.map((key) => [
      key,
      z
        .enum(['true', 'false'])
        .optional()
        .describe(RunFlags.shape[key].description ?? ''),
    ]),
  ) as { [K in FlagKey]: z.ZodOptional<z.ZodEnum<{ true: 'true'; false: 'false' }>> },
);
export type RunFlagsQuery = z.infer<typeof RunFlagsQuery>;

/**
 * The flags a request body (booleans) or a parsed query (`"true"`/`"false"`) sets, or undefined when
 * it sets none: what a door forwards, whatever flags exist.
 */
export function runFlagsOf(source: Readonly<Partial<Record<FlagKey, unknown>>> | undefined): RunFlags | undefined {
  if (source === undefined) return undefined;
  let flags: Record<string, unknown> | undefined;
  for (const key of FLAG_KEYS) {
    const value = source[key];
    if (value === undefined) continue;
    (flags ??= {})[key] = value === 'true' ? true : value === 'false' ? false : value;
  }
  return flags;
}
