export { ErrorCode, ErrorReason, WireError, ArbiterError, statusOf, isArbiterError } from './errors.js';
export { replyEnvelope, type Reply } from './envelope.js';
export { Role, Scope, Principal } from './principal.js';
export {
  RunRequest,
  RunResponse,
  EngineErrorCode,
  RuleOnlyRequest,
  ValidateResponse,
  ExplainedCondition,
  ExplainResponse,
  OperatorsResponse,
} from './engine.js';
