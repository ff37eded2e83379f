import {
  RolloutSubject,
  RolloutState,
  rolloutWindowKey,
  type Principal,
  type RunnableKind,
  type RunnableRollout,
} from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Most guarded rollouts one replica buffers outcomes for between flushes (more are dropped until the next flush). */
const MAX_ROLLOUTS = 1000;
/** How long a window lives in Redis after its last write (a rollout forgotten stops costing memory). */
const WINDOW_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Appends each version's new outcomes to its window (KEYS[1] new, KEYS[2] previous), keeps the last
 * ARGV[3] of each, and answers 1 when both hold that many runs and the new version's error share
 * exceeds the previous one's by more than ARGV[4]. ARGV[1], ARGV[2]: the outcomes (`0` answered,
 * `1` with an error code), ARGV[5]: TTL in seconds.
 */
const APPEND_AND_CHECK = `
local n = tonumber(ARGV[3])
local function put(key, add)
  local s = redis.call('GET', key) or ''
  if add ~= '' then
    s = s .. add
    if #s > n then s = string.sub(s, -n) end
    redis.call('SET', key, s, 'EX', tonumber(ARGV[5]))
  end
  return s
end
local a = put(KEYS[1], ARGV[1])
local b = put(KEYS[2], ARGV[2])
if #a < n or #b < n then return 0 end
local ea = select(2, string.gsub(a, '1', ''))
local eb = select(2, string.gsub(b, '1', ''))
if (ea / #a) - (eb / #b) > tonumber(ARGV[4]) then return 1 end
return 0
`;

interface Pending {
  kind: RunnableKind;
  baseId: string;
  rollout: RunnableRollout;
  principal: Principal;
  next: string;
  previous: string;
}

/**
 * The execution service's half of a rollout's error guard (docs/design/canary.md): each run of a
 * guarded rollout notes whether its version answered with an error code; every `flushMs` the
 * outcomes go to Redis in one script call per rollout (each version's window keeps its last
 * `minRuns` outcomes), and when the script says the new version errs more than allowed, the
 * registry is asked to check and roll back (it reads the windows itself). Bounded: at most
 * `minRuns` outcomes per version and {@link MAX_ROLLOUTS} rollouts are held between flushes.
 */
export class RolloutGuard {
  private pending = new Map<string, Pending>();
  private readonly asked = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: Redis,
    private readonly bus: Bus,
    private readonly prefix: string,
    private readonly logger: Logger,
    private readonly registryTimeoutMs: number,
    flushMs = 200,
  ) {
    redis.defineCommand('arbiterRolloutGuard', { numberOfKeys: 2, lua: APPEND_AND_CHECK });
    this.timer = setInterval(() => void this.flush(), flushMs).unref();
  }

  /** Notes one answer of a guarded rollout's version (`next`: the new one). */
  note(kind: RunnableKind, baseId: string, rollout: RunnableRollout, principal: Principal, next: boolean, error: boolean): void {
    const guard = rollout.guard;
    if (guard === undefined || this.asked.has(rollout.id)) return;
    let p = this.pending.get(rollout.id);
    if (p === undefined) {
      if (this.pending.size >= MAX_ROLLOUTS) return;
      p = { kind, baseId, rollout, principal, next: '', previous: '' };
      this.pending.set(rollout.id, p);
    }
    const mark = error ? '1' : '0';
    if (next) p.next = (p.next + mark).slice(-guard.minRuns);
    else p.previous = (p.previous + mark).slice(-guard.minRuns);
  }

  /** Writes the outcomes noted so far and asks the registry about the rollouts that tripped. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  /** Stops the timer after a last flush. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async flushOnce(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    for (const p of batch.values()) {
      const guard = p.rollout.guard!;
      try {
        const tripped = await (this.redis as unknown as GuardCommand).arbiterRolloutGuard(
          rolloutWindowKey(this.prefix, p.rollout.id, 'new'),
          rolloutWindowKey(this.prefix, p.rollout.id, 'previous'),
          p.next,
          p.previous,
          String(guard.minRuns),
          String(guard.maxErrorRate),
          String(WINDOW_TTL_SECONDS),
        );
        if (tripped === 1) await this.ask(p);
      } catch (err) {
        this.logger.warn({ err, rolloutId: p.rollout.id }, 'rollout guard outcomes not written');
      }
    }
  }

  private async ask(p: Pending): Promise<void> {
    if (this.asked.size >= MAX_ROLLOUTS) this.asked.clear();
    this.asked.add(p.rollout.id);
    try {
      const state = await this.bus.request(
        RolloutSubject[p.kind],
        { principal: p.principal, baseId: p.baseId, action: 'guard', rolloutId: p.rollout.id },
        RolloutState,
        { timeoutMs: this.registryTimeoutMs },
      );
      const running = state.rollout !== null && state.rollout.id === p.rollout.id;
      // Still running (the registry read other windows than this flush): checked again after the next outcomes.
      if (running) this.asked.delete(p.rollout.id);
      this.logger.info({ baseId: p.baseId, rolloutId: p.rollout.id, running }, 'rollout guard tripped');
    } catch (err) {
      // Asked again after the next outcomes.
      this.asked.delete(p.rollout.id);
      this.logger.warn({ err, rolloutId: p.rollout.id }, 'rollout guard check failed');
    }
  }
}

type GuardCommand = {
  arbiterRolloutGuard(...args: string[]): Promise<number>;
};
