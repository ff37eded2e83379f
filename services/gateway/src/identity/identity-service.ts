import {
  ArbiterError,
  hasCapability,
  newEvent,
  type ApiKeyPage,
  type CreateApiKeyRequest,
  type CreatedApiKey,
  type Member,
  type MemberPage,
  type MeResponse,
  type OrgSettings,
  type OrgSettingsBody,
  type PageQuery,
  type Principal,
  type Role,
} from '@arbiter/contracts';
import { cursorField, decodeCursor, pageFrom, type EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { z } from 'zod';
import { DEFAULT_API_KEYS_PER_USER_MAX } from '../config.js';
import * as keys from '../repositories/api-keys.js';
import * as members from '../repositories/members.js';
import * as settings from '../repositories/org-settings.js';
import { commitChange, type Change } from './changes.js';
import type { ApiKeyCache } from '@arbiter/key-auth';
import { KeyIssuer } from './key-issuer.js';
import { toApiKey, toMember } from './views.js';

/** `GET /users` pages by user id; `GET /apikeys` and `GET /users/{userId}/apikeys` by key id. */
const MemberCursor = z.object({ after: cursorField.text(255) });
const KeyCursor = z.object({ after: cursorField.uuid() });

/**
 * The identity use cases behind `/me`, `/users`, `/apikeys` and `/org/settings`. Callers have
 * passed authentication and the route's capability check; ownership rules live here. Every change
 * writes its audit event into the gateway's outbox in the change's own transaction (docs/design/events-and-audit.md).
 */
export class IdentityService {
  constructor(
    private readonly db: Knex,
    private readonly cache: ApiKeyCache,
    private readonly events: EventOutbox<Knex.Transaction>,
    private readonly now: () => Date = () => new Date(),
    /** Written before the org's keys are listed, so `lastUsedAt` includes this replica's latest uses. */
    private readonly usage?: { flush(): Promise<void> },
    /** `APIKEYS_PER_USER_MAX`: live keys one user may hold in an org. */
    maxLiveKeysPerUser: number = DEFAULT_API_KEYS_PER_USER_MAX,
  ) {
    this.issuer = new KeyIssuer(db, events, now, maxLiveKeysPerUser);
  }

  private readonly issuer: KeyIssuer;

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
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, MemberCursor).after;
    const rows = await members.listMembers(this.db, principal.orgId, {
      ...(after !== undefined ? { afterUserId: after } : {}),
      limit: page.limit + 1,
    });
    return pageFrom(rows, page.limit, toMember, (m) => ({ after: m.userId }));
  }

  /** One member of the caller's org; `not_found` when the user is not a member. */
  async getMember(principal: Principal, userId: string): Promise<Member> {
    const member = await members.findMember(this.db, principal.orgId, userId);
    if (member === undefined) throw new ArbiterError('not_found', `user \`${userId}\` is not a member of org \`${principal.orgId}\``);
    return toMember(member);
  }

  /**
   * Removes `userId` from the caller's org with every key the user has there (revoked, then deleted
   * with the membership), effective on the next request on every replica. The last admin cannot be removed
   * (`conflict`). The removal is recorded, so a bearer token of the user (still valid at the
   * identity provider) is refused rather than making them a viewer again, until an admin adds the
   * user back with {@link setRole}.
   */
  async removeMember(principal: Principal, userId: string): Promise<void> {
    const revoked = await this.commit(async (trx) => {
      // Waits for a first sign-in in flight, so the member it adds is seen and removed here.
      await members.lockOrgForRemoval(trx, principal.orgId);
      const member = await members.findMember(trx, principal.orgId, userId);
      if (member === undefined) throw new ArbiterError('not_found', `user \`${userId}\` is not a member of org \`${principal.orgId}\``);
      const admins = await members.lockAdmins(trx, principal.orgId);
      if (admins.length === 1 && admins[0] === userId) {
        throw new ArbiterError(
          'conflict',
          `\`${userId}\` is the last admin of org \`${principal.orgId}\`; make another member admin first`,
        );
      }
      const lineage = (
        await Promise.all(
          (await keys.activeKeyIdsOfMember(trx, principal.orgId, userId)).map((id) =>
            keys.revokeApiKeyAndDescendants(trx, principal.orgId, id),
          ),
        )
      ).flat();
      // The membership's keys go with it (foreign key, on delete cascade): revoked first, for the events and caches.
      await members.deleteMember(trx, principal.orgId, userId);
      await members.recordRemoval(trx, principal.orgId, userId, principal.userId);
      const keyEvents = lineage
        .filter((k) => k.newlyRevoked)
        .map((k) =>
          newEvent(
            'key revoked',
            principal,
            { type: 'apikey', id: k.apiKeyId },
            { name: k.name, owner: k.userId, memberRemoved: userId },
            { at: this.now() },
          ),
        );
      const removed = newEvent(
        'member removed',
        principal,
        { type: 'user', id: userId },
        { role: member.role, keysRevoked: keyEvents.length },
        { at: this.now() },
      );
      return { result: lineage, events: [removed, ...keyEvents] };
    });
    await this.refreshCachedGrants([
      ...new Set([...revoked.map((k) => k.keyHash), ...(await keys.keyHashesOfMember(this.db, principal.orgId, userId))]),
    ]);
  }

  /**
   * Gives `userId` the role in the caller's org, adding the member when new (a removed user is
   * added back, and their bearer tokens are accepted again). The org always
   * keeps one admin (`conflict` otherwise). Cached grants of the member's keys are replaced
   * before this returns, so the new role applies to the very next request on every replica.
   */
  async setRole(principal: Principal, userId: string, role: Role): Promise<{ member: Member; created: boolean }> {
    const result = await this.commit(async (trx) => {
      const admins = await members.lockAdmins(trx, principal.orgId);
      if (role !== 'admin' && admins.length === 1 && admins[0] === userId) {
        throw new ArbiterError(
          'conflict',
          `\`${userId}\` is the last admin of org \`${principal.orgId}\`; make another member admin first`,
        );
      }
      const upserted = await members.upsertMember(trx, principal.orgId, userId, role);
      const event = newEvent('assigned', principal, { type: 'user', id: userId }, { role, added: upserted.created }, { at: this.now() });
      return { result: upserted, events: [event] };
    });
    await this.refreshCachedGrants(await keys.keyHashesOfMember(this.db, principal.orgId, userId));
    return { member: toMember(result.member), created: result.created };
  }

  /** Creates a personal key for the caller ({@link KeyIssuer.createOwn}). */
  async createKey(principal: Principal, req: CreateApiKeyRequest): Promise<CreatedApiKey> {
    return this.issuer.createOwn(principal, req);
  }

  /** Issues a key owned by a member of the caller's org, for an admin ({@link KeyIssuer.issue}). */
  async issueKey(principal: Principal, userId: string, req: CreateApiKeyRequest): Promise<CreatedApiKey> {
    return this.issuer.issue(principal, userId, req);
  }

  /**
   * One page of the live keys (not revoked) of `userId`, a member of the caller's org, for an admin;
   * `not_found` when the user is not a member — never the secrets.
   */
  async listMemberKeys(principal: Principal, userId: string, page: PageQuery): Promise<ApiKeyPage> {
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, KeyCursor).after;
    if ((await members.findMember(this.db, principal.orgId, userId)) === undefined) {
      throw new ArbiterError('not_found', `user \`${userId}\` is not a member of org \`${principal.orgId}\``);
    }
    await this.usage?.flush();
    const range = { ...(after !== undefined ? { afterId: after } : {}), limit: page.limit + 1 };
    const rows = await keys.listOwnApiKeys(this.db, principal.orgId, userId, range);
    return pageFrom(rows, page.limit, toApiKey, (k) => ({ after: k.apiKeyId }));
  }

  /**
   * One page of the caller's own keys that are not revoked, or with `all` every key of the org
   * (admin; `forbidden` otherwise) — never the secrets.
   */
  async listKeys(principal: Principal, page: PageQuery, opts: { all?: boolean } = {}): Promise<ApiKeyPage> {
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, KeyCursor).after;
    const range = { ...(after !== undefined ? { afterId: after } : {}), limit: page.limit + 1 };
    if (opts.all === true && !hasCapability(principal, 'admin')) {
      throw new ArbiterError('forbidden', 'listing every key of the org (`all=true`) needs the `admin` right');
    }
    await this.usage?.flush();
    const rows =
      opts.all === true
        ? await keys.listOrgApiKeys(this.db, principal.orgId, range)
        : await keys.listOwnApiKeys(this.db, principal.orgId, principal.userId, range);
    return pageFrom(rows, page.limit, toApiKey, (k) => ({ after: k.apiKeyId }));
  }

  /**
   * Revokes a key — the caller's own, or any key of the org for an admin — and every key created
   * with it, transitively (a key never outlives the key that made it). Another org's key is
   * `not_found`. The shared cache entries are replaced by the revoked grants before this returns.
   */
  async revokeKey(principal: Principal, apiKeyId: string): Promise<void> {
    const row = await keys.findApiKey(this.db, principal.orgId, apiKeyId);
    if (row === undefined) throw new ArbiterError('not_found', `API key \`${apiKeyId}\` not found`);
    if (row.userId !== principal.userId && !hasCapability(principal, 'admin')) {
      throw new ArbiterError('forbidden', `API key \`${apiKeyId}\` belongs to another user; only an admin may revoke it`);
    }
    const revoked = await this.commit(async (trx) => {
      const lineage = await keys.revokeApiKeyAndDescendants(trx, principal.orgId, apiKeyId);
      const events = lineage
        .filter((k) => k.newlyRevoked)
        .map((k) => {
          const details = { name: k.name, owner: k.userId, ...(k.apiKeyId !== apiKeyId ? { revokedWith: apiKeyId } : {}) };
          return newEvent('key revoked', principal, { type: 'apikey', id: k.apiKeyId }, details, { at: this.now() });
        });
      return { result: lineage, events };
    });
    await this.refreshCachedGrants(revoked.map((k) => k.keyHash));
  }

  /** The caller's org settings. */
  async getSettings(principal: Principal): Promise<OrgSettings> {
    return settings.getOrgSettings(this.db, principal.orgId);
  }

  /** Replaces the caller's org settings (`minCoverage` left out keeps its value). */
  async putSettings(principal: Principal, body: OrgSettingsBody): Promise<OrgSettings> {
    return this.commit(async (trx) => {
      const before = await settings.getOrgSettings(trx, principal.orgId);
      const after = await settings.putOrgSettings(trx, principal.orgId, {
        governanceApproval: body.governanceApproval,
        minCoverage: body.minCoverage ?? before.minCoverage,
      });
      const changed = before.governanceApproval !== after.governanceApproval || before.minCoverage !== after.minCoverage;
      const details = {
        governanceApproval: { from: before.governanceApproval, to: after.governanceApproval },
        ...(before.minCoverage !== after.minCoverage ? { minCoverage: { from: before.minCoverage, to: after.minCoverage } } : {}),
      };
      return {
        result: after,
        events: changed ? [newEvent('settings changed', principal, { type: 'org', id: principal.orgId }, details, { at: this.now() })] : [],
      };
    });
  }

  /** Runs `fn` in a transaction that also queues its events, then wakes the relay. */
  private commit<T>(fn: (trx: Knex.Transaction) => Promise<Change<T>>): Promise<T> {
    return commitChange(this.db, this.events, fn);
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
