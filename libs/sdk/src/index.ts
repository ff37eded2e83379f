/**
 * `@arbiter/sdk`: the typed client of every Arbiter endpoint (browser and Node 20+), and local
 * evaluation through `arbiter.local()` (see `@arbiter/sdk/local`). `@arbiter/sdk/client` is the
 * client alone, for browser bundles.
 */
export { Arbiter } from './arbiter.js';
export * from './client-entry.js';
export type { LocalOptions, LocalRunOptions, LocalRuntime, LocalStats } from './local/runtime.js';
export type { LocalCacheStore } from './local/cache.js';
