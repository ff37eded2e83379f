import {
  ArbiterError,
  canReadDecisions,
  newEvent,
  SHADOW_MAX_EXAMPLES,
  shadowCountsKey,
  shadowExamplesKey,
  type ArbiterEvent,
  type Principal,
  type RunnableKind,
  type ShadowBody,
  type ShadowCounts,
  type ShadowExample,
  type ShadowReport,
} from '@arbiter/contracts';
import type { EventOutbox } from '@arbiter/service-kit';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { requireCapability } from './domain/access.js';
import { isUuid } from './domain/ids.js';
import { findBase, findRecordWithBase, getRecord, lockBase, touchBase, type BaseRow } from './repositories/records.js';
import { findShadow, putShadow, stopShadow, type ShadowRow } from './repositories/shadows.js';
import type { RunnableIndexWriter } from './runnable-index.js';

/** What {@link ShadowService} needs. */
export interface ShadowDeps {
  db: Knex;
  redis: Redis;
  prefix: string;
  index: RunnableIndexWriter;
  events: EventOutbox<Knex.Transaction>;
  logger: Logger;
  /** The clock (tests of expiry). */
  now?: () => Date;
}

const COUNT_FIELDS = ['sampled', 'compared', 'same', 'changed', 'errors', 'dropped'] as const;

/**
 * Shadow runs of a base (docs/design/shadow-runs.md): one candidate record per base, stored here and
 * mirrored into the base's runnable index entry (`shadow`), so the execution service needs no other
 * lookup. The counts and examples the execution service writes to Redis are read back here for the
 * report. Editors, publishers and admins start and stop a shadow; any reader of the base reads the
 * counts, and only callers with the `audit` right read the examples (recorded inputs).
 */
export class ShadowService {
  constructor(private readonly deps: ShadowDeps) {}

  /** Starts (or replaces) the shadow of a base; answers its report (all zero). */
  async set(p: Principal, kind: RunnableKind, baseId: string, body: ShadowBody): Promise<ShadowReport> {
    requireCapability(p, 'edit', `shadow ${kind === 'policy' ? 'policies' : 'flows'}`);
    const now = this.now();
    const until = body.until === undefined ? null : new Date(body.until);
    if (until !== null && until.getTime() <= now.getTime()) {
      throw new ArbiterError('validation_failed', `\`until\` must be in the future (it is ${body.until})`, [
        { code: 'invalid_until', message: '`until` is not in the future', path: 'until' },
      ]);
    }
    const base = await this.liveBase(p, kind, baseId);
    const candidate = await findRecordWithBase(this.deps.db, body.recordId, p.orgId, kind);
    if (candidate === null || candidate.base.deletedAt !== null) {
      throw new ArbiterError('not_found', `${kind} record \`${body.recordId}\` not found`);
    }
    if (candidate.base.id !== base.id) {
      throw new ArbiterError(
        'validation_failed',
        `\`${body.recordId}\` is a record of another base (\`${candidate.base.id}\`), not of \`${base.id}\`: a shadow runs a draft or version of its own base`,
        [{ code: 'other_base', message: 'the record belongs to another base', path: 'recordId' }],
      );
    }
    // The shadow this one replaces (its counters are deleted once the change committed).
    const prior: { row: ShadowRow | null } = { row: null };
    await this.commit(kind, base.id, async (trx) => {
      const locked = await lockBase(trx, base.id);
      if (locked.deletedAt !== null) throw notFound(kind, baseId);
      if (locked.currentRecordId === body.recordId) {
        throw new ArbiterError(
          'validation_failed',
          `\`${body.recordId}\` is the record that answers runs of this base already: shadow a draft or another version`,
          [{ code: 'current_record', message: 'the candidate is the current record', path: 'recordId' }],
        );
      }
      const replaced = await findShadow(trx, base.id);
      prior.row = replaced;
      await putShadow(trx, {
        baseId: base.id,
        orgId: p.orgId,
        recordId: body.recordId,
        sampleRate: body.sampleRate,
        until,
        startedAt: now,
        startedBy: p.userId,
      });
      await touchBase(trx, base.id);
      const previous = replaced !== null && replaced.stoppedAt === null ? replaced.recordId : undefined;
      return [
        newEvent(
          'shadow started',
          p,
          { type: kind, id: base.id, baseId: base.id },
          {
            recordId: body.recordId,
            sampleRate: body.sampleRate,
            until: until?.toISOString() ?? null,
            ...(previous ? { replaced: previous } : {}),
          },
          { at: now },
        ),
      ];
    });
    if (prior.row !== null) await this.forget(kind, prior.row);
    return this.report(p, kind, base.id);
  }

  /** The shadow of a base, running or stopped, with its report; 404 when it has none. */
  async get(p: Principal, kind: RunnableKind, baseId: string): Promise<ShadowReport> {
    requireCapability(p, 'view', `view ${kind === 'policy' ? 'policies' : 'flows'}`);
    const base = await this.liveBase(p, kind, baseId);
    return this.report(p, kind, base.id);
  }

  /** Stops the running shadow of a base; its report stays readable until another shadow replaces it. */
  async stop(p: Principal, kind: RunnableKind, baseId: string): Promise<ShadowReport> {
    requireCapability(p, 'edit', `shadow ${kind === 'policy' ? 'policies' : 'flows'}`);
    const base = await this.liveBase(p, kind, baseId);
    const now = this.now();
    await this.commit(kind, base.id, async (trx) => {
      const locked = await lockBase(trx, base.id);
      if (locked.deletedAt !== null) throw notFound(kind, baseId);
      const shadow = await findShadow(trx, base.id);
      if (shadow === null || !(await stopShadow(trx, base.id, now, p.userId))) {
        throw new ArbiterError('not_found', `${kind} \`${baseId}\` has no running shadow`);
      }
      await touchBase(trx, base.id);
      const counts = await this.counts(kind, shadow);
      return [
        newEvent(
          'shadow stopped',
          p,
          { type: kind, id: base.id, baseId: base.id },
          { recordId: shadow.recordId, sampled: counts.sampled, compared: counts.compared, changed: counts.changed },
          { at: now },
        ),
      ];
    });
    return this.report(p, kind, base.id);
  }

  /** The report of the base's shadow for `p` (examples only with the `audit` right). */
  private async report(p: Principal, kind: RunnableKind, baseId: string): Promise<ShadowReport> {
    const shadow = await findShadow(this.deps.db, baseId);
    if (shadow === null) throw new ArbiterError('not_found', `${kind} \`${baseId}\` has no shadow`);
    const record = await getRecord(this.deps.db, shadow.recordId);
    const counts = await this.counts(kind, shadow);
    const readsExamples = canReadDecisions(p);
    const examples = readsExamples ? await this.examples(kind, shadow) : undefined;
    const now = this.now();
    return {
      baseId,
      candidate: { recordId: shadow.recordId, version: record?.version ?? null, status: record?.status ?? 'draft' },
      sampleRate: shadow.sampleRate,
      until: shadow.until?.toISOString() ?? null,
      since: shadow.startedAt.toISOString(),
      startedBy: shadow.startedBy,
      state: shadow.stoppedAt !== null ? 'stopped' : shadow.until !== null && shadow.until <= now ? 'expired' : 'running',
      stoppedAt: shadow.stoppedAt?.toISOString() ?? null,
      ...counts,
      ...(examples !== undefined ? { examples } : { examplesHidden: true }),
    };
  }

  /** The counts the execution service wrote for a shadow (all zero before its first run). */
  private async counts(kind: RunnableKind, shadow: ShadowRow): Promise<ShadowCounts> {
    const h = await this.redisCall(
      this.deps.redis.hgetall(shadowCountsKey(this.deps.prefix, kind, shadow.baseId, shadow.startedAt.toISOString())),
    );
    const counts: ShadowCounts = { sampled: 0, compared: 0, same: 0, changed: 0, errors: 0, dropped: 0, transitions: {} };
    for (const f of COUNT_FIELDS) counts[f] = Number(h[f] ?? 0);
    for (const [field, value] of Object.entries(h)) if (field.startsWith('t:')) counts.transitions[field.slice(2)] = Number(value);
    return counts;
  }

  private async examples(kind: RunnableKind, shadow: ShadowRow): Promise<ShadowExample[]> {
    const key = shadowExamplesKey(this.deps.prefix, kind, shadow.baseId, shadow.startedAt.toISOString());
    const texts = await this.redisCall(this.deps.redis.lrange(key, 0, SHADOW_MAX_EXAMPLES - 1));
    const out: ShadowExample[] = [];
    for (const t of texts) {
      try {
        out.push(JSON.parse(t) as ShadowExample);
      } catch {
        // An unreadable entry is left out.
      }
    }
    return out;
  }

  /** Deletes the counters and examples of a replaced shadow (best effort: they expire anyway). */
  private async forget(kind: RunnableKind, old: ShadowRow): Promise<void> {
    const since = old.startedAt.toISOString();
    try {
      await this.deps.redis.del(
        shadowCountsKey(this.deps.prefix, kind, old.baseId, since),
        shadowExamplesKey(this.deps.prefix, kind, old.baseId, since),
      );
    } catch (err) {
      this.deps.logger.warn({ err, baseId: old.baseId }, 'counters of a replaced shadow not deleted (they expire)');
    }
  }

  /** A live base of the caller's org, by base id or any of its record ids; 404 otherwise. */
  private async liveBase(p: Principal, kind: RunnableKind, id: string): Promise<BaseRow> {
    if (!isUuid(id)) throw notFound(kind, id);
    const base = (await findBase(this.deps.db, id, p.orgId, kind)) ?? (await findRecordWithBase(this.deps.db, id, p.orgId, kind))?.base;
    if (base === undefined || base === null || base.deletedAt !== null) throw notFound(kind, id);
    return base;
  }

  /** Runs `fn` in a transaction with its events, then rewrites the base's runnable index and wakes the relay. */
  private async commit(kind: RunnableKind, baseId: string, fn: (trx: Knex.Transaction) => Promise<ArbiterEvent[]>): Promise<void> {
    await this.deps.db.transaction(async (trx) => {
      const events = await fn(trx);
      await this.deps.events.enqueue(trx, events);
    });
    this.deps.events.committed();
    try {
      await this.deps.index.refresh(kind, baseId);
    } catch (err) {
      throw new ArbiterError(
        'dependency_unavailable',
        `the runnable index could not be updated for base \`${baseId}\`: it is retried in the background`,
        undefined,
        { cause: err },
      );
    }
  }

  private async redisCall<T>(op: Promise<T>): Promise<T> {
    try {
      return await op;
    } catch (err) {
      throw new ArbiterError('dependency_unavailable', 'the shadow counters (Redis) are unavailable', undefined, { cause: err });
    }
  }

  private now(): Date {
    return this.deps.now?.() ?? new Date();
  }
}

function notFound(kind: RunnableKind, id: string): ArbiterError {
  return new ArbiterError('not_found', `${kind} \`${id}\` not found`);
}
