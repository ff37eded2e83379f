/**
 * `@arbiter/sdk`: the typed client of every Arbiter endpoint (browser and Node 20+), and local
 * evaluation through `arbiter.local()` (see `@arbiter/sdk/local`).
 */
export {
  Arbiter,
  PoliciesApi,
  FlowsApi,
  RulesApi,
  GroupsApi,
  AuditApi,
  ApiKeysApi,
  UsersApi,
  OrgApi,
  BundlesApi,
  RunnableApi,
  type ArbiterOptions,
  type RunOptions,
  type PageOptions,
  type UpdateResult,
} from './client.js';
export { ArbiterError, isArbiterError, type ErrorCode } from '@arbiter/contracts';
export type { RetryOptions } from './http.js';
export { Paged, type Page } from './pages.js';
export type { ServerSentEvent } from './streams.js';
export type { LocalOptions, LocalRuntime, LocalStats } from './local/runtime.js';
export type { LocalCacheStore } from './local/cache.js';
