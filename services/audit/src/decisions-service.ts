import {
  ArbiterError,
  BaseDecisionSettings,
  canReadDecisions,
  DECISION_SETTINGS_LIMIT,
  hasCapability,
  MAX_DECISION_SETTINGS_BASES,
  MAX_DECISION_SETTINGS_BYTES,
  OrgDecisionSettings,
  type DecisionBaseStats,
  type DecisionDropsReply,
  type DecisionDropsReport,
  type DecisionGetRequest,
  type DecisionHistoryRequest,
  type DecisionPage,
  type DecisionQueryRequest,
  type DecisionRecord,
  type DecisionSettings,
  type DecisionSettingsDeleted,
  type DecisionSettingsDeleteRequest,
  type DecisionSettingsPutRequest,
  type Principal,
} from '@arbiter/contracts';
import { cursorField, decodeCursor, encodeCursor, encodeFrame, ReplyBytes, type Db } from '@arbiter/service-kit';
import { z } from 'zod';
import { addDropsReport, countBaseDecisions, readBaseDrops } from './repositories/decision-stats.js';
import {
  deleteSettingsRow,
  getDecision,
  historyRows,
  lockOrgSettings,
  queryDecisions,
  readSettings,
  writeSettings,
  type DecisionRow,
} from './repositories/decisions.js';

/** The parsed `audit.decisions.query` request (defaults applied). */
export type DecisionQueryInput = z.output<typeof DecisionQueryRequest>;
type PutInput = z.output<typeof DecisionSettingsPutRequest>;

/** A page of decisions ends at one: its time and id (the keyset, newest first). */
const DecisionCursor = z.object({ at: cursorField.timestamp(), id: cursorField.uuid() });

/** A decision as read back from its row. */
export function toDecisionRecord(row: DecisionRow): DecisionRecord {
  return {
    decisionId: row.decision_id,
    orgId: row.org_id,
    at: row.at.toISOString(),
    now: row.now.toISOString(),
    kind: row.kind,
    baseId: row.base_id,
    ...(row.kind === 'policy' ? { policyId: row.record_id } : { flowId: row.record_id }),
    version: row.version,
    caller: { userId: row.caller_user_id, ...(row.caller_api_key_id !== null ? { apiKeyId: row.caller_api_key_id } : {}) },
    input: row.input,
    masked: row.masked,
    result: row.result,
    ...(row.outcomes !== null ? { outcomes: row.outcomes } : {}),
    ...(row.path !== null ? { path: row.path } : {}),
    errorCode: row.error_code,
    durationUs: Number(row.duration_us),
    ...(row.reasons !== null ? { reasons: row.reasons } : {}),
    ...(row.node_reasons !== null ? { nodeReasons: row.node_reasons } : {}),
    ...(row.reasons_left_out ? { reasonsLeftOut: true as const } : {}),
  };
}

/**
 * One page of the caller's org's decisions, newest first, filtered (admins and auditors: the
 * `audit` right). Another org's decisions are never selected.
 */
export async function listDecisions(db: Db, req: DecisionQueryInput): Promise<DecisionPage> {
  authorizeDecisionRead(req.principal);
  const from = req.from !== undefined ? new Date(req.from) : undefined;
  const to = req.to !== undefined ? new Date(req.to) : undefined;
  if (from && to && from.getTime() > to.getTime()) throw new ArbiterError('bad_request', '`from` is after `to`');
  const before = req.cursor !== undefined ? decodeCursor(req.cursor, DecisionCursor) : undefined;
  const rows = await queryDecisions(db, {
    orgId: req.principal.orgId,
    ...(req.baseId !== undefined ? { baseId: req.baseId } : {}),
    ...(req.version !== undefined ? { version: req.version } : {}),
    ...(req.result !== undefined ? { result: req.result } : {}),
    ...(req.errorCode !== undefined ? { errorCode: req.errorCode } : {}),
    ...(req.caller !== undefined ? { caller: req.caller } : {}),
    ...(req.apiKeyId !== undefined ? { apiKeyId: req.apiKeyId } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(before ? { before: { at: new Date(before.at), id: before.id } } : {}),
    limit: req.limit + 1,
  });
  // A page stops early past LIST_PAGE_BYTES (records with large inputs or reasons): it must fit a bus reply.
  const items: DecisionRecord[] = [];
  let bytes = 0;
  for (const row of rows.slice(0, req.limit)) {
    const record = toDecisionRecord(row);
    const size = Buffer.byteLength(JSON.stringify(record));
    if (items.length > 0 && bytes + size > LIST_PAGE_BYTES) break;
    items.push(record);
    bytes += size;
  }
  const more = rows.length > items.length;
  const last = rows[items.length - 1];
  return {
    items,
    nextCursor: more && last ? encodeCursor({ at: last.at.toISOString(), id: last.decision_id }) : null,
  };
}

/** One decision of the caller's org; 404 for an unknown id or another org's. */
export async function readDecision(db: Db, req: DecisionGetRequest): Promise<DecisionRecord> {
  authorizeDecisionRead(req.principal);
  const parsed = z.uuid().safeParse(req.decisionId);
  const row = parsed.success ? await getDecision(db, req.principal.orgId, parsed.data) : undefined;
  if (row === undefined) throw new ArbiterError('not_found', `decision \`${req.decisionId}\` not found`);
  return toDecisionRecord(row);
}

/**
 * A page of one base's decisions for an impact analysis (newest first): callers who may edit (the
 * governance service checks the record's own rights first). The reply is a frame
 * (`DecisionHistoryHeader`): the entries in its header, the masked inputs as its items, all as
 * PostgreSQL wrote them. Pages stop early past ~512 KB so they fit a bus message.
 */
export async function decisionHistory(db: Db, req: DecisionHistoryRequest): Promise<ReplyBytes> {
  if (!hasCapability(req.principal, 'edit')) {
    throw new ArbiterError('forbidden', `role \`${req.principal.role}\` cannot analyse the impact of a change`);
  }
  const before = req.cursor !== undefined ? decodeCursor(req.cursor, DecisionCursor) : undefined;
  const rows = await historyRows(db, {
    orgId: req.principal.orgId,
    baseId: req.baseId,
    ...(req.from !== undefined ? { from: new Date(req.from) } : {}),
    ...(req.to !== undefined ? { to: new Date(req.to) } : {}),
    ...(before ? { before: { at: new Date(before.at), id: before.id } } : {}),
    limit: req.limit + 1,
  });
  const entries: string[] = [];
  const inputs: string[] = [];
  let bytes = 0;
  for (const row of rows.slice(0, req.limit)) {
    entries.push(row.entry);
    inputs.push(row.input);
    bytes += Buffer.byteLength(row.input) + Buffer.byteLength(row.entry);
    if (bytes > HISTORY_PAGE_BYTES) break;
  }
  const more = rows.length > entries.length;
  const last = rows[entries.length - 1];
  const nextCursor = more && last ? encodeCursor({ at: last.at_iso, id: last.decision_id }) : null;
  return new ReplyBytes(encodeFrame({ nextCursor }, inputs, { entries: `[${entries.join(',')}]` }));
}

/**
 * Bytes of records one `GET /decisions` page carries at most (one record always): under NATS's
 * 1 MB default payload whatever the records' inputs and reasons; the cursor goes on from there.
 */
const LIST_PAGE_BYTES = 512 * 1024;

/** Bytes of inputs one history page carries, about (under NATS's 1 MB default payload). */
const HISTORY_PAGE_BYTES = 512 * 1024;

/** Decisions hold the data of runs: the same readers as the audit trail. */
function authorizeDecisionRead(principal: Principal): void {
  if (!canReadDecisions(principal)) {
    throw new ArbiterError('forbidden', `role \`${principal.role}\`${principal.scopes ? ' with this key' : ''} cannot read decisions`);
  }
}

/**
 * A base's recording stats (admins, auditors and publishers, like the settings): records stored,
 * and records dropped by reason as the execution replicas reported them. A base never recorded
 * (or of another org) has zeros.
 */
export async function baseStats(db: Db, principal: Principal, baseId: string): Promise<DecisionBaseStats> {
  if (!hasCapability(principal, 'audit') && !hasCapability(principal, 'publish')) {
    throw new ArbiterError('forbidden', `role \`${principal.role}\` cannot read decision stats`);
  }
  const [recorded, drops] = await Promise.all([
    countBaseDecisions(db, principal.orgId, baseId),
    readBaseDrops(db, principal.orgId, baseId),
  ]);
  return {
    baseId,
    recorded,
    dropped: {
      total: drops.outbox + drops.buffer + drops.settings + drops.tooLarge,
      outbox: drops.outbox,
      buffer: drops.buffer,
      settings: drops.settings,
      tooLarge: drops.tooLarge,
    },
    lastDroppedAt: drops.lastDroppedAt?.toISOString() ?? null,
  };
}

/** Adds an execution replica's report of dropped records to the bases' stats, once per report id. */
export async function reportDrops(db: Db, report: DecisionDropsReport): Promise<DecisionDropsReply> {
  return { added: await addDropsReport(db, report) };
}

/** Every decision setting of an org, defaults filled in. */
export async function resolveSettings(db: Db, orgId: string): Promise<DecisionSettings> {
  return settingsOf(await readSettings(db, orgId));
}

/** The org's settings from its rows (`''`: the org masks). */
function settingsOf(rows: ReadonlyMap<string, unknown>): DecisionSettings {
  const bases: DecisionSettings['bases'] = {};
  let masks: string[] = [];
  for (const [baseId, value] of rows) {
    if (baseId === '') masks = OrgDecisionSettings.parse(value).masks;
    else bases[baseId] = BaseDecisionSettings.parse(value);
  }
  return { masks, bases };
}

/** The caller org's settings: admins, auditors and publishers. */
export async function getSettings(db: Db, principal: Principal): Promise<DecisionSettings> {
  if (!hasCapability(principal, 'audit') && !hasCapability(principal, 'publish')) {
    throw new ArbiterError('forbidden', `role \`${principal.role}\` cannot read decision settings`);
  }
  return resolveSettings(db, principal.orgId);
}

/**
 * Replaces the org masks (admins) or a base's settings (admins and publishers); answers every
 * setting of the org. The gateway has checked that the base is a policy or flow of the org. A
 * change that would take the org's settings past {@link MAX_DECISION_SETTINGS_BASES} bases or
 * {@link MAX_DECISION_SETTINGS_BYTES} (as they are read) is refused before anything is written,
 * unless it makes them smaller; the org's changes are serialised so concurrent ones cannot pass it together.
 */
export async function putSettings(db: Db, req: PutInput): Promise<DecisionSettings> {
  if (req.scope === 'org') {
    if (!hasCapability(req.principal, 'admin')) {
      throw new ArbiterError('forbidden', `role \`${req.principal.role}\` cannot change the org's decision masks`);
    }
  } else if (!hasCapability(req.principal, 'publish')) {
    throw new ArbiterError('forbidden', `role \`${req.principal.role}\` cannot change decision settings`);
  }
  const orgId = req.principal.orgId;
  const baseId = req.scope === 'org' ? '' : req.baseId;
  return db.transaction(async (trx) => {
    await lockOrgSettings(trx, orgId);
    const rows = await readSettings(trx, orgId);
    const before = settingsOf(rows);
    const next = new Map(rows).set(baseId, req.settings);
    const after = settingsOf(next);
    checkBounds(before, after);
    await writeSettings(trx, orgId, baseId, req.settings);
    return after;
  });
}

/**
 * Removes a base's settings of its own (admins and publishers); 404 when it has none. Needs no
 * live base: the settings of a deleted base can be removed too.
 */
export async function deleteBaseSettings(db: Db, req: DecisionSettingsDeleteRequest): Promise<DecisionSettingsDeleted> {
  if (!hasCapability(req.principal, 'publish')) {
    throw new ArbiterError('forbidden', `role \`${req.principal.role}\` cannot change decision settings`);
  }
  const orgId = req.principal.orgId;
  return db.transaction(async (trx) => {
    await lockOrgSettings(trx, orgId);
    if (!(await deleteSettingsRow(trx, orgId, req.baseId))) {
      throw new ArbiterError('not_found', `base \`${req.baseId}\` has no decision settings of its own`);
    }
    return { baseId: req.baseId };
  });
}

/** Refuses settings past the org's bounds, unless the change makes them smaller (an org over them from before can shrink). */
function checkBounds(before: DecisionSettings, after: DecisionSettings): void {
  const bases = Object.keys(after.bases).length;
  if (bases > MAX_DECISION_SETTINGS_BASES && bases > Object.keys(before.bases).length) {
    throw new ArbiterError(
      'payload_too_large',
      `an org may give settings of their own to at most ${MAX_DECISION_SETTINGS_BASES} bases: nothing was changed (remove some with DELETE)`,
      [{ code: DECISION_SETTINGS_LIMIT, path: 'bases', message: `${bases} bases with settings, at most ${MAX_DECISION_SETTINGS_BASES}` }],
    );
  }
  const bytes = Buffer.byteLength(JSON.stringify(after));
  if (bytes > MAX_DECISION_SETTINGS_BYTES && bytes > Buffer.byteLength(JSON.stringify(before))) {
    throw new ArbiterError(
      'payload_too_large',
      `the org's decision settings would be ${bytes} bytes, at most ${MAX_DECISION_SETTINGS_BYTES}: nothing was changed (remove masks or bases' settings)`,
      [{ code: DECISION_SETTINGS_LIMIT, path: 'masks', message: `${bytes} bytes of settings, at most ${MAX_DECISION_SETTINGS_BYTES}` }],
    );
  }
}
