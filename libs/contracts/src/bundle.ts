import { z } from 'zod';
import { FlowDefinition } from './flow.js';
import { pageOf } from './http.js';
import { Principal } from './principal.js';
import { JsonSchemaValue, RecordStatus } from './registry.js';

/**
 * Export and import of an org's policies, flows and groups (issue 15 item 6). `GET /export`
 * answers one JSON {@link Bundle}; the gateway streams it from pages of the registry's
 * `registry.export` subject, so no replica ever holds the whole org.
 */
export const ExportSubject = 'registry.export' as const;

/** One draft or version of a base as exported: its content and who made it; version numbers kept. */
export const BundleRecord = z.object({
  recordId: z.uuid(),
  status: RecordStatus,
  version: z.number().int().nullable(),
  basedOnVersion: z.number().int().nullable(),
  name: z.string(),
  description: z.string(),
  rule: z.string().nullable(),
  definition: FlowDefinition.nullable(),
  schema: JsonSchemaValue,
  tests: z.array(z.unknown()),
  createdAt: z.iso.datetime(),
  createdBy: z.string(),
  updatedAt: z.iso.datetime(),
  updatedBy: z.string(),
  publishedAt: z.iso.datetime().nullable(),
  publishedBy: z.string().nullable(),
});
export type BundleRecord = z.infer<typeof BundleRecord>;

/** A live policy or flow base with every record: versions oldest first, then the draft. */
export const BundleBase = z.object({
  baseId: z.uuid(),
  createdBy: z.string(),
  createdAt: z.iso.datetime(),
  latestVersion: z.number().int().nullable(),
  records: z.array(BundleRecord),
});
export type BundleBase = z.infer<typeof BundleBase>;

/** A group with its live members. */
export const BundleGroup = z.object({
  groupId: z.uuid(),
  name: z.string(),
  description: z.string(),
  createdBy: z.string(),
  createdAt: z.iso.datetime(),
  members: z.array(z.object({ memberId: z.uuid(), memberType: z.enum(['policy', 'flow']) })),
});
export type BundleGroup = z.infer<typeof BundleGroup>;

/** The whole bundle of `GET /export`. */
export const Bundle = z.object({
  format: z.literal('arbiter-bundle'),
  formatVersion: z.literal(1),
  orgId: z.string(),
  exportedAt: z.iso.datetime(),
  policies: z.array(BundleBase),
  flows: z.array(BundleBase),
  groups: z.array(BundleGroup),
});
export type Bundle = z.infer<typeof Bundle>;

/** What one `registry.export` page holds. */
export const ExportSection = z.enum(['policies', 'flows', 'groups']);
export type ExportSection = z.infer<typeof ExportSection>;

/** Most bases or groups in one `registry.export` page (each base with all its records). */
export const EXPORT_MAX_PAGE = 20;

/** Request of `registry.export` (admin): a page of one section of the caller's org, by id. */
export const ExportPageRequest = z.strictObject({
  principal: Principal,
  section: ExportSection,
  limit: z.number().int().min(1).max(EXPORT_MAX_PAGE).default(EXPORT_MAX_PAGE),
  cursor: z.string().min(1).max(512).optional(),
});
export type ExportPageRequest = z.input<typeof ExportPageRequest>;

/** Reply of `registry.export`: bases (policies, flows) or groups, by id, with the next page's cursor. */
export const ExportPage = pageOf(z.union([BundleBase, BundleGroup]));
export type ExportPage = z.infer<typeof ExportPage>;
