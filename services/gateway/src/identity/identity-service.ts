import { v7 as uuidv7 } from 'uuid';
import {
  ArbiterError,
  capabilitiesOf,
  hasCapability,
  type ApiKey,
  type ApiKeyPage,
  type CreateApiKeyRequest,
  type CreatedApiKey,
  type Member,
  type MemberPage,
  type MeResponse,
  type OrgSettings,
  type PageQuery,
  type Principal,
  type ArbiterEvent,
  type Role,
} from '@arbiter/contracts';
import type { Knex } from 'knex';
import { NO_EVENTS, type EventSink } from '../events/event-sink.js';
import * as keys from '../repositories/api-keys.js';
import * as members from '../repositories/members.js';
import * as settings from '../repositories/org-settings.js';
import { generateApiKey, hashApiKey } from './api-key-secret.js';
import { decodeCursor, pageFrom } from './cursor.js';
import type { ApiKeyCache } from './key-cache.js';

const toMember = (m: members.MemberRow): Member => ({
  userId: m.userId,
  role: m.role,
  createdAt: m.createdAt.toISOString(),
  updatedAt: m.updatedAt.toISOString(),
});

const toApiKey = (k: keys.ApiKeyRow): ApiKey => ({
  apiKeyId: k.apiKeyId,
  name: k.name,
  scopes: k.scopes,
  createdAt: k.createdAt.toISOString(),
  expiresAt: k.expiresAt?.toISOString() ?? null,
});

/**
 * The identity use cases behind `/me`, `/users`, `/apikeys` and `/org/settings`. Callers have
 * passed authentication and the route's capability check; ownership rules live here.
 */
export class IdentityService {
  constructor(
    private readonly db: Knex,
    private readonly cache: ApiKeyCache,
    private readonly now: () => Date = () => new Date(),
    private readonly events: EventSink = NO_EVENTS,
  ) {}

  /** Who the caller is. */
  me(principal: Principal): MeResponse {
    return {
      orgId: principal.orgId,
      userId: principal.userId,
      role: principal.role,
      ...(principal.apiKeyId !== undefined ? { apiKeyId: principal.apiKeyId, scopes: principal.scopes ?? [] } : {}),
    };
  }

  /** One page of the caller's org members, ordered by user id. */
  async listMembers(principal: Principal, page: PageQuery): Promise<MemberPage> {
    const after = decodeCursor(page.cursor);
    const rows = await members.listMembers(this.db, principal.orgId, {
      ...(after !== undefined ? { afterUserId: after } : {}),
      limit: page.limit + 1,
    });
    return pageFrom(rows, page.limit, (m) => m.userId, toMember);
  }

  /**
   * Gives `userId` the role in the caller's org, adding the member when new. The org always
   * keeps one admin (`conflict` otherwise). Cached grants of the member's keys are replaced
   * before this returns, so the new role applies to the very next request on every replica.
   */
  async setRole(principal: Principal, userId: string, role: Role): Promise<{ member: Member; created: boolean }> {
    const result = await this.db.transaction(async (trx) => {
      const admins = await members.lockAdmins(trx, principal.orgId);
      if (role !== 'admin' && admins.length === 1 && admins[0] === userId) {
        throw new ArbiterError('conflict', `\`${userId}\` is the last admin of org \`${principal.orgId}\`; make another member admin first`);
      }
      return members.upsertMember(trx, principal.orgId, userId, role);
    });
    this.events.emit(assignedEvent(principal, userId, role, result.created, this.now()));
    await this.refreshCachedGrants(await keys.keyHashesOfMember(this.db, principal.orgId, userId));
    return { member: toMember(result.member), created: result.created };
  }

  /**
   * Creates a personal key for the caller. Every requested scope must be within the caller's
   * effective rights (role ∩ the scopes of the key in use), else `forbidden`.
   */
  async createKey(principal: Principal, req: CreateApiKeyRequest): Promise<CreatedApiKey> {
    const rights = capabilitiesOf(principal);
    const beyond = req.scopes.filter((s) => !rights.has(s));
    if (beyond.length > 0) {
      const via = principal.apiKeyId !== undefined ? 'role and API key allow' : 'role allows';
      throw new ArbiterError(
        'forbidden',
        `scope ${beyond.map((s) => `\`${s}\``).join(', ')} exceeds your rights: your ${via} ${[...rights].map((s) => `\`${s}\``).join(', ') || 'nothing'}`,
      );
    }
    const expiresAt = req.expiresAt !== undefined ? new Date(req.expiresAt) : null;
    if (expiresAt !== null && expiresAt.getTime() <= this.now().getTime()) {
      throw new ArbiterError('validation_failed', `expiresAt \`${req.expiresAt}\` is not in the future`, [
        { code: 'not_in_future', message: 'must be in the future', path: 'body.expiresAt' },
      ]);
    }
    const key = generateApiKey();
    const row = await keys.insertApiKey(this.db, {
      apiKeyId: uuidv7(),
      orgId: principal.orgId,
      userId: principal.userId,
      name: req.name,
      scopes: req.scopes,
      keyHash: hashApiKey(key),
      expiresAt,
    });
    return { ...toApiKey(row), key };
  }

  /** One page of the caller's own keys that are not revoked (never the secrets). */
  async listKeys(principal: Principal, page: PageQuery): Promise<ApiKeyPage> {
    const after = decodeCursor(page.cursor);
    const rows = await keys.listOwnApiKeys(this.db, principal.orgId, principal.userId, {
      ...(after !== undefined ? { afterId: after } : {}),
      limit: page.limit + 1,
    });
    return pageFrom(rows, page.limit, (k) => k.apiKeyId, toApiKey);
  }

  /**
   * Revokes a key: the caller's own, or any key of the org for an admin. Another org's key is
   * `not_found`. The shared cache entry is replaced by the revoked grant before this returns.
   */
  async revokeKey(principal: Principal, apiKeyId: string): Promise<void> {
    const row = await keys.findApiKey(this.db, principal.orgId, apiKeyId);
    if (row === undefined) throw new ArbiterError('not_found', `API key \`${apiKeyId}\` not found`);
    if (row.userId !== principal.userId && !hasCapability(principal, 'admin')) {
      throw new ArbiterError('forbidden', `API key \`${apiKeyId}\` belongs to another user; only an admin may revoke it`);
    }
    const keyHash = await keys.revokeApiKey(this.db, principal.orgId, apiKeyId);
    if (keyHash !== undefined) await this.refreshCachedGrants([keyHash]);
  }

  /** The caller's org settings. */
  async getSettings(principal: Principal): Promise<OrgSettings> {
    return settings.getOrgSettings(this.db, principal.orgId);
  }

  /** Replaces the caller's org settings. */
  async putSettings(principal: Principal, body: OrgSettings): Promise<OrgSettings> {
    return settings.putOrgSettings(this.db, principal.orgId, body);
  }

  // INVARIANT: runs after the change committed, so the grants written are the new truth and
  // overwrite anything a concurrent reader may have filled from the old rows.
  private async refreshCachedGrants(keyHashes: string[]): Promise<void> {
    for (const keyHash of keyHashes) {
      const grant = await keys.findGrantByHash(this.db, keyHash);
      if (grant === undefined) await this.cache.delete(keyHash);
      else await this.cache.overwrite(keyHash, grant);
    }
  }
}

/** The `assigned` audit event of a role assignment (DESIGN.md §3, §7). */
function assignedEvent(principal: Principal, userId: string, role: Role, created: boolean, at: Date): ArbiterEvent {
  return {
    eventId: uuidv7(),
    orgId: principal.orgId,
    kind: 'assigned',
    at: at.toISOString(),
    actor: { userId: principal.userId, ...(principal.apiKeyId !== undefined ? { apiKeyId: principal.apiKeyId } : {}) },
    resource: { type: 'user', id: userId },
    details: { role, added: created },
  };
}
