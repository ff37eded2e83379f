import Ajv2020Module from 'ajv/dist/2020.js';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { schemaRegExp } from '../values/patterns.js';

// INVARIANT: ajv and ajv-formats are CommonJS modules whose `module.exports` also carries the
// class/plugin as `.default`; under NodeNext the default import is `module.exports`.
const Ajv2020 = Ajv2020Module.default;
const Ajv07 = AjvModule.default;
const addFormats = addFormatsModule.default;

const DRAFT_07 = new Set(['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema']);

/** A policy's JSON Schema compiled for runs: {@link DataSchema.mismatch} tells why data breaks it. */
export interface DataSchema {
  /** Null when `data` conforms; otherwise one line naming the first failing path (`Schema mismatch: ...`). */
  mismatch(data: unknown): string | null;
}

type Ajv = InstanceType<typeof Ajv2020> | InstanceType<typeof Ajv07>;
let ajv2020: Ajv | undefined;
let ajv07: Ajv | undefined;

// One ajv per dialect, made on first use; `allErrors` off: a run reports the first failing path only.
function ajvFor(schema: Record<string, unknown>): Ajv {
  if (typeof schema.$schema === 'string' && DRAFT_07.has(schema.$schema)) {
    return (ajv07 ??= withFormats(new Ajv07({ strict: false, allErrors: false, code: { regExp: schemaRegExp } })));
  }
  return (ajv2020 ??= withFormats(new Ajv2020({ strict: false, allErrors: false, code: { regExp: schemaRegExp } })));
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
