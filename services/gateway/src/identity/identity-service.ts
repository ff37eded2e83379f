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
  type EventKind,
  type Role,
  type Scope,
} from '@arbiter/contracts';
import { cursorField, decodeCursor, pageFrom, type EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { z } from 'zod';
import * as keys from '../repositories/api-keys.js';
import * as members from '../repositories/members.js';
import * as settings from '../repositories/org-settings.js';
import { generateApiKey, hashApiKey } from './api-key-secret.js';
import { StaleGrantError } from './authenticator.js';
import type { ApiKeyCache } from './key-cache.js';

const toMember = (m: members.MemberRow): Member => ({
  userId: m.userId,
  role: m.role,
  createdAt: m.createdAt.toISOString(),
  updatedAt: m.updatedAt.toISOString(),
});

/** SQLSTATE of a foreign-key violation. */
const FOREIGN_KEY_VIOLATION = '23503';

/** `GET /users` pages by user id; `GET /apikeys` by key id. */
const MemberCursor = z.object({ after: cursorField.text(255) });
const KeyCursor = z.object({ after: cursorField.uuid() });

const toApiKey = (k: keys.ApiKeyRow): ApiKey => ({
  apiKeyId: k.apiKeyId,
  name: k.name,
  scopes: k.scopes,
  createdAt: k.createdAt.toISOString(),
  expiresAt: k.expiresAt?.toISOString() ?? null,
  createdWithKeyId: k.createdWithKeyId,
  owner: k.userId,
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
});

/** Scopes of a key that may create keys (DESIGN.md §10): anything beyond reading and auditing. */
const KEY_MAKING_SCOPES: readonly Scope[] = ['edit', 'publish', 'admin'];

/**
 * The identity use cases behind `/me`, `/users`, `/apikeys` and `/org/settings`. Callers have
 * passed authentication and the route's capability check; ownership rules live here. Every change
 * writes its audit event into the gateway's outbox in the change's own transaction (DESIGN.md §7, §10).
 */
export class IdentityService {
  constructor(
    private readonly db: Knex,
    private readonly cache: ApiKeyCache,
    private readonly events: EventOutbox<Knex.Transaction>,
    private readonly now: () => Date = () => new Date(),
    /** Written before the org's keys are listed, so `lastUsedAt` includes this replica's latest uses. */
    private readonly usage?: { flush(): Promise<void> },
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
   * (`conflict`). A bearer token of the user signs in again as a new viewer: the identity provider
   * decides who may sign in (README: Authentication and roles).
   */
  async removeMember(principal: Principal, userId: string): Promise<void> {
    const revoked = await this.commit(async (trx) => {
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
      const keyEvents = lineage
        .filter((k) => k.newlyRevoked)
        .map((k) =>
          this.event(
            principal,
            'key revoked',
            { type: 'apikey', id: k.apiKeyId },
            { name: k.name, owner: k.userId, memberRemoved: userId },
          ),
        );
      const removed = this.event(
        principal,
        'member removed',
        { type: 'user', id: userId },
        { role: member.role, keysRevoked: keyEvents.length },
      );
      return { result: lineage, events: [removed, ...keyEvents] };
    });
    await this.refreshCachedGrants([
      ...new Set([...revoked.map((k) => k.keyHash), ...(await keys.keyHashesOfMember(this.db, principal.orgId, userId))]),
    ]);
  }

  /**
   * Gives `userId` the role in the caller's org, adding the member when new. The org always
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
      const event = this.event(principal, 'assigned', { type: 'user', id: userId }, { role, added: upserted.created });
      return { result: upserted, events: [event] };
    });
    await this.refreshCachedGrants(await keys.keyHashesOfMember(this.db, principal.orgId, userId));
    return { member: toMember(result.member), created: result.created };
  }

  /**
   * Creates a personal key for the caller. Every requested scope must be within the caller's
   * effective rights (role ∩ the scopes of the key in use), else `forbidden`. With an API key
   * (DESIGN.md §10, keys that make keys): the key in use needs a scope beyond reading — `edit`,
   * `publish` or `admin` — and the new key never outlives it (its expiry by default; a later one is
   * refused); revoking the key in use later revokes the new one too.
   */
  async createKey(principal: Principal, req: CreateApiKeyRequest): Promise<CreatedApiKey> {
    const rights = capabilitiesOf(principal);
    if (principal.apiKeyId !== undefined && !KEY_MAKING_SCOPES.some((s) => rights.has(s))) {
      throw new ArbiterError(
        'forbidden',
        `creating API keys with an API key needs its \`edit\`, \`publish\` or \`admin\` scope; this key allows ${[...rights].map((s) => `\`${s}\``).join(', ') || 'nothing'}`,
      );
    }
    const beyond = req.scopes.filter((s) => !rights.has(s));
    if (beyond.length > 0) {
      const via = principal.apiKeyId !== undefined ? 'role and API key allow' : 'role allows';
      throw new ArbiterError(
        'forbidden',
        `scope ${beyond.map((s) => `\`${s}\``).join(', ')} exceeds your rights: your ${via} ${[...rights].map((s) => `\`${s}\``).join(', ') || 'nothing'}`,
      );
    }
    const parentExpiry = principal.keyExpiresAt !== undefined ? new Date(principal.keyExpiresAt) : null;
    const expiresAt = req.expiresAt !== undefined ? new Date(req.expiresAt) : parentExpiry;
    if (req.expiresAt !== undefined && expiresAt !== null && expiresAt.getTime() <= this.now().getTime()) {
      throw new ArbiterError('validation_failed', `expiresAt \`${req.expiresAt}\` is not in the future`, [
        { code: 'not_in_future', message: 'must be in the future', path: 'body.expiresAt' },
      ]);
    }
    if (parentExpiry !== null && expiresAt !== null && expiresAt.getTime() > parentExpiry.getTime()) {
      throw new ArbiterError(
        'forbidden',
        `expiresAt \`${req.expiresAt}\` is after the expiry of the API key in use (${parentExpiry.toISOString()}): a key never outlives the key that made it`,
      );
    }
    const key = generateApiKey();
    const row = await this.commitOrStale(async (trx) => {
      const inserted = await keys.insertApiKey(trx, {
        apiKeyId: uuidv7(),
        orgId: principal.orgId,
        userId: principal.userId,
        name: req.name,
        scopes: req.scopes,
        keyHash: hashApiKey(key),
        expiresAt,
        ...(principal.apiKeyId !== undefined ? { createdWithKeyId: principal.apiKeyId } : {}),
      });
      const details = {
        name: inserted.name,
        scopes: inserted.scopes,
        owner: inserted.userId,
        expiresAt: expiresAt?.toISOString() ?? null,
        createdWithKeyId: inserted.createdWithKeyId,
      };
      return { result: inserted, events: [this.event(principal, 'key created', { type: 'apikey', id: inserted.apiKeyId }, details)] };
    });
    return { ...toApiKey(row), key };
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
          return this.event(principal, 'key revoked', { type: 'apikey', id: k.apiKeyId }, details);
        });
      return { result: lineage, events };
    });
    await this.refreshCachedGrants(revoked.map((k) => k.keyHash));
  }

  /** The caller's org settings. */
  async getSettings(principal: Principal): Promise<OrgSettings> {
    return settings.getOrgSettings(this.db, principal.orgId);
  }

  /** Replaces the caller's org settings. */
  async putSettings(principal: Principal, body: OrgSettings): Promise<OrgSettings> {
    return this.commit(async (trx) => {
      const before = await settings.getOrgSettings(trx, principal.orgId);
      const after = await settings.putOrgSettings(trx, principal.orgId, body);
      const changed = before.governanceApproval !== after.governanceApproval;
      const details = { governanceApproval: { from: before.governanceApproval, to: after.governanceApproval } };
      return {
        result: after,
        events: changed ? [this.event(principal, 'settings changed', { type: 'org', id: principal.orgId }, details)] : [],
      };
    });
  }

  /** Runs `fn` in a transaction that also queues its events, then wakes the relay. */
  /** {@link commit}, where a foreign-key violation means the caller's grant named a key or owner the database does not have. */
  private async commitOrStale<T>(fn: (trx: Knex.Transaction) => Promise<{ result: T; events: ArbiterEvent[] }>): Promise<T> {
    try {
      return await this.commit(fn);
    } catch (err) {
      if ((err as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) throw new StaleGrantError({ cause: err });
      throw err;
    }
  }

  private async commit<T>(fn: (trx: Knex.Transaction) => Promise<{ result: T; events: ArbiterEvent[] }>): Promise<T> {
    const change = await this.db.transaction(async (trx) => {
      const c = await fn(trx);
      await this.events.enqueue(trx, c.events);
      return c;
    });
    if (change.events.length > 0) this.events.committed();
    return change.result;
  }

  /** An audit event caused by `principal` now. */
  private event(principal: Principal, kind: EventKind, resource: ArbiterEvent['resource'], details: Record<string, unknown>): ArbiterEvent {
    return {
      eventId: uuidv7(),
      orgId: principal.orgId,
      kind,
      at: this.now().toISOString(),
      actor: { userId: principal.userId, ...(principal.apiKeyId !== undefined ? { apiKeyId: principal.apiKeyId } : {}) },
      resource,
      details,
    };
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
