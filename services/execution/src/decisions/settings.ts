import { DecisionSettings, DecisionSubject, type BaseDecisionSettings } from '@arbiter/contracts';
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
  loadedAt: number;
  loading?: Promise<OrgRecording | undefined>;
}

/**
 * The decision settings of each org, loaded at its first run and refreshed in the background every
 * `ttlMs` (so a change reaches every replica within about that long). {@link peek} never waits (the
 * sampling decision on the run path); {@link get} waits for the first load (building a record,
 * off the run's answer). An org whose settings could never be loaded has none: its records are
 * not built (never sent unmasked).
 */
export class RecordingSettings {
  private readonly orgs = new Map<string, Cached>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly source: SettingsSource,
    private readonly ttlMs: number,
  ) {
    this.timer = setInterval(() => {
      for (const orgId of this.orgs.keys()) void this.load(orgId);
    }, ttlMs).unref();
  }

  /** Stops the refreshes. */
  close(): void {
    clearInterval(this.timer);
  }

  /** The settings known now, or undefined before the first load (which this starts). */
  peek(orgId: string): OrgRecording | undefined {
    const cached = this.orgs.get(orgId);
    if (cached === undefined) void this.load(orgId);
    return cached?.value;
  }

  /** The settings, waiting for the first load; undefined when they cannot be loaded. */
  async get(orgId: string): Promise<OrgRecording | undefined> {
    const cached = this.orgs.get(orgId);
    if (cached?.loading !== undefined && cached.value === undefined) return cached.loading;
    // Known, or failed to load: the refresh timer asks again.
    if (cached !== undefined && cached.loadedAt > 0) return cached.value;
    return this.load(orgId);
  }

  private load(orgId: string): Promise<OrgRecording | undefined> {
    let cached = this.orgs.get(orgId);
    if (cached === undefined) {
      cached = { loadedAt: 0 };
      this.orgs.set(orgId, cached);
    }
    const entry = cached;
    entry.loading ??= this.source(orgId)
      .then(
        (s) => {
          entry.value = compile(s);
          entry.loadedAt = Date.now();
          return entry.value;
        },
        // Kept as they were (or none): retried at the next peek after a pause of one TTL.
        () => {
          entry.loadedAt = Date.now();
          return entry.value;
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
