import {
  ArbiterError,
  EXEC_BATCH_MAX_ITEMS,
  ExecSubject,
  isArbiterError,
  tracesOf,
  type EvalGroup,
  type Principal,
  type RunSpec,
  type WireError,
} from '@arbiter/contracts';
import type { Bus } from './bus.js';
import { encodeFrame, frameHeader, type FrameItem } from './frame.js';

/** Bytes kept free in a frame for its header's fixed parts, principals and offsets. */
const HEADER_ROOM = 8192;
/** Bytes a group's header entry takes at most, besides its rule (its clocks `now` and `asOf` included). */
const GROUP_BYTES = 320;
/** Bytes an item's clock takes in its group's `nows`, at most (an ISO 8601 time with an offset, quoted, and a comma). */
const NOW_BYTES = 40;
/** Max payload assumed before the server has said (NATS's default). */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/**
 * A run sent over the bus: a {@link RunSpec} whose caller's wait is known (sent along, so work not
 * started by then is dropped). Framed as an `EvalGroup`.
 */
export type SentRun = RunSpec & { readonly timeoutMs: number };

/** One answer: the raw JSON body its single request would have answered, or its error. */
export type EvalAnswer = Uint8Array | ArbiterError;

/** Options of {@link EvalClient}. */
export interface EvalClientOptions {
  /** On: the evaluations asked for in one event-loop turn go as one message; off: one message per call. */
  coalesce: boolean;
  /** Items per message; default (and at most) `EXEC_BATCH_MAX_ITEMS`. */
  maxItems?: number;
}

/** Counters for the benchmark and tests: messages sent and the items they carried. */
export interface EvalClientStats {
  messages: number;
  items: number;
}

/** Evaluations asked for by one call, waiting for their answers. */
interface Call {
  readonly spec: SentRun;
  readonly items: readonly FrameItem[];
  readonly answers: EvalAnswer[];
  /** Answers still missing. */
  left: number;
  readonly done: (answers: EvalAnswer[]) => void;
  /** Set for items asked again after `result_too_large`: frames of their own, of at most this many items. */
  readonly perFrame?: number;
}

/** Where an item of a frame goes: call `call`'s item `index`. */
interface Slot {
  call: Call;
  index: number;
}

/** A frame being built: its header parts, items and where their answers go. */
class FrameBuilder {
  readonly principals: Principal[] = [];
  readonly rules: string[] = [];
  readonly groups: EvalGroup[] = [];
  readonly items: FrameItem[] = [];
  readonly slots: Slot[] = [];
  bytes = 0;
  timeoutMs = 0;
  private readonly principalIndex = new Map<string, number>();
  private readonly ruleIndex = new Map<string, number>();

  /** Bytes `spec` adds to the header beyond what the frame has (`alone`: what it costs a frame without its rule, if known). */
  headerCost(spec: SentRun, alone?: number): number {
    if (spec.rule === undefined || this.ruleIndex.has(spec.rule)) return GROUP_BYTES;
    return alone ?? GROUP_BYTES + ruleBytes(spec.rule);
  }

  /** Adds items `from`…`to − 1` of `call` as one group. */
  add(call: Call, from: number, to: number, itemBytes: number, headerBytes: number): void {
    const { spec } = call;
    const pKey = principalKey(spec.principal);
    let principal = this.principalIndex.get(pKey);
    if (principal === undefined) {
      principal = this.principals.push(spec.principal) - 1;
      this.principalIndex.set(pKey, principal);
    }
    let rule: number | undefined;
    if (spec.rule !== undefined) {
      rule = this.ruleIndex.get(spec.rule);
      if (rule === undefined) {
        rule = this.rules.push(spec.rule) - 1;
        this.ruleIndex.set(spec.rule, rule);
      }
    }
    this.groups.push({
      n: to - from,
      subject: spec.subject,
      principal,
      ...(rule !== undefined ? { rule } : {}),
      ...(spec.id !== undefined ? { id: spec.id } : {}),
      trace: tracesOf(spec),
      ...(spec.traceBytes !== undefined ? { traceBytes: spec.traceBytes } : {}),
      ...(spec.flags !== undefined ? { flags: spec.flags } : {}),
      ...(spec.now !== undefined ? { now: spec.now } : {}),
      ...(spec.nows !== undefined ? { nows: spec.nows.slice(from, to) } : {}),
      ...(spec.asOf !== undefined ? { asOf: spec.asOf } : {}),
      ...(spec.requestId !== undefined ? { requestId: spec.requestId } : {}),
      ...(spec.replay === true ? { replay: true } : {}),
      timeoutMs: spec.timeoutMs,
    });
    for (let i = from; i < to; i++) {
      this.items.push(call.items[i]);
      this.slots.push({ call, index: i });
    }
    this.bytes += itemBytes + headerBytes;
    this.timeoutMs = Math.max(this.timeoutMs, spec.timeoutMs);
  }

  encode(): Buffer {
    return encodeFrame({ principals: this.principals, rules: this.rules, groups: this.groups, sentAt: Date.now() }, this.items);
  }
}

/** JSON sizes of the rules sent lately: the same rule comes with request after request. */
const ruleSizes = new Map<string, number>();
const RULE_SIZES_MAX = 256;

/** The bytes of `rule` as a JSON string in a header. */
function ruleBytes(rule: string): number {
  let bytes = ruleSizes.get(rule);
  if (bytes === undefined) {
    bytes = Buffer.byteLength(JSON.stringify(rule), 'utf8');
    if (ruleSizes.size >= RULE_SIZES_MAX) ruleSizes.clear();
    ruleSizes.set(rule, bytes);
  }
  return bytes;
}

/** A principal's identity for sharing one header entry between groups (every field that travels). */
function principalKey(p: Principal): string {
  return `${p.orgId}\u0000${p.userId}\u0000${p.role}\u0000${p.apiKeyId ?? ''}\u0000${p.scopes?.join(',') ?? '*'}\u0000${p.keyExpiresAt ?? ''}`;
}

/**
 * The one road to the execution service's evaluations (`exec.eval`, contracts `EvalRequestHeader`):
 * single runs and batch calls alike become groups of items in framed messages, items as raw JSON
 * texts, answers coming back as raw JSON bytes that a gateway forwards without decoding.
 *
 * With `coalesce` on, the evaluations asked for in the same event-loop turn go out together after
 * the turn (`setImmediate`, no timer): under load messages fill by themselves, and a request alone
 * in its turn goes alone at once. Messages are split to stay under `maxItems` items and the bus's
 * max payload (a group may span messages). An answer too large for its message's reply
 * (`result_too_large`) is asked for again alone; alone, it stands.
 */
export class EvalClient {
  private pending: Call[] = [];
  private scheduled = false;
  private readonly maxItems: number;
  private readonly counts: EvalClientStats = { messages: 0, items: 0 };

  constructor(
    private readonly bus: Pick<Bus, 'requestRaw' | 'nc'>,
    private readonly opts: EvalClientOptions,
  ) {
    this.maxItems = Math.min(Math.max(1, opts.maxItems ?? EXEC_BATCH_MAX_ITEMS), EXEC_BATCH_MAX_ITEMS);
  }

  /** One evaluation of `data` (JSON text): its answer's raw JSON; rejects with its error. */
  async one(spec: SentRun, data: string): Promise<Uint8Array> {
    const [answer] = await this.many(spec, [data]);
    if (answer instanceof ArbiterError) throw answer;
    return answer;
  }

  /** Evaluations of `items` (JSON texts, or their UTF-8 bytes) alike: each one's raw JSON answer or its error, in order. */
  many(spec: SentRun, items: readonly FrameItem[]): Promise<EvalAnswer[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise<EvalAnswer[]>((done) => {
      this.pending.push({ spec, items, answers: new Array<EvalAnswer>(items.length), left: items.length, done });
      if (!this.opts.coalesce) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Messages sent so far and the items they carried. */
  stats(): EvalClientStats {
    return { ...this.counts };
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const calls = this.pending;
    this.pending = [];
    const room = (this.bus.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - HEADER_ROOM;
    let frame = new FrameBuilder();
    const ship = () => {
      if (frame.items.length > 0) this.send(frame);
      frame = new FrameBuilder();
    };
    for (const call of calls) {
      // Items asked again go in frames of their own, as many as fitted last time.
      if (call.perFrame !== undefined) ship();
      const maxItems = Math.min(this.maxItems, call.perFrame ?? this.maxItems);
      // What the call's group costs a frame of its own (its rule's JSON included): measured once a call.
      const aloneCost = GROUP_BYTES + (call.spec.rule === undefined ? 0 : ruleBytes(call.spec.rule));
      let from = 0;
      let bytes = 0;
      let headerBytes = frame.headerCost(call.spec, aloneCost);
      for (let i = 0; i < call.items.length; i++) {
        const item = call.items[i];
        const size = (typeof item === 'string' ? Buffer.byteLength(item, 'utf8') : item.byteLength) + (call.spec.nows ? NOW_BYTES : 0);
        if (aloneCost + size > room) {
          // Too large even alone: the bus would refuse it, so it is refused here (the others go on).
          if (i > from) frame.add(call, from, i, bytes, headerBytes);
          this.answer(
            call,
            i,
            new ArbiterError('payload_too_large', `request item is ${size} bytes: the bus limit is ${room + HEADER_ROOM} bytes`),
          );
          from = i + 1;
          bytes = 0;
          headerBytes = frame.headerCost(call.spec, aloneCost);
          continue;
        }
        if (frame.items.length + (i - from) >= maxItems || frame.bytes + headerBytes + bytes + size > room) {
          if (i > from) frame.add(call, from, i, bytes, headerBytes);
          ship();
          from = i;
          bytes = 0;
          headerBytes = frame.headerCost(call.spec, aloneCost);
        }
        bytes += size;
      }
      if (call.items.length > from) frame.add(call, from, call.items.length, bytes, headerBytes);
      if (call.perFrame !== undefined) ship();
    }
    ship();
  };

  private send(frame: FrameBuilder): void {
    this.counts.messages++;
    this.counts.items += frame.items.length;
    let body: Buffer;
    try {
      body = frame.encode();
    } catch (err) {
      // Only a principal or rule JSON.stringify cannot write: fail the items, never the process.
      const error = new ArbiterError('internal', 'evaluation request could not be encoded', undefined, { cause: err });
      for (const slot of frame.slots) this.answer(slot.call, slot.index, error);
      return;
    }
    this.bus.requestRaw(ExecSubject.eval, body, { timeoutMs: frame.timeoutMs }).then(
      (reply) => this.settle(frame.slots, reply),
      (err: unknown) => {
        const error = isArbiterError(err) ? err : new ArbiterError('internal', `\`${ExecSubject.eval}\` failed`, undefined, { cause: err });
        for (const slot of frame.slots) this.answer(slot.call, slot.index, error);
      },
    );
  }

  private settle(slots: Slot[], reply: Uint8Array): void {
    let answers: EvalAnswer[];
    try {
      answers = decodeReply(reply, slots.length);
    } catch (err) {
      const error = isArbiterError(err) ? err : new ArbiterError('internal', `malformed reply from \`${ExecSubject.eval}\``);
      for (const slot of slots) this.answer(slot.call, slot.index, error);
      return;
    }
    // Answers that did not fit in the reply are asked again, per call, in frames of as many items
    // as fitted this time (alone when none did: alone, a `result_too_large` stands).
    const again = new Map<Call, number[]>();
    for (let i = 0; i < slots.length; i++) {
      const answer = answers[i];
      const { call, index } = slots[i];
      if (answer instanceof ArbiterError && answer.code === 'result_too_large' && slots.length > 1) {
        const indexes = again.get(call);
        if (indexes === undefined) again.set(call, [index]);
        else indexes.push(index);
        continue;
      }
      this.answer(call, index, answer);
    }
    for (const [call, indexes] of again) {
      const fitted = slots.filter((s, i) => s.call === call && !(answers[i] instanceof ArbiterError)).length;
      this.retry(call, indexes, Math.max(1, Math.min(fitted, call.perFrame ?? Infinity)));
    }
  }

  /**
   * Asks again for items `indexes` of `call`, `perFrame` at a time, one message after the other (so
   * a call never has more messages in flight than it first sent: each is a job of its caller's).
   */
  private retry(call: Call, indexes: number[], perFrame: number): void {
    const now = indexes.slice(0, perFrame);
    const later = indexes.slice(perFrame);
    const { nows } = call.spec;
    this.pending.push({
      spec: nows === undefined ? call.spec : { ...call.spec, nows: now.map((i) => nows[i]) },
      items: now.map((i) => call.items[i]),
      answers: [],
      left: now.length,
      perFrame,
      done: (retried) => {
        retried.forEach((answer, k) => this.answer(call, now[k], answer));
        if (later.length > 0) this.retry(call, later, perFrame);
      },
    });
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  private answer(call: Call, index: number, answer: EvalAnswer): void {
    if (call.answers[index] !== undefined) return;
    call.answers[index] = answer;
    if (--call.left === 0) call.done(call.answers);
  }
}

/**
 * The answers of an `exec.eval` reply (contracts `EvalReplyHeader`), as views into it: raw JSON,
 * or an `ArbiterError` for an item that failed. A reply that is an error envelope fails every item;
 * one whose item count is not `count` is `internal`.
 */
export function decodeReply(reply: Uint8Array, count: number): EvalAnswer[] {
  const { header, bodyStart } = frameHeader(reply);
  const h = header as { ok?: unknown; error?: WireError; ends?: unknown; errors?: Record<string, WireError> } | null;
  if (h === null || typeof h !== 'object') throw new ArbiterError('internal', `malformed reply from \`${ExecSubject.eval}\``);
  if (h.ok === false && h.error !== undefined) {
    const error = ArbiterError.fromWire(h.error);
    return new Array<EvalAnswer>(count).fill(error);
  }
  const ends = h.ends;
  if (!Array.isArray(ends) || ends.length !== count) {
    throw new ArbiterError('internal', `malformed reply from \`${ExecSubject.eval}\`: wrong number of answers`);
  }
  const answers = new Array<EvalAnswer>(count);
  let from = 0;
  for (let i = 0; i < count; i++) {
    const to = ends[i] as number;
    const error = h.errors?.[i];
    answers[i] = error !== undefined ? ArbiterError.fromWire(error) : reply.subarray(bodyStart + from, bodyStart + to);
    from = to;
  }
  return answers;
}
