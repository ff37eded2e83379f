import { ELEMENT, keyCandidates } from '@arbiter/rule-lang';

type Schema = Record<string, unknown>;

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `obj[key]` when `key` is an own property: names from rules and `$ref`s never reach `Object.prototype` (`__proto__`, `constructor`). */
const own = (obj: Schema, key: string): unknown => (Object.hasOwn(obj, key) ? obj[key] : undefined);

/** Follows a local `$ref` (`#/…` JSON pointer) within `root`; undefined for anything else. */
function deref(root: Schema, ref: unknown): Schema | undefined {
  if (typeof ref !== 'string' || !ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const token = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~');
    node = isSchema(node) ? own(node, token) : undefined;
  }
  return isSchema(node) ? node : undefined;
}

/** `schema` and the subschemas it stands for: its local `$ref` target and `allOf`/`anyOf`/`oneOf` branches. */
function alternatives(root: Schema, schema: Schema, seen = new Set<Schema>()): Schema[] {
  if (seen.has(schema)) return [];
  seen.add(schema);
  const out = [schema];
  const target = deref(root, schema.$ref);
  if (target) out.push(...alternatives(root, target, seen));
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
    const list = schema[key];
    if (Array.isArray(list)) for (const s of list) if (isSchema(s)) out.push(...alternatives(root, s, seen));
  }
  return out;
}

/** The subschemas one written step leads to: a `properties` entry under any key candidate, or `items` for {@link ELEMENT}. */
function step(root: Schema, schema: Schema, name: string): Schema[] {
  const out: Schema[] = [];
  for (const s of alternatives(root, schema)) {
    if (name === ELEMENT) {
      if (isSchema(s.items)) out.push(s.items);
      continue;
    }
    const props = s.properties;
    if (!isSchema(props)) continue;
    for (const key of keyCandidates(name)) {
      const sub = own(props, key);
      if (isSchema(sub)) out.push(sub);
    }
  }
  return out;
}

/**
 * The paths (as read by the rule, root first) that the schema does not describe, each with the
 * step where it stops matching. A written step matches a key of `properties` under any of its key
 * candidates (exact, camelCase, snake_case); `[]` goes through `items`, and a final `[]` only needs
 * the array itself. Local `$ref`s and `allOf`/`anyOf`/`oneOf` are followed.
 */
export function missingSchemaPaths(schema: Schema, paths: string[][]): { path: string[]; missingAt: number }[] {
  const missing: { path: string[]; missingAt: number }[] = [];
  for (const path of paths) {
    let here: Schema[] = [schema];
    for (let i = 0; i < path.length; i++) {
      if (path[i] === ELEMENT && i === path.length - 1) break;
      here = here.flatMap((s) => step(schema, s, path[i]));
      if (here.length === 0) {
        missing.push({ path, missingAt: i });
        break;
      }
    }
  }
  return missing;
}

/** A read path for messages: `applicant.date of birth`, with `[]` for array elements. */
export function formatPath(path: string[]): string {
  return path.reduce((acc, s) => (s === ELEMENT ? `${acc}[]` : acc === '' ? s : `${acc}.${s}`), '');
}
