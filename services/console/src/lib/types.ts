// The API's shapes the console reads (see the gateway's /openapi.json; zod sources in libs/contracts).

export interface Me {
  orgId: string;
  userId: string;
  role: string;
  /** Only when signed in with an API key. */
  scopes?: string[];
  apiKeyId?: string | null;
}

export interface RunResult {
  result: unknown;
  trace?: string[];
  outcomes?: Record<string, unknown>;
  error?: string | null;
  errorCode?: string | null;
  version?: number | null;
}

export interface ValidateResult {
  valid: boolean;
  error: string | null;
}

export interface ExplainedCondition {
  type: 'comparison' | 'rule_reference' | 'label_reference' | 'quantifier' | 'group';
  selector: string;
  property: string;
  operator: string;
  value: string;
  logical_op: 'and' | 'or' | null;
  optional: boolean;
  negated: boolean;
  conditions?: ExplainedCondition[];
}

export interface ExplainResult {
  rule_count: number;
  rules: { label: string | null; selector: string; outcome: string; conditions: ExplainedCondition[] }[];
  error: string | null;
}

export type Operators = { operator: string; forms: string[] }[];

export interface Review {
  state: 'draft' | 'pending_approval' | 'approved' | 'rejected' | 'published';
  requestId: string | null;
  stale: boolean;
}

export interface RecordMeta {
  baseId: string;
  name: string;
  description: string;
  schema: unknown;
  status: 'draft' | 'published';
  version: number | null;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  publishedAt: string | null;
  publishedBy: string | null;
  review?: Review;
}

export interface PolicyTest {
  name: string;
  data: unknown;
  expect: boolean;
}
export interface FlowTest {
  name: string;
  data: unknown;
  expect: unknown;
}

export interface PolicyRecord extends RecordMeta {
  policyId: string;
  rule: string;
  tests: PolicyTest[];
}

/** A decision table's output value. */
export type TableValue = string | number | boolean | null;

/** A decision-table node (see the flow definition schema in /openapi.json). */
export interface TableNode {
  type: 'table';
  hitPolicy: 'unique' | 'any' | 'priority' | 'first' | 'rule order' | 'collect';
  aggregation?: 'sum' | 'min' | 'max' | 'count';
  inputs: { name: string; path: string }[];
  outputs: { name: string; values?: TableValue[]; default?: TableValue }[];
  rules: { when: string[]; then: Record<string, TableValue>; description?: string }[];
  next?: string;
  routeOn?: string;
  routes?: Record<string, string>;
  default?: string;
}

/** One evaluated cell of a table node run. */
export interface TableCellRun {
  rule: number;
  input: number;
  result: boolean;
}

export interface FlowNode {
  type: 'policy' | 'return' | 'custom' | 'table';
  baseId?: string;
  policyId?: string;
  version?: number;
  onTrue?: string;
  onFalse?: string;
  value?: unknown;
  outcome?: unknown;
  [key: string]: unknown;
}
export interface FlowDefinition {
  start: string;
  nodes: Record<string, FlowNode>;
}
export interface FlowRecord extends RecordMeta {
  flowId: string;
  definition: FlowDefinition;
  tests: FlowTest[];
}

export interface Summary {
  baseId: string;
  name: string;
  description: string;
  status: 'draft' | 'published';
  version: number | null;
  latestVersion: number | null;
  draftId: string | null;
  createdBy: string;
  updatedAt: string;
  policyId?: string;
  flowId?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface FlowRunResult {
  result: unknown;
  path?: { nodeId: string; type: string; result?: unknown; matched?: number[]; [key: string]: unknown }[];
  nodes?: { nodeId: string; type?: string; matched?: number[]; cells?: TableCellRun[]; trace?: string[]; error?: string | null }[];
  error?: string | null;
  [key: string]: unknown;
}

export interface AuditEvent {
  eventId: string;
  kind: string;
  at: string;
  actor: { userId: string; apiKeyId?: string | null };
  resource: { type: string; id: string; baseId?: string };
  details: Record<string, unknown>;
}
