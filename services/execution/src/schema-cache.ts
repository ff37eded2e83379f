import Ajv2020Module from 'ajv/dist/2020.js';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { findSchemaLoop } from '@arbiter/contracts';
import { schemaRegExp } from '@arbiter/rule-lang';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';

// INVARIANT: ajv and ajv-formats are CommonJS modules whose `module.exports` also carries the
// class/plugin as `.default`; under NodeNext the default import is `module.exports`.
const Ajv2020 = Ajv2020Module.default;
const Ajv07 = AjvModule.default;
const addFormats = addFormatsModule.default;

const DRAFT_07 = new Set(['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema']);

/** A compiled validator, or the one-line reason the schema does not compile. */
type SchemaEntry = { validate: ValidateFunction } | { invalid: string };

/**
 * ajv validators of policy schemas, compiled once per schema hash (sha256 of the schema's
 * canonical JSON, computed by the registry); one cache per worker thread. The dialect follows the
 * registry: JSON Schema 2020-12 unless `$schema` names draft-07.
 */
export class SchemaCache {
  private readonly lru: LRUCache<string, SchemaEntry>;
  // One ajv per dialect; `allErrors` off: a run reports the first failing path only.
  private readonly ajv2020 = withFormats(new Ajv2020({ strict: false, allErrors: false, code: { regExp: schemaRegExp } }));
  private readonly ajv07 = withFormats(new Ajv07({ strict: false, allErrors: false, code: { regExp: schemaRegExp } }));

  constructor(max: number) {
    this.lru = new LRUCache({ max });
  }

  /** Null when `data` conforms; otherwise one line naming the first failing path (`Schema mismatch: ...`). */
  mismatch(hash: string, schema: Record<string, unknown>, data: unknown): string | null {
    let entry = this.lru.get(hash);
    if (!entry) {
      entry = this.compile(schema);
      this.lru.set(hash, entry);
    }
    if ('invalid' in entry) return `Schema mismatch: the policy's JSON Schema does not compile: ${entry.invalid}`;
    let valid: boolean;
    try {
      valid = entry.validate(data);
    } catch (err) {
      // A recursion ajv could not finish: an answer for this run, never a failed task (500).
      if (err instanceof RangeError)
        return "Schema mismatch: the policy's JSON Schema cannot be applied: its validation recursed too deeply";
      throw err;
    }
    if (valid) return null;
    const first = entry.validate.errors?.[0];
    return first ? `Schema mismatch: ${describe(first)}` : 'Schema mismatch: the data does not match the schema';
  }

  private compile(schema: Record<string, unknown>): SchemaEntry {
    // Saved before such loops were refused: ajv would follow it forever (a stack overflow per run).
    const loop = findSchemaLoop(schema);
    if (loop !== null) return { invalid: `it refers back to itself without descending into the data (\`${loop[0]}\` → \`${loop[1]}\`)` };
    const ajv = typeof schema.$schema === 'string' && DRAFT_07.has(schema.$schema) ? this.ajv07 : this.ajv2020;
    try {
      // A schema is compiled once per worker; ajv's own cache would keep every schema forever.
      const validate = ajv.compile(schema);
      ajv.removeSchema(schema);
      return { validate };
    } catch (err) {
      return { invalid: oneLine((err as Error).message) };
    }
  }
}

function withFormats<T extends Parameters<typeof addFormats>[0]>(ajv: T): T {
  addFormats(ajv);
  return ajv;
}

/** `/applicant/age` → `applicant.age` (JSON pointer unescaped); the root is `(root)`. */
function dotted(pointer: string, extra?: string): string {
  const parts =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (extra !== undefined) parts.push(extra);
  return parts.length === 0 ? '(root)' : parts.join('.');
}

/** One ajv error as `` `path`: reason ``. */
function describe(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required' && typeof params.missingProperty === 'string') {
    return `\`${dotted(e.instancePath, params.missingProperty)}\`: is required`;
  }
  if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return `\`${dotted(e.instancePath, params.additionalProperty)}\`: is not allowed by the schema`;
  }
  return `\`${dotted(e.instancePath)}\`: ${oneLine(e.message ?? 'is invalid')}`;
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
