import {
  ArbiterError,
  LiveFlowRecordEntry,
  LivePolicyRecordEntry,
  RegistrySubject,
  ShadowIndexEntry,
  RunnableBaseEntry,
  type RunnableRollout,
  runnableBaseKey,
  runnableRecordKey,
  runnableTimelineKey,
  VersionTimeline,
  type Principal,
  type ResolveRequest,
  type RunnableKind,
} from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { ZodType } from 'zod';
import type { ExecMetrics } from '../metrics.js';
import { timelinePick } from '@arbiter/run';

/** The live record entry of each kind. */
export interface LiveEntryOf {
  policy: LivePolicyRecordEntry;
  flow: LiveFlowRecordEntry;
}

/**
 * What a run names: a base (its record runnable at `at`, epoch ms, else now; or a pinned version)
 * or an exact record. `asOf`: the run asked for an instant (it needs the whole timeline, not only
 * the schedule still ahead).
 */
export type RunTarget = { baseId: string; version?: number; at?: number; asOf?: boolean } | { recordId: string };

/** What a run by base id resolves to: the record, or the base's rollout whose choice is per run's data. */
export type BaseResolution<K extends RunnableKind> = { entry: LiveEntryOf[K]; shadow?: ShadowIndexEntry } | { rollout: RunnableRollout };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Reads a base's entry and the record it points at (the current runnable one, or the pinned
 * version from its `versions` map) in one round trip, checking the base on the server so only the
 * record travels back. KEYS[1]: base key; ARGV[1]: record key prefix; ARGV[2]: pinned version or
 * ''; ARGV[3]: the caller's org; ARGV[4]: the base's timeline key for an as-of run, else ''.
 * Returns [status, record JSON or nil] with status `miss` (no base entry, or an unreadable one),
 * `gone` (deleted, or another org), `no_version`, or `ok` (the record may still be nil: a miss);
 * or `choose` with the base entry's text (and, for an as-of run, the timeline's) when the base's
 * record depends on the run's clock (docs/design/timeline.md) or its data (a rollout,
 * docs/design/canary.md): TypeScript picks, then reads the record by id (a second round trip only
 * for such bases). A run of the current record of a base with a running shadow gets the base
 * entry's `shadow` (JSON) as a third element on the `ok` path; on the `choose` path it is read
 * from the base entry.
 * INVARIANT: the record key is derived inside the script, so this assumes one Redis (not Cluster).
 */
const BASE_AND_RECORD = `
local b = redis.call('GET', KEYS[1])
if not b then return {'miss', false} end
local ok, d = pcall(cjson.decode, b)
if not ok or type(d) ~= 'table' then return {'miss', false} end
if d.state ~= 'live' or d.orgId ~= ARGV[3] then return {'gone', false} end
if d.rollout ~= nil or d.timeline ~= nil then return {'choose', b} end
if ARGV[4] ~= '' and ARGV[2] == '' then return {'choose', b, redis.call('GET', ARGV[4])} end
local rid
if ARGV[2] ~= '' then
  if type(d.versions) ~= 'table' then return {'miss', false} end
  rid = d.versions[ARGV[2]]
  if rid == nil then return {'no_version', false} end
else
  rid = d.recordId
end
if type(rid) ~= 'string' then return {'miss', false} end
if ARGV[2] == '' and type(d.shadow) == 'table' then return {'ok', redis.call('GET', ARGV[1] .. rid), cjson.encode(d.shadow)} end
return {'ok', redis.call('GET', ARGV[1] .. rid)}
`;

/** The script above as a command `defineCommand` adds to the client. */
type WithBaseAndRecord = {
  arbiterBaseAndRecord(
    baseKey: string,
    recordKeyPrefix: string,
    version: string,
    orgId: string,
    timelineKey: string,
  ): Promise<['miss' | 'gone' | 'no_version' | 'ok' | 'choose', string | null, (string | null)?]>;
};

/**
 * Finds the record a run uses from the Redis runnable index the registry keeps (contracts
 * `runnable-index`): one Redis round trip per resolution, PostgreSQL never in steady state. Only a
 * missing entry (Redis flushed, or a key the registry never wrote) asks `registry.{kind}.resolve`,
 * which rebuilds the base's entries from PostgreSQL. Nothing about a base is cached in this process
 * (only parses of entry texts, keyed by the text itself): a publish or delete written by the
 * registry is what the very next resolution reads, on every replica.
 *
 * Unknown, deleted (tombstone) and other-org ids all answer the same `not_found`.
 */
export class RunnableResolver {
  private readonly parsed: LRUCache<string, LiveEntryOf[RunnableKind] | 'gone'>;
  private readonly shadows = new LRUCache<string, ShadowIndexEntry>({ max: 200 });
  /** Parses of base entries and timelines met on the `choose` path, keyed by their text. */
  private readonly parsedChoices: LRUCache<string, ChoiceParse>;

  constructor(
    private readonly redis: Redis,
    private readonly bus: Bus,
    private readonly prefix: string,
    private readonly metrics: ExecMetrics,
    private readonly registryTimeoutMs: number,
    parseCacheSize = 500,
  ) {
    this.parsed = new LRUCache({ max: parseCacheSize });
    this.parsedChoices = new LRUCache({ max: parseCacheSize });
    redis.defineCommand('arbiterBaseAndRecord', { numberOfKeys: 1, lua: BASE_AND_RECORD });
  }

  /**
   * The live record `target` names in `orgId`; throws `not_found`, or `dependency_unavailable` when
   * Redis or the registry is down. A base in a rollout answers its previous version here (a flow's
   * policy node naming the base); a run by base id asks {@link resolveBase}.
   */
  async resolve<K extends RunnableKind>(kind: K, principal: Principal, target: RunTarget): Promise<LiveEntryOf[K]> {
    const found = await this.resolveTarget(kind, principal, target);
    if ('entry' in found) return found.entry;
    return this.resolve(kind, principal, { recordId: found.rollout.previousRecordId });
  }

  /** The record of a run by base id, or the base's rollout when one runs (then the caller chooses per run and asks for the record by id). */
  async resolveBase<K extends RunnableKind>(
    kind: K,
    principal: Principal,
    target: Extract<RunTarget, { baseId: string }>,
  ): Promise<BaseResolution<K>> {
    return this.resolveTarget(kind, principal, target);
  }

  private async resolveTarget<K extends RunnableKind>(kind: K, principal: Principal, target: RunTarget): Promise<BaseResolution<K>> {
    const orgId = principal.orgId;
    const id = 'recordId' in target ? target.recordId : target.baseId;
    const notFound = () => new ArbiterError('not_found', `${kind} \`${id}\` not found`);
    if (!UUID.test(id)) throw notFound();
    const schema = (kind === 'policy' ? LivePolicyRecordEntry : LiveFlowRecordEntry) as unknown as ZodType<LiveEntryOf[K]>;

    let rawRecord: string | null;
    let shadow: ShadowIndexEntry | undefined;
    if ('recordId' in target) {
      rawRecord = await this.redisCall(this.redis.get(runnableRecordKey(this.prefix, kind, target.recordId)));
    } else {
      const [status, raw, third] = await this.redisCall(
        (this.redis as unknown as WithBaseAndRecord).arbiterBaseAndRecord(
          runnableBaseKey(this.prefix, kind, target.baseId),
          runnableRecordKey(this.prefix, kind, ''),
          target.version === undefined ? '' : String(target.version),
          orgId,
          target.asOf === true ? runnableTimelineKey(this.prefix, kind, target.baseId) : '',
        ),
      );
      if (status === 'gone') throw notFound();
      if (status === 'choose' && raw !== null && target.version === undefined && target.asOf !== true) {
        // A rollout's choice is per run's data (the caller makes it); a version waiting on the timeline goes first.
        const base = this.parseChoice(raw);
        if (base !== undefined && 'state' in base && base.state === 'live' && base.orgId === orgId && base.timeline === undefined) {
          if (base.rollout !== undefined) return { rollout: base.rollout };
        }
      }
      if (status === 'no_version') throw new ArbiterError('not_found', `${kind} \`${id}\` has no version ${target.version}`);
      if (status === 'choose') {
        const chosen = await this.chosenRecord(kind, target, raw, third ?? null);
        rawRecord = chosen.record;
        shadow = chosen.shadow;
      } else {
        rawRecord = raw;
        if (typeof third === 'string') shadow = this.parseShadow(third);
      }
    }

    if (rawRecord !== null) {
      const entry = this.parseRecord(kind, rawRecord);
      if (entry === 'gone' || (entry !== null && entry.orgId !== orgId)) throw notFound();
      if (entry !== null) {
        this.metrics.resolutions.inc({ source: 'redis' });
        return shadow === undefined ? { entry } : { entry, shadow };
      }
    }
    // A miss: the registry rebuilds the base's entries from PostgreSQL and answers the record.
    this.metrics.resolutions.inc({ source: 'registry' });
    const request: ResolveRequest =
      'recordId' in target
        ? { principal, recordId: target.recordId }
        : {
            principal,
            baseId: target.baseId,
            ...(target.version !== undefined ? { version: target.version } : {}),
            ...(target.at !== undefined && target.version === undefined ? { at: new Date(target.at).toISOString() } : {}),
          };
    const entry = await this.bus.request(kind === 'policy' ? RegistrySubject.policyResolve : RegistrySubject.flowResolve, request, schema, {
      timeoutMs: this.registryTimeoutMs,
    });
    if (entry.orgId !== orgId) throw notFound();
    return { entry };
  }

  /** A base entry's `shadow` as the script returns it; undefined when unreadable (no shadow run). Cached by its text. */
  private parseShadow(raw: string): ShadowIndexEntry | undefined {
    const cached = this.shadows.get(raw);
    if (cached !== undefined) return cached;
    const parsed = ShadowIndexEntry.safeParse(safeJson(raw));
    if (!parsed.success) return undefined;
    this.shadows.set(raw, parsed.data);
    return parsed.data;
  }

  /**
   * The `choose` path: picks the record id from the base entry (a pinned version from `versions`,
   * else the version in effect at the run's clock on the timeline) and reads it. Null (a miss, the
   * registry rebuilds) when the entry or the timeline an as-of run needs cannot be read.
   */
  private async chosenRecord(
    kind: RunnableKind,
    target: { baseId: string; version?: number; at?: number; asOf?: boolean },
    rawBase: string | null,
    rawTimeline: string | null,
  ): Promise<{ record: string | null; shadow?: ShadowIndexEntry }> {
    const base = rawBase === null ? undefined : this.parseChoice(rawBase);
    if (base === undefined || !('state' in base) || base.state !== 'live') return { record: null };
    let recordId: string | undefined;
    if (target.version !== undefined) {
      recordId = base.versions[String(target.version)];
      if (recordId === undefined) throw new ArbiterError('not_found', `${kind} \`${target.baseId}\` has no version ${target.version}`);
    } else {
      let timeline = base.timeline;
      if (target.asOf === true && timeline === undefined) {
        const text = rawTimeline ?? (await this.redisCall(this.redis.get(runnableTimelineKey(this.prefix, kind, target.baseId))));
        const parsed = text === null ? undefined : this.parseChoice(text);
        if (parsed === undefined || !Array.isArray(parsed)) return { record: null };
        timeline = parsed;
      }
      if (timeline === undefined) recordId = base.recordId;
      else {
        const picked = timelinePick(timeline, target.at ?? Date.now());
        if (picked === undefined) throw beforeFirstVersion(kind, target.baseId, timeline);
        recordId = picked.recordId;
      }
    }
    const record = await this.redisCall(this.redis.get(runnableRecordKey(this.prefix, kind, recordId)));
    // A run by base id (no pinned version) takes part in the base's shadow, whichever version it picked.
    return target.version === undefined && base.shadow !== undefined ? { record, shadow: base.shadow } : { record };
  }

  /** A base entry or a timeline as stored (cached by its text); undefined when unreadable. */
  private parseChoice(raw: string): ChoiceParse | undefined {
    const cached = this.parsedChoices.get(raw);
    if (cached !== undefined) return cached;
    const json = safeJson(raw);
    const parsed = Array.isArray(json) ? VersionTimeline.safeParse(json) : RunnableBaseEntry.safeParse(json);
    if (!parsed.success) return undefined;
    this.parsedChoices.set(raw, parsed.data);
    return parsed.data;
  }

  /**
   * A record entry as stored; `gone` for a tombstone, null when unreadable (treated as a miss).
   * Parses are cached by the entry's exact text: content-addressed, so a changed entry is a new
   * key and nothing can go stale.
   */
  private parseRecord<K extends RunnableKind>(kind: K, raw: string): LiveEntryOf[K] | 'gone' | null {
    const cached = this.parsed.get(raw);
    if (cached !== undefined) return cached as LiveEntryOf[K] | 'gone';
    const json = safeJson(raw) as { state?: unknown } | undefined;
    let entry: LiveEntryOf[K] | 'gone' | null = null;
    if (json?.state === 'deleted') entry = 'gone';
    else {
      const live = (kind === 'policy' ? LivePolicyRecordEntry : LiveFlowRecordEntry).safeParse(json);
      if (live.success && live.data.kind === kind) entry = live.data as LiveEntryOf[K];
    }
    if (entry !== null) this.parsed.set(raw, entry);
    return entry;
  }

  private async redisCall<T>(op: Promise<T>): Promise<T> {
    try {
      return await op;
    } catch (err) {
      throw new ArbiterError('dependency_unavailable', 'the runnable index (Redis) is unavailable', undefined, { cause: err });
    }
  }
}

/** A parsed base entry, or a parsed timeline. */
type ChoiceParse = RunnableBaseEntry | VersionTimeline;

/** 404 of a run by base id at an instant before the base's first version took effect, naming that version. */
function beforeFirstVersion(kind: RunnableKind, baseId: string, timeline: VersionTimeline): ArbiterError {
  const first = timeline[0];
  return new ArbiterError(
    'not_found',
    first === undefined
      ? `${kind} \`${baseId}\` has no version in effect`
      : `${kind} \`${baseId}\` has no version in effect at that instant: its first, version ${first.version}, takes effect at ${new Date(first.from).toISOString()}`,
  );
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}
