import type { ErrorObject, ValidateFunction } from 'ajv';
import { DRAFT_07, schemaAjv, type SchemaAjv } from './ajv.js';

/** A policy's JSON Schema compiled for runs: {@link DataSchema.mismatch} tells why data breaks it. */
export interface DataSchema {
  /** Null when `data` conforms; otherwise one line naming the first failing path (`Schema mismatch: ...`). */
  mismatch(data: unknown): string | null;
}

let ajv2020: SchemaAjv | undefined;
let ajv07: SchemaAjv | undefined;

// One ajv per dialect, made on first use; `allErrors` off: a run reports the first failing path only.
function ajvFor(schema: Record<string, unknown>): SchemaAjv {
  if (typeof schema.$schema === 'string' && DRAFT_07.has(schema.$schema)) {
    return (ajv07 ??= schemaAjv('draft-07', { allErrors: false }));
  }
  return (ajv2020 ??= schemaAjv('2020-12', { allErrors: false }));
}

/**
 * Compiles the JSON Schema a stored policy checks its run data against (the execution service's
 * rules: JSON Schema 2020-12 unless `$schema` names draft-07, ajv-formats, patterns through re2).
 * A schema that does not compile gives a validator whose every answer says so.
 */
export function compileDataSchema(schema: Record<string, unknown>): DataSchema {
  const ajv = ajvFor(schema);
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(schema);
    // Compiled once by the caller, which keeps it; ajv's own cache would keep every schema forever.
    ajv.removeSchema(schema);
  } catch (err) {
    const invalid = `Schema mismatch: the policy's JSON Schema does not compile: ${oneLine((err as Error).message)}`;
    return { mismatch: () => invalid };
  }
  return {
    mismatch(data) {
      let valid: boolean;
      try {
        valid = validate(data);
      } catch (err) {
        // A recursion ajv could not finish: an answer for this run, never a crash.
        if (err instanceof RangeError)
          return "Schema mismatch: the policy's JSON Schema cannot be applied: its validation recursed too deeply";
        throw err;
      }
      if (valid) return null;
      const first = validate.errors?.[0];
      return first ? `Schema mismatch: ${describe(first)}` : 'Schema mismatch: the data does not match the schema';
    },
  };
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
