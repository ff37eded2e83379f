import type {
  ArbiterError,
  ExplainResponse,
  OperatorsResponse,
  Principal,
  RuleOnlyRequest,
  RunRequest,
  RunResponse,
  ValidateResponse,
} from '@arbiter/contracts';

/**
 * What the gateway needs from the rule engine. Production sends the requests to the execution
 * service over NATS (`engine-client-nats.ts`); failures are thrown as `ArbiterError`s
 * (`dependency_unavailable` when no replica answers, `timeout` on time-out). Engine outcomes such
 * as a parse error are results, not throws.
 */
export interface EngineClient {
  /** Evaluates an unsaved rule against data (`POST /run`). */
  run(principal: Principal, body: RunRequest, ctx?: EngineCallContext): Promise<RunResponse>;
  /**
   * Evaluates one unsaved rule against many data objects (`POST /run/batch`): in order, each
   * item's answer, or the error its own `run` would have thrown.
   */
  runMany(
    principal: Principal,
    rule: string,
    items: readonly RunRequest['data'][],
    ctx?: EngineCallContext,
  ): Promise<Array<RunResponse | ArbiterError>>;
  /** Checks a rule's syntax (`POST /validate`). */
  validate(principal: Principal, body: RuleOnlyRequest, ctx?: EngineCallContext): Promise<ValidateResponse>;
  /** Describes a rule's structure (`POST /explain`). */
  explain(principal: Principal, body: RuleOnlyRequest, ctx?: EngineCallContext): Promise<ExplainResponse>;
  /** Lists the operators of the rule language (`GET /operators`). */
  operators(principal: Principal, ctx?: EngineCallContext): Promise<OperatorsResponse>;
}

/** Per-call context passed along for tracing. */
export interface EngineCallContext {
  /** The HTTP request id, forwarded so logs can be followed across services. */
  readonly requestId?: string;
}
