import { DecisionSettings, DecisionSubject, isArbiterError, type BaseDecisionSettings } from '@arbiter/contracts';
import type { Bus } from '@arbiter/service-kit';
import { compileMasks, type CompiledMask } from './masks.js';

/** An org's decision settings as the recorder applies them. */
export interface OrgRecording {
  /** The org masks, compiled. */
  masks: CompiledMask;
  bases: Map<string, { settings: BaseDecisionSettings; masks: CompiledMask }>;
}

/** Where settings come from: the audit service over the bus (`audit.decisions.settings.resolve`), or a test's table. */
export type SettingsSource = (orgId: string) => Promise<DecisionSettings>;

/** The bus source of settings. */
export function busSettingsSource(bus: Bus, timeoutMs: number): SettingsSource {
  return (orgId) => bus.request(DecisionSubject.settingsResolve, { orgId }, DecisionSettings, { timeoutMs });
}

interface Cached {
  value?: OrgRecording;
  /** When the last read was answered (0: never). */
  okAt: number;
  /** When the last read ended, answered or not (0: none yet). */
  loadedAt: number;
  loading?: Promise<OrgRecording | undefined>;
}

/**
 * Whether a failed read says nothing about the settings: no audit replica answered in time (or its
 * database is away). Then no change can have been made either, and the settings held are kept for
 * a while; any other failure (an answer that is an error, a malformed reply) means the settings
 * exist but cannot be read, and the settings held are dropped at once.
 */
function unreachable(err: unknown): boolean {
  return isArbiterError(err, 'dependency_unavailable') || isArbiterError(err, 'timeout');
}

/**
 * The decision settings of each org, loaded at its first run and refreshed in the background every
 * `ttlMs` (so a change reaches every replica within about that long). {@link peek} never waits (the
 * sampling decision on the run path); {@link get} waits for the first load (building a record,
 * off the run's answer). It fails closed: an org whose settings cannot be read has none, and its
 * records are not built (dropped and counted, never sent unmasked or with stale masks): from the
 * first failed read when the audit service answered with an error, and once the settings held are
 * `maxAgeMs` old while no audit replica answers.
 */
export class RecordingSettings {
  private readonly orgs = new Map<string, Cached>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly source: SettingsSource,
    private readonly ttlMs: number,
    private readonly maxAgeMs = 30_000,
  ) {
    this.timer = setInterval(() => {
      for (const orgId of this.orgs.keys()) void this.load(orgId);
    }, ttlMs).unref();
  }

  /** Stops the refreshes. */
  close(): void {
    clearInterval(this.timer);
  }

  /** The settings known now, or undefined before the first load (which this starts) or while they cannot be read. */
  peek(orgId: string): OrgRecording | undefined {
    const cached = this.orgs.get(orgId);
    if (cached === undefined) void this.load(orgId);
    return cached === undefined ? undefined : this.usable(cached);
  }

  /** The settings, waiting for the first load; undefined when they cannot be read. */
  async get(orgId: string): Promise<OrgRecording | undefined> {
    const cached = this.orgs.get(orgId);
    if (cached?.loading !== undefined && this.usable(cached) === undefined) return cached.loading;
    // Known, or failed to load: the refresh timer asks again.
    if (cached !== undefined && cached.loadedAt > 0) return this.usable(cached);
    return this.load(orgId);
  }

  /** The settings held, unless they are older than `maxAgeMs` (refreshes failing for that long). */
  private usable(entry: Cached): OrgRecording | undefined {
    if (entry.value !== undefined && Date.now() - entry.okAt > this.maxAgeMs) entry.value = undefined;
    return entry.value;
  }

  private load(orgId: string): Promise<OrgRecording | undefined> {
    let cached = this.orgs.get(orgId);
    if (cached === undefined) {
      cached = { okAt: 0, loadedAt: 0 };
      this.orgs.set(orgId, cached);
    }
    const entry = cached;
    entry.loading ??= this.source(orgId)
      .then(
        (s) => {
          entry.value = compile(s);
          entry.okAt = entry.loadedAt = Date.now();
          return entry.value;
        },
        // Retried at the next refresh; meanwhile fail closed (see the class).
        (err: unknown) => {
          entry.loadedAt = Date.now();
          if (!unreachable(err)) entry.value = undefined;
          return this.usable(entry);
        },
      )
      .finally(() => {
        entry.loading = undefined;
      });
    return entry.loading;
  }
}
function compile(s: DecisionSettings): OrgRecording {
  const bases = new Map<string, { settings: BaseDecisionSettings; masks: CompiledMask }>();
  for (const [baseId, settings] of Object.entries(s.bases)) bases.set(baseId, { settings, masks: compileMasks(settings.masks) });
  return { masks: compileMasks(s.masks), bases };
}
