import { z } from 'zod';
import { ArbiterEvent, EventKind, EventResourceType } from './events.js';
import { PageQuery, pageOf } from './http.js';
import { Principal } from './principal.js';

/**
 * Request/reply subjects of the audit service, relative to the bus prefix. One queue group
 * (`audit`) serves them. `GET /audit` and `GET /audit/export` both page through `audit.query`;
 * the export asks for larger pages.
 */
export const AuditSubject = {
  query: 'audit.query',
} as const;
export type AuditSubject = (typeof AuditSubject)[keyof typeof AuditSubject];

/** Most kinds one query may name (there are fewer kinds than that). */
const MAX_KINDS = 32;
/** Largest page the bus answers (the export's page size); `GET /audit` stays at {@link PageQuery}'s 200. */
export const AUDIT_MAX_PAGE = 1000;

const FilterId = z.string().min(1).max(200);
/** One kind or a repeated `kind` parameter: always an array. */
const KindList = z.preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(EventKind).min(1).max(MAX_KINDS));

/** The filters of an audit query (every one optional; all given ones must hold). */
export const AuditFilter = z.object({
  kind: z.array(EventKind).min(1).max(MAX_KINDS).optional().describe('Event kinds (any of them)'),
  actor: FilterId.optional().describe('User id of the actor'),
  resourceType: EventResourceType.optional().describe('Type of the resource'),
  resourceId: FilterId.optional().describe('Id of the resource (a record, group, user, key or org id)'),
  baseId: FilterId.optional().describe('Base id of a policy or flow: every record of the base'),
  from: z.iso.datetime({ offset: true }).optional().describe('Events at or after this time (ISO 8601)'),
  to: z.iso.datetime({ offset: true }).optional().describe('Events before this time (ISO 8601)'),
});
export type AuditFilter = z.infer<typeof AuditFilter>;

/** The filters as HTTP query parameters: `kind` may be repeated (or given once). */
const HttpAuditFilter = AuditFilter.extend({ kind: KindList.optional().describe('Event kind; repeat the parameter for several') });

/** Query of `GET /audit`: the filters plus `limit` and `cursor`. */
export const AuditQuery = HttpAuditFilter.extend(PageQuery.shape);
export type AuditQuery = z.infer<typeof AuditQuery>;

/** Query of `GET /audit/export`: the filters only (the export pages by itself). */
export const AuditExportQuery = HttpAuditFilter;
export type AuditExportQuery = z.infer<typeof AuditExportQuery>;

/**
 * One recorded event as read back: an {@link ArbiterEvent} of the trail, as it was stored.
 * `executed` events are already aggregated by the execution service: one per caller, resource and
 * window, with `details.count`.
 */
export const AuditEvent = ArbiterEvent;
export type AuditEvent = z.infer<typeof AuditEvent>;

/** A page of audit events, newest first. */
export const AuditEventPage = pageOf(AuditEvent);
export type AuditEventPage = z.infer<typeof AuditEventPage>;

/** `audit.query`: the caller (admin or auditor; own org only), the filters, a page size up to {@link AUDIT_MAX_PAGE} and a cursor. */
export const AuditQueryRequest = AuditFilter.extend({
  principal: Principal,
  limit: z.number().int().min(1).max(AUDIT_MAX_PAGE).default(50),
  cursor: z.string().min(1).max(512).optional(),
});
export type AuditQueryRequest = z.input<typeof AuditQueryRequest>;
