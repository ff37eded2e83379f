import { createHash } from 'node:crypto';

/** sha256 (hex) of a text; for a rule, the same key the execution workers cache compiled policies by. */
export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** JSON with object keys sorted, so equal values hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** The publishable content of a record (what a version is made of). */
export interface PublishableContent {
  name: string;
  description: string;
  rule: string | null;
  definition: unknown;
  schema: unknown;
  tests: unknown[];
}

/**
 * The content hash a review is bound to: sha256 of the canonical JSON of every field a
 * version takes from its draft. Any edit of them changes it; the same content always hashes equally.
 */
export function contentHashOf(c: PublishableContent): string {
  return sha256(
    canonicalJson({ name: c.name, description: c.description, rule: c.rule, definition: c.definition, schema: c.schema, tests: c.tests }),
  );
}
