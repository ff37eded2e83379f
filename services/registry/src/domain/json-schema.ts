import { findSchemaLoop } from '@arbiter/contracts';
import { DRAFT_07, DRAFT_2020, schemaAjv, type SchemaDialect } from '@arbiter/run';
import type { ValidateFunction } from 'ajv';

export type { SchemaDialect };

/** The run layer's ajv set-up (`schemaAjv`, the same as a run's), every error reported: a saved schema's problems are listed whole. */
function newAjv(dialect: SchemaDialect) {
  return schemaAjv(dialect, { allErrors: true });
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
