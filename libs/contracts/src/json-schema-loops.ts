/**
 * Finds `$ref` loops in a JSON Schema that never descend into the data, such as `{"$ref": "#"}`
 * or `{"allOf": [{"$ref": "#"}]}`: a validator (ajv) follows them forever on every value (a stack
 * overflow), and some it cannot even compile. A loop through `properties`, `items` and the other
 * keywords that apply to a part of the value is an ordinary recursive schema (a tree of nodes) and
 * is fine: each step goes one level down the data, which is finite.
 *
 * No I/O, iterative (a schema may be nested a few hundred levels deep).
 */

type Schema = Record<string, unknown>;

/** Keywords whose subschema applies to the same value. */
const SAME_VALUE_ONE = ['not', 'if', 'then', 'else'] as const;
/** Keywords whose subschemas (a list) apply to the same value. */
const SAME_VALUE_LIST = ['allOf', 'anyOf', 'oneOf'] as const;
/** Keywords whose subschemas (by property name) apply to the same value. */
const SAME_VALUE_MAP = ['dependentSchemas', 'dependencies'] as const;
/** References: the target applies to the same value. */
const REFS = ['$ref', '$dynamicRef', '$recursiveRef'] as const;
/** Keywords whose subschema applies to a part of the value (walked, never an edge). */
const PART_ONE = [
  'items',
  'additionalItems',
  'contains',
  'additionalProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
] as const;
const PART_LIST = ['prefixItems', 'items'] as const;
const PART_MAP = ['properties', 'patternProperties'] as const;
/** Definitions: schemas applied only through references. */
const DEFS = ['$defs', 'definitions'] as const;

/** Base URI of a schema without `$id` (any absolute URI works: only relative resolution matters). */
const ROOT_BASE = 'https://schema.arbiter.invalid/root.json';

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
const own = (o: Schema, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);

interface Node {
  schema: Schema;
  /** Where it is: the node it was found under and the (escaped) path from there, or a whole pointer for a walk's root. */
  at: { under: number; path: string } | { pointer: string };
  base: string;
  /** Same-value subschemas, as nodes. */
  children: number[];
}

/** The JSON pointer (`#/allOf/0`) of a node, built only for messages. */
function pointerOf(nodes: Node[], index: number): string {
  const parts: string[] = [];
  for (let at = nodes[index].at; ;) {
    if ('pointer' in at) return [at.pointer, ...parts.reverse()].join('/');
    parts.push(at.path);
    at = nodes[at.under].at;
  }
}

function escapeToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

function withoutHash(uri: string): string {
  const i = uri.indexOf('#');
  return i < 0 ? uri : uri.slice(0, i);
}

function resolveUri(ref: string, base: string): string | undefined {
  try {
    return new URL(ref, base).href;
  } catch {
    return undefined;
  }
}

/**
 * The first loop of same-value references in `schema`, as the JSON pointers (`#`, `#/allOf/0`, …)
 * of the subschemas on it, first one repeated at the end; null when there is none.
 */
export function findSchemaLoop(schema: Record<string, unknown>): string[] | null {
  const nodes: Node[] = [];
  const ids = new Map<Schema, number>();
  const resources = new Map<string, number>();
  const anchors = new Map<string, number>();

  /** Registers `root` and every subschema under it; answers the node of `root`. */
  const walk = (root: Schema, pointer: string, inherited: string): number => {
    const found = ids.get(root);
    if (found !== undefined) return found;
    const pending: Array<{ schema: Schema; at: Node['at']; base: string; parent?: number }> = [
      { schema: root, at: { pointer }, base: inherited },
    ];
    let first = -1;
    while (pending.length > 0) {
      const item = pending.pop()!;
      if (ids.has(item.schema)) {
        if (item.parent !== undefined) nodes[item.parent].children.push(ids.get(item.schema)!);
        continue;
      }
      let base = item.base;
      const id = own(item.schema, '$id');
      if (typeof id === 'string') {
        if (id.startsWith('#')) anchors.set(`${withoutHash(base)}${id}`, nodes.length);
        else base = withoutHash(resolveUri(id, base) ?? base);
      }
      const index = nodes.length;
      nodes.push({ schema: item.schema, at: item.at, base, children: [] });
      ids.set(item.schema, index);
      if (first < 0) first = index;
      if (item.parent !== undefined) nodes[item.parent].children.push(index);
      if (typeof id === 'string' && !id.startsWith('#')) resources.set(base, index);
      for (const key of ['$anchor', '$dynamicAnchor']) {
        const name = own(item.schema, key);
        if (typeof name === 'string') anchors.set(`${base}#${name}`, index);
      }
      const at = (key: string, ...more: string[]) => [escapeToken(key), ...more.map(escapeToken)].join('/');
      const push = (s: unknown, path: string, sameValue: boolean) => {
        if (isSchema(s)) pending.push({ schema: s, at: { under: index, path }, base, ...(sameValue ? { parent: index } : {}) });
      };
      for (const key of SAME_VALUE_ONE) push(own(item.schema, key), at(key), true);
      for (const key of SAME_VALUE_LIST) {
        const list = own(item.schema, key);
        if (Array.isArray(list)) list.forEach((s, i) => push(s, at(key, String(i)), true));
      }
      for (const key of SAME_VALUE_MAP) {
        const map = own(item.schema, key);
        if (isSchema(map)) for (const [name, s] of Object.entries(map)) push(s, at(key, name), true);
      }
      for (const key of PART_ONE) push(own(item.schema, key), at(key), false);
      for (const key of PART_LIST) {
        const list = own(item.schema, key);
        if (Array.isArray(list)) list.forEach((s, i) => push(s, at(key, String(i)), false));
      }
      for (const key of [...PART_MAP, ...DEFS]) {
        const map = own(item.schema, key);
        if (isSchema(map)) for (const [name, s] of Object.entries(map)) push(s, at(key, name), false);
      }
    }
    return first;
  };

  resources.set(ROOT_BASE, walk(schema, '#', ROOT_BASE));

  /** The node a reference written in `node` names, or undefined when it is not in this schema. */
  const target = (node: Node, ref: string): number | undefined => {
    const uri = resolveUri(ref, node.base);
    if (uri === undefined) return undefined;
    const doc = withoutHash(uri);
    const fragment = uri.length > doc.length ? decodeURIComponent(uri.slice(doc.length + 1)) : '';
    const resource = resources.get(doc);
    if (fragment === '') return resource;
    if (!fragment.startsWith('/')) return anchors.get(`${doc}#${fragment}`);
    if (resource === undefined) return undefined;
    let here: unknown = nodes[resource].schema;
    for (const raw of fragment.slice(1).split('/')) {
      const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
      here = Array.isArray(here) ? here[Number(token)] : isSchema(here) ? own(here, token) : undefined;
    }
    if (!isSchema(here)) return undefined;
    // A pointer may name a subschema under a keyword this walk does not know: it is a schema now.
    return ids.get(here) ?? walk(here, `${pointerOf(nodes, resource)}${fragment}`, nodes[resource].base);
  };

  // References become same-value edges (resolving one may register more nodes: the loop runs to the end).
  for (let i = 0; i < nodes.length; i++) {
    for (const key of REFS) {
      const ref = own(nodes[i].schema, key);
      if (typeof ref !== 'string') continue;
      const to = target(nodes[i], ref);
      if (to !== undefined) nodes[i].children.push(to);
    }
  }
  return firstCycle(nodes);
}

/** An iterative depth-first search for a cycle of same-value edges: the pointers around it, or null. */
function firstCycle(nodes: Node[]): string[] | null {
  const state = new Uint8Array(nodes.length); // 0 unseen, 1 on the path, 2 done
  for (let start = 0; start < nodes.length; start++) {
    if (state[start] !== 0) continue;
    const path: number[] = [start];
    const next: number[] = [0];
    state[start] = 1;
    while (path.length > 0) {
      const top = path.length - 1;
      const node = path[top];
      const children = nodes[node].children;
      if (next[top] >= children.length) {
        state[node] = 2;
        path.pop();
        next.pop();
        continue;
      }
      const child = children[next[top]++];
      if (state[child] === 1) {
        const from = path.indexOf(child);
        return [...path.slice(from), child].map((n) => pointerOf(nodes, n));
      }
      if (state[child] === 0) {
        state[child] = 1;
        path.push(child);
        next.push(0);
      }
    }
  }
  return null;
}
