/**
 * @arbiter/run/caches: what a long-lived runner keeps between runs (the execution service's worker
 * threads): compiled policies by the sha256 of their text, schema validators by schema hash, table
 * nodes by their source's hash. Node only (`node:crypto`).
 */

export { ruleHash, type CacheUse } from './hash.js';
export { PolicyCache, type PolicyEntry } from './policy-cache.js';
export { SchemaCache } from './schema-cache.js';
export { TableCache, type TableEntry } from './table-cache.js';
export { tableSource, type TableSource } from './table-source.js';
