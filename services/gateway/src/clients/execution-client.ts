import type { FrameItem } from '@arbiter/service-kit';
import type {
  ArbiterError,
  ExplainResponse,
  OperatorsResponse,
  Principal,
  RuleOnlyRequest,
  RunOptions,
  ValidateResponse,
} from '@arbiter/contracts';

/** One evaluation's answer: the raw JSON body its single request answers (forwarded as it is), or its error. */
export type ExecutionAnswer = Uint8Array | ArbiterError;

/**
 * What the gateway needs from the rule engine. Production sends the requests to the execution
 * service over NATS (`execution-client-nats.ts`); failures are thrown (or, per item, answered) as
 * `ArbiterError`s (`dependency_unavailable` when no replica answers, `timeout` on time-out). Engine
 * outcomes such as a parse error are results, not errors.
 */
export interface ExecutionClient {
  /**
   * Evaluates an unsaved rule against each of `items` (data objects as JSON text, or its UTF-8 bytes): `POST /run` (one
   * item) and `POST /run/batch`. In order, each item's answer: the JSON body `POST /run` answers
   * (bytes, never decoded here), or the error its own `POST /run` would have failed with.
   */
  run(principal: Principal, rule: string, items: readonly FrameItem[], options: RunOptions): Promise<ExecutionAnswer[]>;
  /** Checks a rule's syntax (`POST /validate`). */
  validate(principal: Principal, body: RuleOnlyRequest, ctx?: RunOptions): Promise<ValidateResponse>;
  /** Describes a rule's structure (`POST /explain`). */
  explain(principal: Principal, body: RuleOnlyRequest, ctx?: RunOptions): Promise<ExplainResponse>;
  /** Lists the operators of the rule language (`GET /operators`). */
  operators(principal: Principal, ctx?: RunOptions): Promise<OperatorsResponse>;
}
