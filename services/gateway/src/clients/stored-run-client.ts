import { StoredRunSubject, tracesOf, type FlowTestBody, type FlowTestInput, type Principal, type RunOptions } from '@arbiter/contracts';
import type { Bus, EvalClient, FrameItem } from '@arbiter/service-kit';
import type { ExecutionAnswer } from './execution-client.js';
import { executionAnswer } from './execution-retry.js';

/** What a stored run names: a base (its current runnable record) or an exact record. */
export type RunBy = 'base' | 'record';

/** What runs: a stored policy or a stored flow. */
export type RunKind = 'policy' | 'flow';

/**
 * Runs of stored policies and flows and of ad hoc flow definitions (docs/api.md#evaluate-rules). Failures are
 * `ArbiterError`s: `not_found` for unknown, deleted or other-org ids, `dependency_unavailable` when
 * no execution replica answers, `timeout` on time-out. Engine outcomes (parse error, missing data,
 * schema mismatch, a flow node's deleted policy) are results.
 */
export interface StoredRunClient {
  /**
   * Runs the policy or flow `id` names (`by` a base id, or an exact record id) on each of `items`
   * (data objects as JSON text, or its UTF-8 bytes): `POST /run/policy/{baseId}` and the others, one item, and their
   * `/batch` forms. In order, each item's answer: the JSON body of the single route (bytes, never
   * decoded here) or its error.
   */
  run(kind: RunKind, principal: Principal, by: RunBy, id: string, items: readonly FrameItem[], ctx: RunOptions): Promise<ExecutionAnswer[]>;
  /** `POST /flow/test`: the JSON body of the answer (a `FlowRunResponse`), never decoded here. */
  testFlow(principal: Principal, body: FlowTestBody, ctx?: RunOptions): Promise<Uint8Array>;
}

const SUBJECTS = {
  policy: { base: StoredRunSubject.policyByBase, record: StoredRunSubject.policyByRecord },
  flow: { base: StoredRunSubject.flowByBase, record: StoredRunSubject.flowByRecord },
} as const;

/** The production {@link StoredRunClient}: stored runs as `exec.eval` groups (service-kit `EvalClient`), `/flow/test` on `exec.flow.test`. */
export class NatsStoredRunClient implements StoredRunClient {
  constructor(
    private readonly evals: Pick<EvalClient, 'many'>,
    private readonly bus: Pick<Bus, 'requestData'>,
    private readonly timeoutMs: number,
  ) {}

  run(
    kind: RunKind,
    principal: Principal,
    by: RunBy,
    id: string,
    items: readonly FrameItem[],
    options: RunOptions,
  ): Promise<ExecutionAnswer[]> {
    return this.evals.many({ ...options, subject: SUBJECTS[kind][by], principal, id, timeoutMs: this.timeoutMs }, items);
  }

  testFlow(principal: Principal, body: FlowTestBody, ctx?: RunOptions): Promise<Uint8Array> {
    const payload: FlowTestInput = {
      principal,
      definition: body.definition,
      data: body.data,
      trace: tracesOf(ctx),
      ...(ctx?.flags !== undefined ? { flags: ctx.flags } : {}),
    };
    return executionAnswer(
      this.bus.requestData(StoredRunSubject.flowTest, payload, {
        timeoutMs: this.timeoutMs,
        ...(ctx?.requestId !== undefined ? { requestId: ctx.requestId } : {}),
      }),
    );
  }
}
