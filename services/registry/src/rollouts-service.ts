import {
  ArbiterError,
  newEvent,
  rolloutWindowKey,
  ROLLOUT_MIN_RUNS_DEFAULT,
  type ArbiterEvent,
  type Principal,
  type Rollout,
  type RolloutStart,
  type RolloutState,
  type RunnableKind,
} from '@arbiter/contracts';
import type { EventOutbox } from '@arbiter/service-kit';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { requireCapability } from './domain/access.js';
import { isUuid, newId } from './domain/ids.js';
import { findBase, lockBase, touchBase, type BaseRow, type RecordRow } from './repositories/records.js';
import { deleteRollout, findRollout, insertRollout, setRolloutPercent, type RolloutRow } from './repositories/rollouts.js';
import { withdrawVersion } from './repositories/timeline.js';
import type { RunnableIndexWriter } from './runnable-index.js';

/** Who acts when a rollout's guard rolls it back (the actor of its `rollout changed` event). */
export const ROLLOUT_GUARD_ACTOR = 'rollout-guard';

/**
 * Starts a rollout of `published` (just made the base's next version, its lock held) against the
 * base's record before it (`previous`, which must be a version): called by a publish asked with
 * `rollout` (docs/design/canary.md). Pushes the `rollout changed` event (`started`).
 */
export async function startRolloutLocked(
  trx: Knex.Transaction,
  p: Principal,
  kind: RunnableKind,
  previous: RecordRow,
  published: RecordRow,
  start: RolloutStart,
  now: Date,
  events: ArbiterEvent[],
): Promise<void> {
  if (previous.status !== 'published' || previous.version === null) {
    throw new ArbiterError(
      'conflict',
      `${kind} \`${published.baseId}\` has no published version to roll out from: publish it without \`rollout\` first; nothing was published`,
    );
  }
  const row: RolloutRow = {
    baseId: published.baseId,
    id: newId(),
    orgId: p.orgId,
    recordId: published.id,
    version: published.version!,
    previousRecordId: previous.id,
    previousVersion: previous.version,
    percent: start.percent,
    by: start.by ?? null,
    maxErrorRate: start.maxErrorRate ?? null,
    minRuns: start.maxErrorRate === undefined ? null : (start.minRuns ?? ROLLOUT_MIN_RUNS_DEFAULT),
    startedAt: now,
    startedBy: p.userId,
    updatedAt: now,
    updatedBy: p.userId,
  };
  await insertRollout(trx, row);
  events.push(
    newEvent(
      'rollout changed',
      p,
      { type: kind, id: published.id, baseId: published.baseId },
      { action: 'started', version: row.version, previousVersion: row.previousVersion, percent: row.percent, by: row.by },
      { at: now },
    ),
  );
}

/** Refuses a publish while a rollout runs: it is promoted or rolled back first (409). */
export async function assertNoRollout(trx: Knex.Transaction, kind: RunnableKind, baseId: string): Promise<void> {
  const running = await findRollout(trx, baseId);
  if (running !== null) {
    throw new ArbiterError(
      'conflict',
      `${kind} \`${baseId}\` has a rollout of version ${running.version} running: promote it or roll it back before publishing again; nothing was published`,
    );
  }
}

/** What {@link RolloutsService} needs around it. */
export interface RolloutsDeps {
  db: Knex;
  redis: Redis;
  prefix: string;
  index: RunnableIndexWriter;
  events: EventOutbox<Knex.Transaction>;
}

/** Error share of a guard window: `1`s among its characters. */
function errorShare(window: string): number {
  if (window.length === 0) return 0;
  let errors = 0;
  for (let i = 0; i < window.length; i++) if (window.charCodeAt(i) === 49) errors++;
  return errors / window.length;
}

/**
 * The rollout acts on a base after its publish (docs/api.md#staged-rollouts): show, move the share,
 * promote, roll back, and the guard's roll back. Each change runs in one transaction under the
 * base's row lock with its `rollout changed` event, bumps the base's revision (so the runnable
 * revision moves and SDK runtimes sync) and rewrites the base's runnable index before answering,
 * so the very next run on every execution replica follows it.
 */
export class RolloutsService {
  constructor(
    private readonly deps: RolloutsDeps,
    private readonly kind: RunnableKind,
  ) {}

  /** The base's running rollout, if any (any member). */
  async get(p: Principal, baseId: string): Promise<RolloutState> {
    requireCapability(p, 'view', `view ${this.kind} rollouts`);
    const base = await this.liveBase(p, baseId);
    return this.state(base.id, await findRollout(this.deps.db, base.id));
  }

  /** Moves the share of the running rollout (publisher or admin); 409 when none runs. */
  async setPercent(p: Principal, baseId: string, percent: number): Promise<RolloutState> {
    requireCapability(p, 'publish', `change ${this.kind} rollouts`);
    return this.change(p, baseId, async (trx, base, rollout, now, events) => {
      if (rollout.percent === percent) return rollout;
      await setRolloutPercent(trx, base.id, percent, p.userId, now);
      events.push(this.event(p, rollout, { action: 'percent', percent, fromPercent: rollout.percent }, now));
      return { ...rollout, percent, updatedAt: now, updatedBy: p.userId };
    });
  }

  /** Ends the rollout with the new version serving every run (publisher or admin); 409 when none runs. */
  async promote(p: Principal, baseId: string): Promise<RolloutState> {
    requireCapability(p, 'publish', `promote ${this.kind} rollouts`);
    return this.change(p, baseId, async (trx, base, rollout, now, events) => {
      await deleteRollout(trx, base.id);
      events.push(this.event(p, rollout, { action: 'promoted', percent: 100, fromPercent: rollout.percent }, now));
      return null;
    });
  }

  /**
   * Ends the rollout with the previous version serving every run again (publisher or admin); the
   * new version stays in the base's history. 409 when none runs.
   */
  async rollback(p: Principal, baseId: string): Promise<RolloutState> {
    requireCapability(p, 'publish', `roll back ${this.kind} rollouts`);
    return this.change(p, baseId, async (trx, base, rollout, now, events) => {
      await this.endWithPrevious(trx, base, rollout, p.userId, now);
      events.push(this.event(p, rollout, { action: 'rolled_back', percent: 0, fromPercent: rollout.percent }, now));
      return null;
    });
  }

  /**
   * The guard's check, asked by an execution replica whose counters of rollout `rolloutId` tripped
   * (any caller of the org may ask: nothing is taken on trust). Reads both versions' windows from
   * Redis and rolls back, as {@link ROLLOUT_GUARD_ACTOR} with reason `guard`, only when each holds
   * `minRuns` runs and the new version's error share exceeds the previous one's by more than
   * `maxErrorRate`. Answers the state after the check.
   */
  async guard(p: Principal, baseId: string, rolloutId: string | undefined): Promise<RolloutState> {
    requireCapability(p, 'view', `run ${this.kind} rollouts`);
    const base = await this.liveBase(p, baseId);
    const running = await findRollout(this.deps.db, base.id);
    if (running === null || running.id !== rolloutId || running.maxErrorRate === null) return this.state(base.id, running);
    const minRuns = running.minRuns ?? ROLLOUT_MIN_RUNS_DEFAULT;
    const [next, previous] = await this.deps.redis.mget(
      rolloutWindowKey(this.deps.prefix, running.id, 'new'),
      rolloutWindowKey(this.deps.prefix, running.id, 'previous'),
    );
    if (next === null || previous === null || next.length < minRuns || previous.length < minRuns) return this.state(base.id, running);
    const rates = { version: errorShare(next), previousVersion: errorShare(previous), runs: minRuns };
    if (rates.version - rates.previousVersion <= running.maxErrorRate) return this.state(base.id, running);
    const actor = { orgId: base.orgId, userId: ROLLOUT_GUARD_ACTOR };
    return this.change(p, baseId, async (trx, locked, rollout, now, events) => {
      if (rollout.id !== running.id) return rollout;
      await this.endWithPrevious(trx, locked, rollout, ROLLOUT_GUARD_ACTOR, now);
      events.push(
        this.event(
          actor,
          rollout,
          { action: 'rolled_back', percent: 0, fromPercent: rollout.percent, reason: 'guard', errorRates: rates },
          now,
        ),
      );
      return null;
    });
  }

  /**
   * Ends a rollout with its previous record as the base's current one again; the new version is
   * withdrawn from the base's timeline (docs/design/timeline.md), so no run by base id, at any
   * instant, picks it again.
   */
  private async endWithPrevious(trx: Knex.Transaction, base: BaseRow, rollout: RolloutRow, by: string, at: Date): Promise<void> {
    await deleteRollout(trx, base.id);
    await touchBase(trx, base.id, { currentRecordId: rollout.previousRecordId });
    await withdrawVersion(trx, { recordId: rollout.recordId, baseId: base.id, version: rollout.version }, by, at);
  }

  private event(
    by: { orgId: string; userId: string; apiKeyId?: string },
    r: RolloutRow,
    d: {
      action: 'percent' | 'promoted' | 'rolled_back';
      percent: number;
      fromPercent: number;
      reason?: 'guard';
      errorRates?: { version: number; previousVersion: number; runs: number };
    },
    at: Date,
  ): ArbiterEvent {
    return newEvent(
      'rollout changed',
      by,
      { type: this.kind, id: r.recordId, baseId: r.baseId },
      { version: r.version, previousVersion: r.previousVersion, by: r.by, ...d },
      { at },
    );
  }

  /**
   * Runs one change of the base's running rollout under its row lock (404 for unknown, deleted or
   * other-org bases, 409 `conflict` when no rollout runs), then bumps the base's revision, queues the
   * events and rewrites the runnable index. `fn` answers the rollout after the change (null: ended).
   */
  private async change(
    p: Principal,
    baseId: string,
    fn: (trx: Knex.Transaction, base: BaseRow, rollout: RolloutRow, now: Date, events: ArbiterEvent[]) => Promise<RolloutRow | null>,
  ): Promise<RolloutState> {
    const found = await this.liveBase(p, baseId);
    const events: ArbiterEvent[] = [];
    const after = await this.deps.db.transaction(async (trx) => {
      const base = await lockBase(trx, found.id);
      if (base.deletedAt !== null) throw this.notFound(baseId);
      const rollout = await findRollout(trx, base.id);
      if (rollout === null) throw new ArbiterError('conflict', `${this.kind} \`${base.id}\` has no rollout running`);
      const result = await fn(trx, base, rollout, new Date(), events);
      if (events.length > 0) {
        await touchBase(trx, base.id);
        await this.deps.events.enqueue(trx, events);
      }
      return result;
    });
    if (events.length > 0) {
      this.deps.events.committed();
      try {
        await this.deps.index.refresh(this.kind, found.id);
      } catch (err) {
        throw new ArbiterError(
          'dependency_unavailable',
          `the runnable index could not be updated for base \`${found.id}\`: it is retried in the background`,
          undefined,
          { cause: err },
        );
      }
    }
    return this.state(found.id, after);
  }

  private async liveBase(p: Principal, baseId: string): Promise<BaseRow> {
    if (!isUuid(baseId)) throw this.notFound(baseId);
    const base = await findBase(this.deps.db, baseId, p.orgId, this.kind);
    if (!base || base.deletedAt !== null) throw this.notFound(baseId);
    return base;
  }

  private notFound(id: string): ArbiterError {
    return new ArbiterError('not_found', `${this.kind} \`${id}\` not found`);
  }

  private state(baseId: string, r: RolloutRow | null): RolloutState {
    return { baseId, kind: this.kind, rollout: r === null ? null : toRollout(r) };
  }
}

/** A rollout row as the API shows it. */
export function toRollout(r: RolloutRow): Rollout {
  return {
    id: r.id,
    percent: r.percent,
    by: r.by,
    version: r.version,
    recordId: r.recordId,
    previousVersion: r.previousVersion,
    previousRecordId: r.previousRecordId,
    maxErrorRate: r.maxErrorRate,
    minRuns: r.minRuns,
    startedAt: r.startedAt.toISOString(),
    startedBy: r.startedBy,
    updatedAt: r.updatedAt.toISOString(),
    updatedBy: r.updatedBy,
  };
}
