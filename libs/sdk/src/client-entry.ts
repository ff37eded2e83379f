/**
 * `@arbiter/sdk/client`: the typed client without local evaluation, for browser bundles (the
 * console). It imports no Node built-in and, from `@arbiter/contracts`, only the zod-free
 * `error-codes` entry at run time (the rest is types).
 */
export {
  ArbiterClient,
  RecordsApi,
  PoliciesApi,
  FlowsApi,
  RulesApi,
  GroupsApi,
  AuditApi,
  DecisionsApi,
  ReviewsApi,
  ApiKeysApi,
  UsersApi,
  OrgApi,
  BundlesApi,
  RunnableApi,
  WebhooksApi,
  type ArbiterOptions,
  type CallOptions,
  type RunOptions,
  type BaseRunOptions,
  type PageOptions,
  type UpdateResult,
  type ImpactOptions,
  type TestRunOptions,
} from './client.js';
export { ArbiterError, isArbiterError, isErrorCode, type ErrorCode, type ErrorReason } from '@arbiter/contracts/error-codes';
export type { RetryOptions } from './http.js';
export { Paged, type Page } from './pages.js';
export type { ServerSentEvent } from './streams.js';
