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
export { ExecSubject } from './subjects.js';
export { ExecRunRequest, type ExecRunInput, ExecRuleRequest, ExecOperatorsRequest } from './exec.js';
export { ROLE_CAPABILITIES, capabilitiesOf, hasCapability } from './access.js';
export { ProblemDetails, PageQuery, pageOf } from './http.js';
export {
  OrgId,
  UserId,
  MeResponse,
  Member,
  MemberPage,
  PutMemberRequest,
  CreateApiKeyRequest,
  ApiKey,
  CreatedApiKey,
  ApiKeyPage,
  OrgSettings,
} from './identity.js';
export {
  McpHeader,
  MAX_PRINCIPAL_HEADER_LENGTH,
  encodePrincipalHeader,
  decodePrincipalHeader,
  McpToolName,
  EvaluateRulesArgs,
  EvaluateRulesResult,
  RuleArgs,
  ValidateRuleResult,
  ExplainRuleResult,
  ListOperatorsArgs,
  ListOperatorsResult,
  McpSubject,
  McpHttpRequest,
  McpHttpResponse,
} from './mcp.js';
