import type { z } from 'zod';
import type { AuditExportQuery, AuditQuery } from './audit.js';
import type { ImportBundle } from './bundle.js';
import type { RunRequest } from './engine.js';
import type { ApiKeyListQuery } from './identity.js';
import type {
  CreateFlowBody,
  CreateGroupBody,
  CreatePolicyBody,
  ListQuery,
  RecordListQuery,
  UpdateFlowBody,
  UpdateGroupBody,
  UpdatePolicyBody,
  VersionsQuery,
} from './registry.js';
import type { RunBatchRequest } from './stored-runs.js';

/**
 * What a client sends, derived from the request schemas (fields with a default may be left out).
 * The SDK types its methods with these; the schemas stay the one source of truth.
 */

/** Body of `POST /policy` as sent (`description`, `schema`, `tests` optional). */
export type CreatePolicyInput = z.input<typeof CreatePolicyBody>;
/** Body of `PUT /policy/{policyId}` as sent. */
export type UpdatePolicyInput = z.input<typeof UpdatePolicyBody>;
/** Body of `POST /flow` as sent. */
export type CreateFlowInput = z.input<typeof CreateFlowBody>;
/** Body of `PUT /flow/{flowId}` as sent. */
export type UpdateFlowInput = z.input<typeof UpdateFlowBody>;
/** Body of `POST /group` as sent. */
export type CreateGroupInput = z.input<typeof CreateGroupBody>;
/** Body of `PUT /group/{groupId}` as sent. */
export type UpdateGroupInput = z.input<typeof UpdateGroupBody>;
/** Body of `POST /import` as sent: a bundle of `GET /export`. */
export type ImportBundleInput = z.input<typeof ImportBundle>;
/** Body of `POST /run` as sent. */
export type RunInput = z.input<typeof RunRequest>;
/** Body of `POST /run/batch` as sent. */
export type RunBatchInput = z.input<typeof RunBatchRequest>;

/** Filters of `GET /policies` / `GET /flows` (the pages are walked by the client: no `limit`/`cursor`). */
export type RecordListFilter = Partial<Omit<RecordListQuery, 'cursor' | 'limit'>>;
/** Filters of `GET /policies?deleted=true` / `GET /flows?deleted=true`. */
export type DeletedListFilter = Partial<Omit<ListQuery, 'cursor' | 'limit'>>;
/** Filters of `GET /groups`. */
export type GroupListFilter = Partial<Omit<ListQuery, 'cursor' | 'limit'>>;
/** Filters of the version lists (none besides the page). */
export type VersionsFilter = Partial<Omit<VersionsQuery, 'cursor' | 'limit'>>;
/** Filters of `GET /audit` (the pages are walked by the client). */
export type AuditListFilter = Partial<Omit<AuditQuery, 'cursor' | 'limit'>>;
/** Filters of `GET /audit/export`. */
export type AuditExportFilter = Partial<AuditExportQuery>;
/** Filters of `GET /apikeys`. */
export type ApiKeyListFilter = Partial<Omit<ApiKeyListQuery, 'cursor' | 'limit'>>;
