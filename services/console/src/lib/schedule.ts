/**
 * Scheduling a publish or a rollback from the console (docs/design/timeline.md): the "Takes effect
 * at" field is a `datetime-local` value, a wall-clock time in the browser's zone; the API takes an
 * ISO 8601 instant with an offset. Sending the local offset (not `Z`) keeps the time the person
 * chose readable in the audit trail.
 */

const pad = (n: number, width = 2) => String(Math.trunc(n)).padStart(width, '0');

/**
 * The instant of a `datetime-local` value (`2027-01-01T09:30`, seconds optional) as ISO 8601 with
 * the browser's offset at that time (`2027-01-01T09:30:00+01:00`); undefined when empty or not a
 * time (a partly typed field reads as empty).
 */
export function effectiveFromOf(local: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(local)) return undefined;
  // A date-time without an offset is local time (ECMAScript Date parsing).
  const at = new Date(local);
  if (Number.isNaN(at.getTime())) return undefined;
  const east = -at.getTimezoneOffset();
  const offset = east === 0 ? 'Z' : `${east > 0 ? '+' : '-'}${pad(Math.abs(east) / 60)}:${pad(Math.abs(east) % 60)}`;
  const date = `${pad(at.getFullYear(), 4)}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
  return `${date}T${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}${offset}`;
}

/** The notice after a publish: when the new version runs by base id. */
export function publishedNotice(version: number | null, effectiveFrom: string | undefined): string {
  return effectiveFrom === undefined
    ? `Version ${version} published.`
    : `Version ${version} is scheduled for ${new Date(effectiveFrom).toLocaleString()}.`;
}

/** The notice after a rollback to `toVersion`, which made `version`. */
export function rollbackNotice(version: number | null, toVersion: number, effectiveFrom: string | undefined): string {
  return effectiveFrom === undefined
    ? `Version ${version} brings back version ${toVersion}.`
    : `Version ${version} is scheduled for ${new Date(effectiveFrom).toLocaleString()}: it brings back version ${toVersion}.`;
}
