import { v7 } from 'uuid';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `s` is a UUID (anything else can name no stored record, so it answers 404). */
export function isUuid(s: string): boolean {
  return UUID.test(s);
}

/** A new time-ordered id (UUID v7): newer ids sort after older ones, which list cursors rely on. */
export function newId(): string {
  return v7();
}
