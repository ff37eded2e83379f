import { v7 as uuidv7 } from 'uuid';
import { ArbiterError, OrgId, UserId } from '@arbiter/contracts';
import type { Knex } from 'knex';
import * as keys from '../repositories/api-keys.js';
import * as members from '../repositories/members.js';
import * as orgs from '../repositories/orgs.js';
import { MIN_API_KEY_LENGTH } from '../config.js';
import { generateApiKey, hashApiKey } from '@arbiter/key-auth';

/** The user id of the bootstrap admin. */
export const BOOTSTRAP_ADMIN_USER = 'admin';

/** What bootstrap did. `generatedKey` is set only when a new key was made (print it once). */
export interface BootstrapResult {
  readonly orgId: string;
  readonly userId: string;
  readonly generatedKey?: string;
  /** One-line notes for the log (e.g. the configured key was revoked and is left so). */
  readonly notes: string[];
}

/**
 * Makes a fresh install usable (docs/design/identity.md). With `adminKey`: ensures org `orgId`, user
 * `admin` with role admin there, and that exact key with every scope (idempotent; a revoked
 * configured key stays revoked). Without it: when the org has no active admin key held by an
 * admin, creates what is missing and a new admin key, returned once in `generatedKey`.
 */
export async function bootstrapIdentity(db: Knex, opts: { orgId: string; adminKey?: string }): Promise<BootstrapResult> {
  const orgId = parseOrgId(opts.orgId);
  if (opts.adminKey !== undefined && opts.adminKey.length < MIN_API_KEY_LENGTH) {
    throw new Error(`POLICY_BOOTSTRAP_ADMIN_KEY is too short: at least ${MIN_API_KEY_LENGTH} characters are required`);
  }
  return db.transaction(async (trx) => {
    await orgs.lockOrgForBootstrap(trx, orgId);
    const notes: string[] = [];
    if (opts.adminKey !== undefined) {
      await ensureAdmin(trx, orgId, BOOTSTRAP_ADMIN_USER);
      const keyHash = hashApiKey(opts.adminKey);
      const existing = await keys.findApiKeyByHash(trx, keyHash);
      if (existing === undefined) {
        await insertAdminKey(trx, orgId, BOOTSTRAP_ADMIN_USER, keyHash, 'bootstrap admin key');
      } else if (existing.orgId !== orgId || existing.userId !== BOOTSTRAP_ADMIN_USER) {
        notes.push(`POLICY_BOOTSTRAP_ADMIN_KEY already belongs to \`${existing.userId}\` in org \`${existing.orgId}\`; left unchanged`);
      } else if (existing.revokedAt !== null) {
        notes.push('POLICY_BOOTSTRAP_ADMIN_KEY was revoked and stays revoked');
      }
      return { orgId, userId: BOOTSTRAP_ADMIN_USER, notes };
    }
    if (await keys.hasActiveAdminKey(trx, orgId)) return { orgId, userId: BOOTSTRAP_ADMIN_USER, notes };
    await ensureAdmin(trx, orgId, BOOTSTRAP_ADMIN_USER);
    const generatedKey = generateApiKey();
    await insertAdminKey(trx, orgId, BOOTSTRAP_ADMIN_USER, hashApiKey(generatedKey), 'bootstrap admin key');
    return { orgId, userId: BOOTSTRAP_ADMIN_USER, generatedKey, notes };
  });
}

/**
 * Creates a new org with `adminUserId` as its admin and returns the admin's first key
 * (`conflict` when the org already exists).
 */
export async function createOrgWithAdmin(
  db: Knex,
  orgIdInput: string,
  adminUserIdInput: string,
): Promise<{ orgId: string; userId: string; key: string }> {
  const orgId = parseOrgId(orgIdInput);
  const user = UserId.safeParse(adminUserIdInput);
  if (!user.success) throw new ArbiterError('bad_request', `invalid user id \`${adminUserIdInput}\`: ${user.error.issues[0]?.message}`);
  return db.transaction(async (trx) => {
    if (!(await orgs.insertOrg(trx, orgId))) throw new ArbiterError('conflict', `org \`${orgId}\` already exists`);
    await ensureAdmin(trx, orgId, user.data);
    const key = generateApiKey();
    await insertAdminKey(trx, orgId, user.data, hashApiKey(key), 'first admin key');
    return { orgId, userId: user.data, key };
  });
}

function parseOrgId(input: string): string {
  const parsed = OrgId.safeParse(input);
  if (!parsed.success) throw new ArbiterError('bad_request', `invalid org id \`${input}\`: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

async function ensureAdmin(trx: Knex.Transaction, orgId: string, userId: string): Promise<void> {
  await orgs.insertOrg(trx, orgId);
  await members.upsertMember(trx, orgId, userId, 'admin');
}

async function insertAdminKey(trx: Knex.Transaction, orgId: string, userId: string, keyHash: string, name: string): Promise<void> {
  await keys.insertApiKey(trx, {
    apiKeyId: uuidv7(),
    orgId,
    userId,
    name,
    scopes: ['view', 'edit', 'publish', 'admin', 'audit'],
    keyHash,
    expiresAt: null,
  });
}
