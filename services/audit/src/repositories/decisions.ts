import type { DecisionNodeReasons, DecisionRecord, DecisionResult, Reasons } from '@arbiter/contracts';
import type { Db } from '@arbiter/service-kit';
import type { Knex } from 'knex';

/** A row of `decisions`. */
export interface DecisionRow {
  decision_id: string;
  org_id: string;
  at: Date;
  now: Date;
  kind: 'policy' | 'flow';
  base_id: string;
  record_id: string;
  version: number | null;
  caller_user_id: string;
  caller_api_key_id: string | null;
  input: Record<string, unknown>;
  masked: boolean;
  result: DecisionResult;
  result_text: string | null;
  outcomes: Record<string, unknown> | null;
  path: string[] | null;
  error_code: string | null;
  duration_us: string | number;
  reasons: Reasons | null;
  node_reasons: DecisionNodeReasons | null;
  reasons_left_out: boolean;
}

/**
 * Stores decisions with one `INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING` (redeliveries
 * are skipped). The partitions of their months must exist. Returns how many rows were new.
 */
export async function insertDecisions(db: Db, records: readonly DecisionRecord[]): Promise<number> {
  if (records.length === 0) return 0;
  const cols: Array<Array<string | number | boolean | null>> = Array.from({ length: 21 }, () => []);
  for (const r of records) {
    const values = [
      r.decisionId,
      r.orgId,
      r.at,
      r.now,
      r.kind,
      r.baseId,
      r.policyId ?? r.flowId ?? '',
      r.version,
      r.caller.userId,
      r.caller.apiKeyId ?? null,
      JSON.stringify(r.input),
      r.masked,
      JSON.stringify(r.result),
      typeof r.result === 'boolean' ? String(r.result) : typeof r.result === 'string' ? r.result : null,
      r.outcomes !== undefined ? JSON.stringify(r.outcomes) : null,
      r.path !== undefined ? JSON.stringify(r.path) : null,
      r.errorCode,
      r.durationUs,
      r.reasons !== undefined ? JSON.stringify(r.reasons) : null,
      r.nodeReasons !== undefined ? JSON.stringify(r.nodeReasons) : null,
      r.reasonsLeftOut === true,
    ];
    for (let i = 0; i < values.length; i++) cols[i]!.push(values[i]!);
  }
  const result = (await db.raw(
    `insert into decisions (decision_id, org_id, at, now, kind, base_id, record_id, version, caller_user_id, caller_api_key_id,
                            input, masked, result, result_text, outcomes, path, error_code, duration_us,
                            reasons, node_reasons, reasons_left_out)
     select * from unnest(?::uuid[], ?::text[], ?::timestamptz[], ?::timestamptz[], ?::text[], ?::text[], ?::text[], ?::int[],
                          ?::text[], ?::text[], ?::jsonb[], ?::boolean[], ?::jsonb[], ?::text[], ?::jsonb[], ?::jsonb[], ?::text[], ?::bigint[],
                          ?::jsonb[], ?::jsonb[], ?::boolean[])
     on conflict do nothing`,
    cols as Knex.RawBinding[],
  )) as { rowCount: number | null };
  return result.rowCount ?? 0;
}

/** What a decision query selects: one org, the filters, strictly before a keyset position. */
export interface DecisionQuery {
  orgId: string;
  baseId?: string;
  version?: number;
  result?: 'true' | 'false';
  errorCode?: string;
  caller?: string;
  apiKeyId?: string;
  from?: Date;
  to?: Date;
  before?: { at: Date; id: string };
  limit: number;
}

/** A page of decisions newest first, ordered by (at, decision_id) descending. */
export async function queryDecisions(db: Db, q: DecisionQuery): Promise<DecisionRow[]> {
  return (await selected(db, q)) as DecisionRow[];
}

/** A decision of a history page as the database writes it (JSON texts, never decoded here). */
export interface HistoryRow {
  decision_id: string;
  /** `at` in ISO 8601 (UTC, milliseconds), as `Date.toISOString` writes it. */
  at_iso: string;
  /** The `DecisionHistoryEntry` (contracts) of the decision, as JSON text. */
  entry: string;
  /** The masked input, as JSON text. */
  input: string;
}

const isoOf = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The decisions of a {@link DecisionQuery} for an impact analysis, newest first: each one's entry
 * and input as JSON texts written by PostgreSQL, so a page goes on to the analysis without being
 * decoded and encoded again in this service.
 */
export async function historyRows(db: Db, q: DecisionQuery): Promise<HistoryRow[]> {
  return (await selected(db, q, [
    'decision_id',
    db.raw(`${isoOf('at')} as at_iso`),
    db.raw(
      `(jsonb_build_object('decisionId', decision_id, 'at', ${isoOf('at')}, 'now', ${isoOf('now')}, 'result', result, 'errorCode', error_code,
                           case when kind = 'policy' then 'policyId' else 'flowId' end, record_id)
        || case when outcomes is null then '{}'::jsonb else jsonb_build_object('outcomes', outcomes) end
        || case when path is null then '{}'::jsonb else jsonb_build_object('path', path) end
        || case when reasons is null then '{}'::jsonb else jsonb_build_object('reasons', reasons) end
        || case when node_reasons is null then '{}'::jsonb else jsonb_build_object('nodeReasons', node_reasons) end)::text as entry`,
    ),
    db.raw('input::text as input'),
  ])) as HistoryRow[];
}

function selected(db: Db, q: DecisionQuery, columns?: Array<string | Knex.Raw>) {
  const query = db('decisions').where('org_id', q.orgId);
  if (columns !== undefined) query.select(columns);
  if (q.baseId !== undefined) query.andWhere('base_id', q.baseId);
  if (q.version !== undefined) query.andWhere('version', q.version);
  if (q.result !== undefined) query.andWhere('result_text', q.result);
  if (q.errorCode !== undefined) query.andWhere('error_code', q.errorCode);
  if (q.caller !== undefined) query.andWhere('caller_user_id', q.caller);
  if (q.apiKeyId !== undefined) query.andWhere('caller_api_key_id', q.apiKeyId);
  if (q.from !== undefined) query.andWhere('at', '>=', q.from);
  if (q.to !== undefined) query.andWhere('at', '<', q.to);
  if (q.before !== undefined) {
    query.andWhere('at', '<=', q.before.at).andWhereRaw('(at, decision_id) < (?, ?::uuid)', [q.before.at, q.before.id]);
  }
  return query
    .orderBy([
      { column: 'at', order: 'desc' },
      { column: 'decision_id', order: 'desc' },
    ])
    .limit(q.limit);
}

/** One decision of an org, or undefined. */
export async function getDecision(db: Db, orgId: string, decisionId: string): Promise<DecisionRow | undefined> {
  return (await db<DecisionRow>('decisions').where({ org_id: orgId, decision_id: decisionId }).first()) as DecisionRow | undefined;
}

/** Rows stored (tests and the benchmark). */
export async function countDecisions(db: Db, orgId?: string): Promise<number> {
  const query = db('decisions').count<{ count: string }[]>('* as count');
  if (orgId !== undefined) query.where('org_id', orgId);
  const [row] = await query;
  return Number(row?.count ?? 0);
}

/** The org's settings rows: `''` is the org masks, any other key a base's settings. */
export async function readSettings(db: Db, orgId: string): Promise<Map<string, unknown>> {
  const rows = (await db('decision_settings').where('org_id', orgId).select('base_id', 'settings')) as Array<{
    base_id: string;
    settings: unknown;
  }>;
  return new Map(rows.map((r) => [r.base_id, r.settings]));
}

/** Stores one settings row (`baseId` `''`: the org masks). */
export async function writeSettings(db: Db, orgId: string, baseId: string, settings: unknown): Promise<void> {
  await db('decision_settings')
    .insert({ org_id: orgId, base_id: baseId, settings: JSON.stringify(settings) })
    .onConflict(['org_id', 'base_id'])
    .merge({ settings: JSON.stringify(settings), updated_at: db.fn.now() });
}

/** Serialises settings changes of one org until the transaction ends, so its bounds hold under concurrent changes. */
export async function lockOrgSettings(trx: Db, orgId: string): Promise<void> {
  await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [`audit_decision_settings:${orgId}`]);
}

/** Removes one settings row; answers whether there was one. */
export async function deleteSettingsRow(db: Db, orgId: string, baseId: string): Promise<boolean> {
  return (await db('decision_settings').where({ org_id: orgId, base_id: baseId }).delete()) > 0;
}
