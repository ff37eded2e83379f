/**
 * `@arbiter/sdk/local`: the local runtime's types and parts, for code that wants them without the
 * client (which loads this on `arbiter.local()`). `cacheFile` needs Node; everything else runs in
 * browsers too.
 */
export { LocalRuntime, startLocalRuntime, type LocalOptions, type LocalRunOptions, type LocalStats } from './runtime.js';
export { fileCache, type LocalCacheStore } from './cache.js';
export type { ReportStats } from './reporter.js';
