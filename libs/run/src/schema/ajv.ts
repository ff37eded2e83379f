import Ajv2020Module from 'ajv/dist/2020.js';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { schemaRegExp } from '@arbiter/rule-lang';

// INVARIANT: ajv and ajv-formats are CommonJS modules whose `module.exports` also carries the
// class/plugin as `.default`; under NodeNext the default import is `module.exports`.
const Ajv2020 = Ajv2020Module.default;
const Ajv07 = AjvModule.default;
const addFormats = addFormatsModule.default;

/** The `$schema` values that name draft-07. */
export const DRAFT_07 = new Set(['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-07/schema']);
/** The `$schema` values that name JSON Schema 2020-12 (the default). */
export const DRAFT_2020 = new Set(['https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema#']);

/** The dialects a policy schema may use: JSON Schema 2020-12 (the default) or draft-07 (by `$schema`). */
export type SchemaDialect = '2020-12' | 'draft-07';

/** An ajv instance of either dialect. */
export type SchemaAjv = InstanceType<typeof Ajv2020> | InstanceType<typeof Ajv07>;

/**
 * The one ajv set-up of policy schemas, for the registry (which checks a schema when it is saved,
 * `allErrors` on) and for runs (which check data against it, the first failing path only):
 * `strict` off (annotations such as `example` or `x-…` keywords do not make a schema invalid),
 * ajv-formats, patterns through re2 (`schemaRegExp`: linear time, no lookaround).
 */
export function schemaAjv(dialect: SchemaDialect, options: { allErrors: boolean }): SchemaAjv {
  const ajv =
    dialect === 'draft-07'
      ? new Ajv07({ strict: false, allErrors: options.allErrors, code: { regExp: schemaRegExp } })
      : new Ajv2020({ strict: false, allErrors: options.allErrors, code: { regExp: schemaRegExp } });
  addFormats(ajv);
  return ajv;
}
