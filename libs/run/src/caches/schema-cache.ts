import { findSchemaLoop } from '@arbiter/contracts';
import { compileDataSchema, type DataSchema } from '../schema/data-schema.js';
import { LRUCache } from 'lru-cache';

/**
 * The run-time validators of policy schemas (`compileDataSchema`, the same function as the SDK's
 * local runtime), compiled once per schema hash (sha256 of the schema's canonical JSON, computed by
 * the registry); one cache per worker thread.
 */
export class SchemaCache {
  private readonly lru: LRUCache<string, DataSchema>;

  constructor(max: number) {
    this.lru = new LRUCache({ max });
  }

  /** The validator of the schema whose hash is `hash`, compiled on a miss. */
  get(hash: string, schema: Record<string, unknown>): DataSchema {
    let entry = this.lru.get(hash);
    if (!entry) {
      entry = compileSchema(schema);
      this.lru.set(hash, entry);
    }
    return entry;
  }

  /** Null when `data` conforms; otherwise one line naming the first failing path (`Schema mismatch: ...`). */
  mismatch(hash: string, schema: Record<string, unknown>, data: unknown): string | null {
    return this.get(hash, schema).mismatch(data);
  }
}

function compileSchema(schema: Record<string, unknown>): DataSchema {
  // Saved before such loops were refused: ajv would follow it forever (a stack overflow per run).
  const loop = findSchemaLoop(schema);
  if (loop !== null) {
    const invalid = `Schema mismatch: the policy's JSON Schema does not compile: it refers back to itself without descending into the data (\`${loop[0]}\` → \`${loop[1]}\`)`;
    return { mismatch: () => invalid };
  }
  return compileDataSchema(schema);
}
