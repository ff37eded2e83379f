import Ajv2020Module from 'ajv/dist/2020.js';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { findSchemaLoop } from '@arbiter/contracts';
import { schemaRegExp } from '@arbiter/rule-lang';
import type { ValidateFunction } from 'ajv';

// INVARIANT: ajv and ajv-formats are CommonJS modules whose `module.exports` also carries the
// class/plugin as `.default`; under NodeNext the default import is `module.exports`.
const Ajv2020 = Ajv2020Module.default;
const Ajv07 = AjvModule.default;
const addFormats = addFormatsModule.default;

const DRAFT_07 = new Set(['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema']);
const DRAFT_2020 = new Set(['https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema#']);

/** The dialects a policy schema may use: JSON Schema 2020-12 (the default) or draft-07 (by `$schema`). */
export type SchemaDialect = '2020-12' | 'draft-07';

function newAjv(dialect: SchemaDialect) {
  // strict: false, so annotations such as `example` or `x-…` keywords do not make a schema invalid.
  const ajv =
    dialect === 'draft-07'
      ? new Ajv07({ strict: false, allErrors: true, code: { regExp: schemaRegExp } })
      : new Ajv2020({ strict: false, allErrors: true, code: { regExp: schemaRegExp } });
  addFormats(ajv);
  return ajv;
}

/** A compiled schema, or the one-line reason it is not a valid JSON Schema. */
export type CompiledSchema = { ok: true; dialect: SchemaDialect; validate: ValidateFunction } | { ok: false; message: string };

/**
 * Compiles a JSON Schema with ajv (with ajv-formats): 2020-12 unless `$schema` names draft-07;
 * any other `$schema` is refused. Refuses `$ref` loops that never descend into the data
 * (`findSchemaLoop`), checks the schema against its meta-schema and resolves its `$ref`s.
 */
export function compileSchema(schema: Record<string, unknown>): CompiledSchema {
  const declared = schema.$schema;
  let dialect: SchemaDialect = '2020-12';
  if (declared !== undefined) {
    if (typeof declared === 'string' && DRAFT_07.has(declared)) dialect = 'draft-07';
    else if (!(typeof declared === 'string' && DRAFT_2020.has(declared))) {
      return { ok: false, message: `unsupported \`$schema\` \`${JSON.stringify(declared)}\`: use JSON Schema 2020-12 or draft-07` };
    }
  }
  // ajv follows such a loop forever (a stack overflow when compiling or validating): refuse it first.
  const loop = findSchemaLoop(schema);
  if (loop !== null) {
    return { ok: false, message: `the schema refers back to itself without descending into the data (\`${loop[0]}\` → \`${loop[1]}\`)` };
  }
  const ajv = newAjv(dialect);
  if (!ajv.validateSchema(schema)) {
    return { ok: false, message: `not a valid JSON Schema (${dialect}): ${ajv.errorsText(ajv.errors, { dataVar: 'schema' })}` };
  }
  try {
    return { ok: true, dialect, validate: ajv.compile(schema) };
  } catch (err) {
    return { ok: false, message: `not a valid JSON Schema (${dialect}): ${(err as Error).message.replace(/\s+/g, ' ').trim()}` };
  }
}

/** Where data breaks a compiled schema, as one line; null when it conforms. */
export function schemaMismatch(validate: ValidateFunction, data: unknown): string | null {
  let valid: boolean;
  try {
    valid = validate(data);
  } catch (err) {
    // A recursion ajv could not finish (a loop the static check missed): the data is not shown to conform.
    if (err instanceof RangeError) return 'the schema cannot be applied to this data: its validation recursed too deeply';
    throw err;
  }
  if (valid) return null;
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`).join('; ');
}
