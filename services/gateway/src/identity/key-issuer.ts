import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import {
  ArbiterError,
  CreateApiKeyRequest,
  OrgId,
  UserId,
  capabilitiesOf,
  hasCapability,
  newEvent,
  ROLE_CAPABILITIES,
  type ArbiterEvent,
  type CreatedApiKey,
  type Principal,
  type Role,
  type Scope,
} from '@arbiter/contracts';
import type { EventOutbox } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { DEFAULT_API_KEYS_PER_USER_MAX } from '../config.js';
import * as keys from '../repositories/api-keys.js';
import * as members from '../repositories/members.js';
import { generateApiKey, hashApiKey } from '@arbiter/key-auth';
import { StaleGrantError } from '../errors.js';
import { commitChange, type Change } from './changes.js';
import { toApiKey } from './views.js';

/** SQLSTATE of a foreign-key violation. */
const FOREIGN_KEY_VIOLATION = '23503';

/** The actor named in the audit event of a key issued with `npm run admin -- create-key`. */
export const ADMIN_CLI_ACTOR = 'admin-cli';

/** Name of a key issued from the command line without `--name`. */
export const OPERATOR_KEY_NAME = 'issued with the admin command line';

/** What `create-key` accepts: the HTTP body's rules for name and scopes (scopes optional). */
const OperatorKeyInput = z.object({
  orgId: OrgId,
  userId: UserId,
  name: CreateApiKeyRequest.shape.name,
  scopes: CreateApiKeyRequest.shape.scopes.optional(),
});

/** Scopes of a key that may create keys (docs/design/identity.md): anything beyond reading and auditing. */
const KEY_MAKING_SCOPES: readonly Scope[] = ['edit', 'publish', 'admin'];

const listed = (scopes: Iterable<Scope>): string => [...scopes].map((s) => `\`${s}\``).join(', ') || 'nothing';

/** What the new key is, once the caller's request has been checked. */
interface KeySpec {
  readonly orgId: string;
  readonly owner: string;
  readonly name: string;
  readonly scopes: Scope[];
  readonly expiresAt: Date | null;
  readonly createdWithKeyId?: string;
  readonly actor: ArbiterEvent['actor'];
  /** Set when the key is issued for another user (admin endpoint, command line): named in the event. */
  readonly issuedBy?: string;
}

/**
 * Makes API keys: a caller's own (`POST /apikeys`), one an admin issues for a member of the org
 * (`POST /users/{userId}/apikeys`), and one the operator issues from the command line. Every key is
 * within its owner's role, shown once, audited as `key created`, and counted against the owner's
 * live keys (`APIKEYS_PER_USER_MAX`; 409 `too_many_api_keys` past it).
 */
export class KeyIssuer {
  constructor(
    private readonly db: Knex,
    private readonly events: EventOutbox<Knex.Transaction>,
    private readonly now: () => Date = () => new Date(),
    private readonly maxLiveKeysPerUser: number = DEFAULT_API_KEYS_PER_USER_MAX,
  ) {}

  /**
   * Creates a personal key for the caller. Every requested scope must be within the caller's
   * effective rights (role ∩ the scopes of the key in use), else `forbidden`. With an API key
   * (docs/design/identity.md, keys that make keys): the key in use needs a scope beyond reading — `edit`,
   * `publish` or `admin` — and the new key never outlives it (its expiry by default; a later one is
   * refused); revoking the key in use later revokes the new one too.
   */
  async createOwn(principal: Principal, req: CreateApiKeyRequest): Promise<CreatedApiKey> {
    const rights = capabilitiesOf(principal);
    if (principal.apiKeyId !== undefined && !KEY_MAKING_SCOPES.some((s) => rights.has(s))) {
      throw new ArbiterError(
        'forbidden',
        `creating API keys with an API key needs its \`edit\`, \`publish\` or \`admin\` scope; this key allows ${listed(rights)}`,
      );
    }
    const beyond = req.scopes.filter((s) => !rights.has(s));
    if (beyond.length > 0) {
      const via = principal.apiKeyId !== undefined ? 'role and API key allow' : 'role allows';
      throw new ArbiterError('forbidden', `scope ${listed(beyond)} exceeds your rights: your ${via} ${listed(rights)}`);
    }
    return this.mint({ ...this.fromCaller(principal, req), owner: principal.userId });
  }

  /**
   * Issues a key owned by `userId`, a member of the caller's org, for an admin caller (docs/design/identity.md).
   * The scopes must be within that member's role and within the caller's own rights (`forbidden`
   * otherwise); a user who is not a member of the caller's org is `not_found`. The issued key
   * belongs to its owner and stands alone: unlike a key one makes for oneself with a key, it is not
   * tied to the admin's key in use (revoking or expiring that key leaves it working).
   */
  async issue(principal: Principal, userId: string, req: CreateApiKeyRequest): Promise<CreatedApiKey> {
    if (!hasCapability(principal, 'admin')) throw new ArbiterError('forbidden', 'issuing a key for another user needs the `admin` right');
    const rights = capabilitiesOf(principal);
    const beyond = req.scopes.filter((s) => !rights.has(s));
    if (beyond.length > 0) {
      throw new ArbiterError('forbidden', `scope ${listed(beyond)} exceeds your rights: your role and API key allow ${listed(rights)}`);
    }
    const { createdWithKeyId: _notTied, ...spec } = this.fromCaller(principal, req, { standalone: true });
    return this.mint({ ...spec, owner: userId, issuedBy: principal.userId });
  }

  /**
   * Issues a key owned by `userId` in `orgId` from the operator's command line (`npm run admin --
   * create-key`): `scopes` default to everything the member's role allows, `name` to
   * {@link OPERATOR_KEY_NAME}. `bad_request` for input that is not valid, `not_found` when the user
   * is not a member of the org, `forbidden` for scopes past the member's role.
   */
  async issueAsOperator(orgId: string, userId: string, input: { name?: string; scopes?: readonly string[] } = {}): Promise<CreatedApiKey> {
    const parsed = OperatorKeyInput.safeParse({ orgId, userId, name: input.name ?? OPERATOR_KEY_NAME, scopes: input.scopes });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ArbiterError('bad_request', `invalid ${issue?.path.join('.') || 'input'}: ${issue?.message ?? 'not valid'}`);
    }
    return this.mint({
      orgId: parsed.data.orgId,
      owner: parsed.data.userId,
      name: parsed.data.name,
      scopes: parsed.data.scopes ?? [],
      expiresAt: null,
      actor: { userId: ADMIN_CLI_ACTOR },
      issuedBy: ADMIN_CLI_ACTOR,
    });
  }

  /** The org, scopes, expiry, lineage and actor of a key requested by `principal` (expiry checked). */
  private fromCaller(principal: Principal, req: CreateApiKeyRequest, { standalone = false } = {}): Omit<KeySpec, 'owner'> {
    const parentExpiry = !standalone && principal.keyExpiresAt !== undefined ? new Date(principal.keyExpiresAt) : null;
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
    return {
      orgId: principal.orgId,
      name: req.name,
      scopes: req.scopes,
      expiresAt,
      ...(principal.apiKeyId !== undefined ? { createdWithKeyId: principal.apiKeyId } : {}),
      actor: { userId: principal.userId, ...(principal.apiKeyId !== undefined ? { apiKeyId: principal.apiKeyId } : {}) },
    };
  }

  /**
   * Stores the key in one transaction that locks the owner's membership, so concurrent creations
   * for one user are counted one after the other and can never pass the cap together.
   */
  /**
   * {@link commitChange}, where a foreign-key violation means the caller's cached grant named a key
   * (the `createdWithKeyId`) the database does not have: it was cached from a database that has
   * since been replaced or restored ({@link StaleGrantError}; the route re-reads it and retries).
   */
  private async commitOrStale<T>(fn: (trx: Knex.Transaction) => Promise<Change<T>>): Promise<T> {
    try {
      return await commitChange(this.db, this.events, fn);
    } catch (err) {
      if ((err as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) throw new StaleGrantError({ cause: err });
      throw err;
    }
  }

  private async mint(spec: KeySpec): Promise<CreatedApiKey> {
    const key = generateApiKey();
    const row = await this.commitOrStale(async (trx) => {
      const member = await members.lockMember(trx, spec.orgId, spec.owner);
      if (member === undefined) {
        throw new ArbiterError('not_found', `user \`${spec.owner}\` is not a member of org \`${spec.orgId}\``);
      }
      const scopes = spec.scopes.length > 0 ? spec.scopes : [...ROLE_CAPABILITIES[member.role]];
      if (spec.issuedBy !== undefined) checkWithinRole(spec.owner, member.role, scopes);
      const now = this.now();
      const live = await keys.countLiveKeys(trx, spec.orgId, spec.owner, now);
      if (live >= this.maxLiveKeysPerUser) {
        throw new ArbiterError(
          'too_many_api_keys',
          `\`${spec.owner}\` already has ${live} live API keys in org \`${spec.orgId}\` (the most allowed, APIKEYS_PER_USER_MAX): revoke one first`,
        );
      }
      const inserted = await keys.insertApiKey(trx, {
        apiKeyId: uuidv7(),
        orgId: spec.orgId,
        userId: spec.owner,
        name: spec.name,
        scopes,
        keyHash: hashApiKey(key),
        expiresAt: spec.expiresAt,
        ...(spec.createdWithKeyId !== undefined ? { createdWithKeyId: spec.createdWithKeyId } : {}),
      });
      const details = {
        name: inserted.name,
        scopes: inserted.scopes,
        owner: inserted.userId,
        expiresAt: inserted.expiresAt?.toISOString() ?? null,
        createdWithKeyId: inserted.createdWithKeyId,
        ...(spec.issuedBy !== undefined ? { issuedBy: spec.issuedBy } : {}),
      };
      const by = { orgId: spec.orgId, ...spec.actor };
      const event = newEvent('key created', by, { type: 'apikey', id: inserted.apiKeyId }, details, { at: now });
      return { result: inserted, events: [event] };
    });
    return { ...toApiKey(row), key };
  }
}

/** A key issued for `owner` never exceeds what the owner's role allows (`forbidden`). */
function checkWithinRole(owner: string, role: Role, scopes: readonly Scope[]): void {
  const allowed = ROLE_CAPABILITIES[role];
  const beyond = scopes.filter((s) => !allowed.includes(s));
  if (beyond.length > 0) {
    throw new ArbiterError(
      'forbidden',
      `scope ${listed(beyond)} exceeds the role of \`${owner}\`: role \`${role}\` allows ${listed(allowed)}`,
    );
  }
}
