import type { ApiKey, Member } from '@arbiter/contracts';
import type { ApiKeyRow } from '../repositories/api-keys.js';
import type { MemberRow } from '../repositories/members.js';

/** A membership as the API shows it. */
export const toMember = (m: MemberRow): Member => ({
  userId: m.userId,
  role: m.role,
  createdAt: m.createdAt.toISOString(),
  updatedAt: m.updatedAt.toISOString(),
});

/** A key as the API lists it: never its secret or hash. */
export const toApiKey = (k: ApiKeyRow): ApiKey => ({
  apiKeyId: k.apiKeyId,
  name: k.name,
  scopes: k.scopes,
  createdAt: k.createdAt.toISOString(),
  expiresAt: k.expiresAt?.toISOString() ?? null,
  createdWithKeyId: k.createdWithKeyId,
  owner: k.userId,
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
});
