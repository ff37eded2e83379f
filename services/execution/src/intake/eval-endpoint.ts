import { ArbiterError, EvalRequestHeader, ExecSubject, isArbiterError, tracesOf, type RunSpec, type WireError } from '@arbiter/contracts';
import { decodeFrame, encodeFrame, type RawEndpointDef } from '@arbiter/service-kit';
import { requireView } from './access.js';
import type { WorkerPool, RunItems } from '../workers/worker-pool.js';
import { checkRuleSize, type Limits } from './limits.js';
import type { ExecMetrics } from '../metrics.js';
import type { RuleIndex } from '../answers/rule-index.js';
import { countOutcome, type RunAnswer, type StoredRuns } from '../answers/stored-runs.js';

/** What the evaluation endpoints need. */
export interface EvalDeps {
  pool: WorkerPool;
  limits: Limits;
  metrics: ExecMetrics;
  index: RuleIndex;
  stored: StoredRuns;
}

/** One group of evaluations: the run as asked for (an `EvalGroup` unframed), on its items. */
export type GroupRun = RunSpec & RunItems;

/** Bytes kept free in a reply for its header's fixed parts. */
const REPLY_HEADER_BYTES = 1024;
/** Bytes a `result_too_large` entry adds to a reply's header, at most. */
const TOO_LARGE_ENTRY_BYTES = 256;

/**
 * Runs one group: the caller's `view` right and the rule's size are checked once for the group,
 * the items go to the pool as one job. Answers are the raw JSON bodies the single requests answer,
 * or each item's error; an error of the whole group (refused, not found, queue full) answers every item.
 */
export async function runGroup(deps: EvalDeps, group: GroupRun): Promise<RunAnswer[]> {
  try {
    requireView(group.principal);
    switch (group.subject) {
      case 'exec.run':
        return await runRule(deps, group);
      case 'exec.stored.policy.base':
      case 'exec.stored.policy.record':
        return await deps.stored.runPolicy({ ...storedOf(group), by: group.subject.endsWith('.base') ? 'base' : 'record' });
      case 'exec.stored.flow.base':
      case 'exec.stored.flow.record':
        return await deps.stored.runFlow({ ...storedOf(group), by: group.subject.endsWith('.base') ? 'base' : 'record' });
    }
  } catch (err) {
    const error = isArbiterError(err) ? err : new ArbiterError('internal', 'internal error', undefined, { cause: err });
    return group.items.map(() => error);
  }
}

function storedOf(group: GroupRun) {
  if (group.id === undefined) throw new ArbiterError('bad_request', `a \`${group.subject}\` group needs an \`id\``);
  return {
    principal: group.principal,
    id: group.id,
    items: group.items,
    trace: tracesOf(group),
    ...(group.traceBytes !== undefined ? { traceBytes: group.traceBytes } : {}),
    ...(group.flags !== undefined ? { flags: group.flags } : {}),
    ...(group.deadline !== undefined ? { deadline: group.deadline } : {}),
    ...(group.replyBudget !== undefined ? { replyBudget: group.replyBudget } : {}),
    ...(group.replay === true
      ? { replay: true, ...(group.now !== undefined ? { now: group.now } : {}), ...(group.nows !== undefined ? { nows: group.nows } : {}) }
      : { ...(group.now !== undefined ? { now: group.now } : {}), ...(group.asOf !== undefined ? { asOf: group.asOf } : {}) }),
  };
}

async function runRule(deps: EvalDeps, group: GroupRun): Promise<RunAnswer[]> {
  if (group.rule === undefined) throw new ArbiterError('bad_request', 'an `exec.run` group needs a `rule`');
  let size: number;
  try {
    size = checkRuleSize(group.rule, deps.limits.maxRuleBytes);
  } catch (err) {
    deps.metrics.refused.inc({ reason: 'rule_size' });
    throw err;
  }
  const outcome = await deps.pool.runJob({
    principal: group.principal,
    source: { kind: 'text', rule: group.rule },
    trace: tracesOf(group),
    ...(group.traceBytes !== undefined ? { traceBytes: group.traceBytes } : {}),
    ...(group.flags !== undefined ? { flags: group.flags } : {}),
    ...(group.now !== undefined ? { now: group.now } : {}),
    reply: { kind: 'json' },
    items: group.items,
    ...(group.deadline !== undefined ? { deadline: group.deadline } : {}),
    ...(group.replyBudget !== undefined ? { replyBudget: group.replyBudget } : {}),
  });
  countOutcome(deps.metrics, outcome);
  const answers = outcome.answers.map((a) => (a instanceof ArbiterError ? a : a.json!));
  const ran = answers.length - answers.filter((a) => a instanceof ArbiterError).length;
  if (ran > 0 && outcome.hash !== '') deps.index.note(outcome.hash, size, outcome.compiles, ran);
  return answers;
}

/**
 * `exec.eval`: the one road of evaluations (contracts `EvalRequestHeader`, service-kit `frame.ts`).
 * The header is validated once per message; each group runs as one queue job; items are never
 * parsed on this thread (workers decode them) and answers come back as raw JSON, framed in order
 * without being decoded. One bad group or item never fails the others. Answers that would take the
 * reply past `maxReplyBytes` are replaced by `result_too_large` (the caller asks for those again alone).
 */
export function evalEndpoint(deps: EvalDeps, maxReplyBytes: number): RawEndpointDef {
  return {
    subject: ExecSubject.eval,
    raw: true,
    handler: async (data) => {
      const receivedAt = deps.pool.clock();
      const frame = decodeFrame(data);
      const parsed = EvalRequestHeader.safeParse(frame.header);
      if (!parsed.success) {
        const reasons = parsed.error.issues.map((i) => ({ code: i.code, message: i.message, path: i.path.join('.') }));
        throw new ArbiterError(
          'bad_request',
          `invalid request to \`${ExecSubject.eval}\`: ${reasons.map((r) => `${r.path || '(root)'}: ${r.message}`).join('; ')}`,
          reasons,
        );
      }
      const header = parsed.data;
      if (header.groups.reduce((n, g) => n + g.n, 0) !== frame.items.length) {
        throw new ArbiterError('bad_request', `invalid request to \`${ExecSubject.eval}\`: the groups' items do not add up to \`ends\``);
      }
      // Time on the way counts against each group's wait, as it did for its sender (clocks
      // that disagree shift it by their skew; a sender clock ahead of ours counts as no delay).
      const transitMs = header.sentAt === undefined ? 0 : Math.max(0, Date.now() - header.sentAt);
      let at = 0;
      // One reply for all groups: once answers fill it, the items not started are not run.
      const replyBudget = { left: maxReplyBytes - REPLY_HEADER_BYTES - TOO_LARGE_ENTRY_BYTES * frame.items.length };
      const runs = header.groups.map((g) => {
        const principal = header.principals[g.principal];
        const rule = g.rule === undefined ? undefined : header.rules[g.rule];
        const items = frame.items.slice(at, at + g.n);
        at += g.n;
        if (principal === undefined || (g.rule !== undefined && rule === undefined)) {
          const error = new ArbiterError(
            'bad_request',
            `invalid request to \`${ExecSubject.eval}\`: a group names a missing principal or rule`,
          );
          return Promise.resolve(items.map(() => error));
        }
        if (g.nows !== undefined && (g.nows.length !== g.n || g.replay !== true)) {
          const error = new ArbiterError(
            'bad_request',
            `invalid request to \`${ExecSubject.eval}\`: \`nows\` is for replays, one per item`,
          );
          return Promise.resolve(items.map(() => error));
        }
        return runGroup(deps, {
          subject: g.subject,
          principal,
          ...(rule !== undefined ? { rule } : {}),
          ...(g.id !== undefined ? { id: g.id } : {}),
          trace: g.trace,
          ...(g.traceBytes !== undefined ? { traceBytes: g.traceBytes } : {}),
          ...(g.flags !== undefined ? { flags: g.flags } : {}),
          ...(g.now !== undefined ? { now: g.now } : {}),
          ...(g.nows !== undefined ? { nows: g.nows } : {}),
          ...(g.asOf !== undefined ? { asOf: g.asOf } : {}),
          ...(g.replay === true ? { replay: true } : {}),
          items,
          deadline: receivedAt + g.timeoutMs - transitMs,
          replyBudget,
        });
      });
      return encodeReply((await Promise.all(runs)).flat(), maxReplyBytes);
    },
  };
}

/**
 * The reply frame: each answer's raw JSON, or its error in the header. Answers past what fits in
 * `maxReplyBytes` become `result_too_large`; room for every item's marker is kept from the start
 * and given back as an answer fits, so the markers never take the reply past the limit.
 */
export function encodeReply(answers: RunAnswer[], maxReplyBytes: number): Buffer {
  let total = 0;
  for (const a of answers) total += a instanceof ArbiterError ? TOO_LARGE_ENTRY_BYTES : a.byteLength + 12;
  const fits = total + REPLY_HEADER_BYTES <= maxReplyBytes;
  let room = maxReplyBytes - REPLY_HEADER_BYTES - TOO_LARGE_ENTRY_BYTES * answers.length;
  const errors: Record<number, WireError> = {};
  let failed = false;
  const items = answers.map((answer, i) => {
    if (answer instanceof ArbiterError) {
      errors[i] = answer.toWire();
      failed = true;
      return EMPTY;
    }
    if (fits) return answer;
    const bytes = answer.byteLength + 12;
    if (bytes <= room + TOO_LARGE_ENTRY_BYTES) {
      room -= bytes - TOO_LARGE_ENTRY_BYTES;
      return answer;
    }
    errors[i] = TOO_LARGE;
    failed = true;
    return EMPTY;
  });
  return encodeFrame(failed ? { errors } : {}, items);
}

const EMPTY = new Uint8Array(0);
const TOO_LARGE = new ArbiterError('result_too_large', 'this answer did not fit in the batch reply; send the request on its own').toWire();
