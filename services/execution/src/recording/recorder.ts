import {
  DECISION_DROP_FIELDS,
  MAX_DROPS_PER_REPORT,
  newEvent,
  type ArbiterEvent,
  type DecisionDropReason,
  type DecisionDropsReport,
  type DecisionNodeReasons,
  type DecisionRecord,
  type FlowRunResponse,
  type Principal,
  type Reasons,
} from '@arbiter/contracts';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { v7 } from 'uuid';
import { applyMasks } from './masks.js';
import { maskReasons } from './reason-masks.js';
import type { OrgRecording, RecordingSettings } from './settings.js';

/** Options of {@link DecisionRecorder}. */
export interface DecisionRecorderOptions {
  /** Decisions recorded per base per second by this replica unless the base sets its own cap (errors always). */
  perSecond: number;
  /** How often built records are written to the outbox. */
  flushMs: number;
  /** Records kept in memory waiting for the outbox; beyond it new ones are dropped (counted). */
  bufferMax: number;
  /** Entries the outbox may hold: while it holds that many, records are dropped (counted) instead of written. */
  outboxMax: number;
  /**
   * Largest record, as the serialised `decided` event the relay publishes (UTF-8 bytes), that may
   * enter the outbox; larger ones are dropped (`too_large`). Asked per record, so it follows the
   * bus's `max_payload` when the connection learns a new one. No bound when absent.
   */
  maxRecordBytes?: () => number;
  /**
   * Where drops go to be added to their bases' stats (the audit service, `audit.decisions.drops.report`);
   * a report that fails is sent again, with the same id, at the next flush.
   */
  reportDrops?: (report: DecisionDropsReport) => Promise<unknown>;
}

/** Where records go: the execution service's Redis outbox, and how full it is. */
export interface DecisionSink {
  /** Writes `events`; `serialized` holds each one's `JSON.stringify`, as measured, for a sink that stores JSON. */
  enqueue(events: readonly ArbiterEvent[], serialized: readonly string[]): Promise<void>;
  /** Entries in the outbox now. */
  length(): Promise<number>;
}

/** The stored resource a run ran. */
export interface RanRecord {
  kind: 'policy' | 'flow';
  orgId: string;
  baseId: string;
  recordId: string;
  version: number | null;
}

/** Bases whose drops wait for a report at most; drops of further bases are counted in the metric only. */
const MAX_TALLIED_BASES = 10_000;

/** Drops of one base not yet reported. */
type Tally = DecisionDropsReport['drops'][number];

const decoder = new TextDecoder();

/** A built record waiting for the outbox: its `decided` event and that event's JSON. */
interface Pending {
  event: ArbiterEvent;
  json: string;
}

/**
 * Decision records of stored runs (docs/decisions.md). On the run path only
 * {@link admit} runs: an O(1) sampling decision per answered item from the cached settings (base
 * enabled, `sampleRate`, the per-second cap per base; errors always pass). Only admitted runs are
 * built: the item's bytes and the answer's bytes are parsed, masks applied (org masks and the
 * base's), and the record queued as a `decided` event. Every `flushMs` the queue is written to the
 * outbox in one round trip; while the outbox holds `outboxMax` entries (JetStream away for long)
 * or cannot be written, records are dropped and counted (`arbiter_decisions_dropped_total`),
 * never waited for. A record whose event is larger than `maxRecordBytes` (what the bus takes) is
 * dropped as `too_large` before it reaches the outbox: the bus would refuse it. Drops are also
 * tallied per base and reported (`reportDrops`) at each flush, so they show in the base's stats.
 */
export class DecisionRecorder {
  private readonly windows = new Map<string, { second: number; count: number }>();
  private buffer: Pending[] = [];
  private writing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private building = new Set<Promise<void>>();
  private closed = false;
  private readonly recorded: Counter;
  private readonly dropped: Counter<'reason'>;
  /** Drops not yet reported, by org and base. */
  private tally = new Map<string, Tally>();
  /** A report sent and not acknowledged: sent again as is (its id makes it count once). */
  private unsent: DecisionDropsReport | null = null;
  private reporting: Promise<void> | null = null;

  constructor(
    private readonly sink: DecisionSink,
    private readonly settings: RecordingSettings,
    private readonly logger: Logger,
    registry: Registry,
    private readonly opts: DecisionRecorderOptions,
  ) {
    this.recorded = new Counter({
      name: 'arbiter_decisions_recorded_total',
      help: 'Decision records written to the outbox',
      registers: [registry],
    });
    this.dropped = new Counter({
      name: 'arbiter_decisions_dropped_total',
      help: 'Decision records dropped: buffer full, outbox full or unreachable, settings unreadable, too large for the bus',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.timer = setInterval(() => {
      void this.flush();
      void this.report();
    }, opts.flushMs).unref();
  }

  /** Whether this run is recorded: the base's settings, its sample rate and per-second cap; errors always. O(1), no I/O. */
  admit(orgId: string, baseId: string, error: boolean): boolean {
    if (this.closed) return false;
    const base = this.settings.peek(orgId)?.bases.get(baseId)?.settings;
    if (base !== undefined && !base.enabled) return false;
    if (error) return true;
    if (base !== undefined && base.sampleRate < 1 && Math.random() >= base.sampleRate) return false;
    const cap = base?.perSecond ?? this.opts.perSecond;
    const key = `${orgId}\u0000${baseId}`;
    const second = Math.floor(Date.now() / 1000);
    let w = this.windows.get(key);
    if (w === undefined || w.second !== second) {
      if (this.windows.size > 10_000) this.windows.clear();
      w = { second, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count >= cap) return false;
    w.count++;
    return true;
  }

  /** Records an admitted policy run: its data and its answer as the worker wrote them (raw JSON). */
  policy(principal: Principal, ran: RanRecord, item: Uint8Array, answer: Uint8Array, workerMs: number): void {
    const at = Date.now();
    this.build(principal, ran, at, item, () => {
      const body = JSON.parse(decoder.decode(answer)) as {
        result: boolean;
        outcomes?: Record<string, unknown>;
        errorCode?: string;
        reasons?: Reasons;
      };
      return {
        result: body.result,
        outcomes: body.outcomes ?? {},
        errorCode: body.errorCode ?? null,
        durationUs: Math.round(workerMs * 1000),
        // Present only when the run asked for them: recording never asks for reasons itself.
        ...(body.reasons !== undefined ? { reasons: body.reasons } : {}),
      };
    });
  }

  /** Records an admitted flow run: its data and its response. */
  flow(principal: Principal, ran: RanRecord, item: Uint8Array, response: FlowRunResponse, ms: number): void {
    this.build(principal, ran, Date.now(), item, () => {
      const nodeReasons: DecisionNodeReasons = [];
      for (const node of response.nodes) if (node.reasons !== undefined) nodeReasons.push({ nodeId: node.nodeId, reasons: node.reasons });
      return {
        result: response.result,
        path: response.path.map((step) => step.nodeId),
        errorCode: response.errorCode ?? null,
        durationUs: Math.round(ms * 1000),
        ...(nodeReasons.length > 0 ? { nodeReasons } : {}),
      };
    });
  }

  /**
   * An item's data as a decision record of base `baseId` holds it (the org's and the base's masks
   * applied), for shadow-run examples; undefined when the org's settings cannot be read (fail closed).
   */
  async maskedInput(orgId: string, baseId: string, item: Uint8Array): Promise<{ input: unknown; masked: boolean } | undefined> {
    const settings = await this.settings.get(orgId);
    return settings === undefined ? undefined : maskItem(settings, baseId, item);
  }

  /** Records waiting for the outbox. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Writes what is queued; resolves when this pass ends (never rejects). */
  async flush(): Promise<void> {
    if (this.building.size > 0) await Promise.all(this.building);
    if (this.writing) return this.writing;
    if (this.buffer.length === 0) return;
    this.writing = this.write().finally(() => {
      this.writing = null;
    });
    return this.writing;
  }

  /** Stops recording, writes what is queued and reports the drops (one attempt each). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.settings.close();
    await this.flush();
    await this.flush();
    if (this.buffer.length > 0)
      this.dropEvents(
        'outbox',
        this.buffer.map((p) => p.event),
      );
    await this.report();
    await this.report();
  }

  /**
   * Sends the drops tallied since the last report (a failed report first, as it was), at most
   * {@link MAX_DROPS_PER_REPORT} bases at a time; resolves when this pass ends (never rejects).
   */
  report(): Promise<void> {
    const send = this.opts.reportDrops;
    if (send === undefined) return Promise.resolve();
    if (this.reporting) return this.reporting;
    if (this.unsent === null) {
      if (this.tally.size === 0) return Promise.resolve();
      const drops: Tally[] = [];
      for (const [key, t] of this.tally) {
        drops.push(t);
        this.tally.delete(key);
        if (drops.length === MAX_DROPS_PER_REPORT) break;
      }
      this.unsent = { reportId: v7(), drops };
    }
    const report = this.unsent;
    this.reporting = send(report)
      .then(
        () => {
          this.unsent = null;
        },
        (err: unknown) => this.logger.warn({ err }, 'decision drops not reported to the audit service; retrying'),
      )
      .finally(() => {
        this.reporting = null;
      });
    return this.reporting;
  }

  private build(
    principal: Principal,
    ran: RanRecord,
    at: number,
    item: Uint8Array,
    answer: () => Pick<DecisionRecord, 'result' | 'errorCode' | 'durationUs' | 'outcomes' | 'path' | 'reasons' | 'nodeReasons'>,
  ): void {
    const done = this.settings
      .get(ran.orgId)
      .then((settings) => {
        if (settings === undefined) return this.drop('settings', ran.orgId, ran.baseId);
        const base = settings.bases.get(ran.baseId);
        if (base !== undefined && !base.settings.enabled) return;
        if (this.buffer.length >= this.opts.bufferMax) return this.drop('buffer', ran.orgId, ran.baseId);
        const { input, masked } = maskItem(settings, ran.baseId, item);
        const decisionId = v7();
        const when = new Date(at).toISOString();
        const decided = answer();
        // Reasons show values of the data: masked like it (nothing of the data was masked, nothing of them is).
        if (masked) {
          const roots = base !== undefined ? [settings.masks, base.masks] : [settings.masks];
          if (decided.reasons !== undefined) decided.reasons = maskReasons(decided.reasons, roots);
          if (decided.nodeReasons !== undefined)
            decided.nodeReasons = decided.nodeReasons.map((n) => ({ nodeId: n.nodeId, reasons: maskReasons(n.reasons, roots) }));
        }
        let record: DecisionRecord = {
          decisionId,
          orgId: ran.orgId,
          at: when,
          now: when,
          kind: ran.kind,
          baseId: ran.baseId,
          ...(ran.kind === 'policy' ? { policyId: ran.recordId } : { flowId: ran.recordId }),
          version: ran.version,
          caller: { userId: principal.userId, ...(principal.apiKeyId !== undefined ? { apiKeyId: principal.apiKeyId } : {}) },
          input,
          masked,
          ...decided,
        };
        const resource = { type: ran.kind, id: ran.recordId, baseId: ran.baseId };
        const eventOf = (r: DecisionRecord) =>
          newEvent('decided', { orgId: ran.orgId, ...r.caller }, resource, r, { at: when, eventId: decisionId });
        let event = eventOf(record);
        // Measured as published: numbers can grow when written again (9e20 is 900000000000000000000).
        let json = JSON.stringify(event);
        const max = this.opts.maxRecordBytes?.();
        // A UTF-16 code unit is at most 3 UTF-8 bytes: most records are counted without encoding them.
        const tooLarge = (text: string) => max !== undefined && text.length > max / 3 && Buffer.byteLength(text) > max;
        if (tooLarge(json) && (record.reasons !== undefined || record.nodeReasons !== undefined)) {
          // The decision is kept without its reasons rather than dropped.
          const { reasons: _reasons, nodeReasons: _nodeReasons, ...bare } = record;
          record = { ...bare, reasonsLeftOut: true };
          event = eventOf(record);
          json = JSON.stringify(event);
        }
        if (tooLarge(json)) {
          this.logger.warn(
            { decisionId, orgId: ran.orgId, baseId: ran.baseId, bytes: Buffer.byteLength(json), maxBytes: max },
            'decision record larger than the bus takes: dropped (too_large)',
          );
          return this.drop('too_large', ran.orgId, ran.baseId);
        }
        this.buffer.push({ event, json });
      })
      .catch((err: unknown) => this.logger.warn({ err }, 'a decision record could not be built'))
      .finally(() => this.building.delete(done));
    this.building.add(done);
  }

  private async write(): Promise<void> {
    const batch = this.buffer;
    this.buffer = [];
    let room: number;
    try {
      room = this.opts.outboxMax - (await this.sink.length());
    } catch {
      room = 0;
    }
    const kept = room >= batch.length ? batch : batch.slice(0, Math.max(0, room));
    if (kept.length < batch.length)
      this.dropEvents(
        'outbox',
        batch.slice(kept.length).map((p) => p.event),
      );
    if (kept.length === 0) return;
    const events = kept.map((p) => p.event);
    try {
      await this.sink.enqueue(
        events,
        kept.map((p) => p.json),
      );
      this.recorded.inc(kept.length);
    } catch (err) {
      this.dropEvents('outbox', events);
      this.logger.warn({ err, dropped: kept.length }, 'decision records not written to the outbox: dropped');
    }
  }

  /** Counts one dropped record of a base: in the metric, and in the tally its base's stats get. */
  private drop(reason: DecisionDropReason, orgId: string, baseId: string, n = 1): void {
    this.dropped.inc({ reason }, n);
    const key = `${orgId}\u0000${baseId}`;
    let t = this.tally.get(key);
    if (t === undefined) {
      if (this.tally.size >= MAX_TALLIED_BASES) return;
      t = { orgId, baseId, outbox: 0, buffer: 0, settings: 0, tooLarge: 0 };
      this.tally.set(key, t);
    }
    t[DECISION_DROP_FIELDS[reason]] += n;
  }

  /**
   * Counts `decided` events dropped after they left the recorder (the relay removed them from the
   * outbox unpublished: the bus refused them for their size); other events are ignored.
   */
  droppedFromOutbox(reason: DecisionDropReason, events: readonly ArbiterEvent[]): void {
    this.dropEvents(
      reason,
      events.filter((e) => e.kind === 'decided'),
    );
  }

  /** Counts dropped `decided` events, by their base. */
  private dropEvents(reason: DecisionDropReason, events: readonly ArbiterEvent[]): void {
    for (const e of events) this.drop(reason, e.orgId, e.resource.baseId ?? e.resource.id);
  }
}

/** Parses an item and applies the org's and the base's masks to it. */
function maskItem(settings: OrgRecording, baseId: string, item: Uint8Array): { input: Record<string, unknown>; masked: boolean } {
  const input = JSON.parse(decoder.decode(item)) as Record<string, unknown>;
  let masked = applyMasks(input, settings.masks);
  const base = settings.bases.get(baseId);
  if (base !== undefined && applyMasks(input, base.masks)) masked = true;
  return { input, masked };
}
