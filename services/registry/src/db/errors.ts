/** SQLSTATE raised by the trigger that keeps published records immutable. */
export const IMMUTABLE_VERSION_SQLSTATE = 'AR409';

/** SQLSTATE of a unique-constraint violation. */
const UNIQUE_VIOLATION = '23505';

/** Whether `err` is PostgreSQL refusing to change a published record (the immutability trigger). */
export function isImmutableVersionError(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === IMMUTABLE_VERSION_SQLSTATE;
}

/** Whether `err` is a unique violation, optionally of the named constraint or index. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string } | null;
  return e?.code === UNIQUE_VIOLATION && (constraint === undefined || e.constraint === constraint);
}
