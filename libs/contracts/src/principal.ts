import { z } from 'zod';

/** Roles within one organization (docs/design/identity.md). */
export const Role = z.enum(['viewer', 'editor', 'publisher', 'admin', 'auditor']);
export type Role = z.infer<typeof Role>;

/** API key scopes (docs/design/identity.md). */
export const Scope = z.enum(['view', 'edit', 'publish', 'admin', 'audit']);
export type Scope = z.infer<typeof Scope>;

/** Who is calling; travels with every bus request so services can re-check authorization. */
export const Principal = z.object({
  orgId: z.string(),
  userId: z.string(),
  role: Role,
  apiKeyId: z.string().optional(),
  scopes: z.array(Scope).optional(),
  /** When the API key in use expires (ISO 8601); absent for bearer callers and keys that never expire. */
  keyExpiresAt: z.iso.datetime().optional(),
});
export type Principal = z.infer<typeof Principal>;
