/**
 * Every requirement the docs state (each id names the doc first: docs/api.md, docs/design/*.md, …),
 * with the tests that cover it: a file (from the repository root) and the exact titles of `it`/`describe`
 * blocks in it. requirements.test.ts fails when a file or a title named here does not exist, and
 * when a requirement has no test; what is known not to be covered yet is listed in KNOWN_GAPS, which
 * the test prints on every run. When you add a feature, add its tests here; when you close a gap,
 * move it from KNOWN_GAPS to REQUIREMENTS.
 */

/** Tests of one file: exact titles of `it(...)` or `describe(...)` blocks (`it.each` titles as written). */
export interface Coverage {
  file: string;
  tests: readonly string[];
}

export interface Requirement {
  /** `docs/api.md#evaluate-rules stored runs`: the doc that states it, then a topic; unique. */
  id: string;
  /** What is required, in a line. */
  title: string;
  coveredBy: readonly Coverage[];
}

export interface KnownGap {
  id: string;
  title: string;
  /** Why it has no test yet, and who is building it. */
  why: string;
}

const E2E = 'test/e2e';
const GW = 'services/gateway/test';
const REG = 'services/registry/test';
const EXEC = 'services/execution/test';
const MCP = 'services/mcp/test';
const KIT = 'libs/service-kit/test';
const LANG = 'libs/rule-lang/test';
const CLI = 'libs/cli/test';
const SDK = 'libs/sdk/test';
const FLOW = 'libs/flow/test';
const AUDIT = 'services/audit/test';
const GOV = 'services/governance/test';

export const REQUIREMENTS: readonly Requirement[] = [
  {
    id: 'README.md what the service does',
    title: 'evaluates rules against JSON, stores policies and flows, roles and ownership, runs by API key, MCP, soft delete',
    coveredBy: [
      { file: `${E2E}/platform.test.ts`, tests: ['evaluates a rule and returns result and trace'] },
      {
        file: `${E2E}/stored-runs.test.ts`,
        tests: ['runs the draft of a never-published base, then the latest version; an exact version id keeps running its own text'],
      },
      { file: `${E2E}/mcp.test.ts`, tests: ['initializes and lists the four tools with input and output schemas'] },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows identifiers',
    title: 'identifiers: baseId across the lifetime, policyId/flowId per record, groupId, memberId',
    coveredBy: [
      { file: `${REG}/policies.test.ts`, tests: ['versions accepts any record id, lists the draft first and pages with a cursor'] },
      { file: `${E2E}/registry.test.ts`, tests: ['GET .../versions lists the draft first, from any record id of the base'] },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows records and visibility',
    title: 'policy and flow records (draft or version, status, rule, schema); ownership before and after publish',
    coveredBy: [
      {
        file: `${REG}/policies.test.ts`,
        tests: [
          'creates a draft with the record shape of docs/api.md (policies and flows)',
          'a never-published base is listed for its creator only, loadable by id by a colleague; after publish both list it',
        ],
      },
      {
        file: `${E2E}/registry.test.ts`,
        tests: [
          'a never-published policy is listed for its creator only, loadable by id by a colleague, and listed for all once published',
          'the same holds for flows',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows groups',
    title: 'groups: metadata and membership of policy and flow bases',
    coveredBy: [
      {
        file: `${REG}/groups.test.ts`,
        tests: [
          'creates, gets, updates and lists groups',
          'adds policy and flow bases (201 record), 409 on a repeat, 404 for unknown or wrong-kind bases',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#saved-tests-and-coverage test runs',
    title:
      'the saved tests of a draft or version run over HTTP with their coverage: conditions of a policy, table rows and edges of a flow',
    coveredBy: [
      {
        file: `${E2E}/coverage.test.ts`,
        tests: [
          'runs the saved tests of a policy draft for a viewer: results, and the conditions left uncovered',
          'runs a version with `?version=N` and the draft without',
          'runs a flow: the table rows matched and the edges taken',
          'answers 401 without credentials, 404 for another org, an unknown id, a deleted base and a missing version, 400 for a bad version',
          'answers 403 to a key without the `view` scope',
          'runs through the SDK: policies.runTests and flows.runTests, with a version',
        ],
      },
      { file: `${REG}/test-run.test.ts`, tests: ['runs a flow draft: its table rows matched and edges taken'] },
      {
        file: `${SDK}/client-options.test.ts`,
        tests: [
          'posts to /policy/{baseId}/tests/run and /flow/{baseId}/tests/run, with ?version=N when asked, and retries a 503 as a run is',
        ],
      },
      { file: `${FLOW}/coverage.test.ts`, tests: ['counts the rows matched and the edges taken by the runs'] },
    ],
  },
  {
    id: 'docs/api.md#a-minimum-coverage-to-publish',
    title:
      'the org setting minCoverage (0–100, default 0) refuses a publish, and in a governed org a submission, whose saved tests cover less',
    coveredBy: [
      {
        file: `${E2E}/coverage.test.ts`,
        tests: [
          'refuses a publish whose saved tests cover less, with the percent, the minimum and the uncovered parts; nothing is published',
          'at 0 (the default) changes nothing: a poorly covered draft publishes, and is submitted in a governed org',
          'in a governed org refuses the submission for review below the minimum; nothing is submitted',
          'answers 400 for a minCoverage out of bounds or not an integer, and keeps the setting',
        ],
      },
      {
        file: `${REG}/test-run.test.ts`,
        tests: [
          'refuses a publish whose saved tests cover less, naming the percent, the minimum and the uncovered parts; nothing changes',
          'applies the minimum to the publish check of a submission for review',
        ],
      },
      {
        file: `${GW}/identity-endpoints.test.ts`,
        tests: ['minCoverage: an integer from 0 to 100, kept when a PUT leaves it out; 400 past the bounds, nothing written'],
      },
    ],
  },
  {
    id: 'docs/api.md#users-and-keys',
    title: 'API keys are personal, user-owned, with scopes (at least view)',
    coveredBy: [
      {
        file: `${GW}/identity-endpoints.test.ts`,
        tests: [
          'POST answers 201 with the secret once; GET lists own keys without secrets; the key works',
          'GET lists only the caller’s own keys, not other members’',
        ],
      },
      { file: `${GW}/api-key-auth.test.ts`, tests: ['runs with a key that has scope view (200)'] },
    ],
  },
  {
    id: 'docs/api.md#evaluate-rules',
    title: 'POST /run {rule, data} → {result, trace, error?}; the golden rule gives the result',
    coveredBy: [
      {
        file: `${GW}/run-rules.test.ts`,
        tests: [
          'evaluates the golden rule and returns trace and outcomes',
          'answers a parse error as a 200 result with error and errorCode (docs/errors.md)',
        ],
      },
      { file: `${E2E}/platform.test.ts`, tests: ['evaluates a rule and returns result and trace'] },
    ],
  },
  {
    id: 'docs/LANGUAGE.md',
    title: 'the rule language: verbose and shorthand rules, paths, labels, references, golden rule, arrays, values, operators',
    coveredBy: [
      {
        file: `${LANG}/corpus.test.ts`,
        tests: [
          'every accepted and negative form is used by a case with a true and a false outcome',
          'returns exactly the list of §12.3 (read from docs/LANGUAGE.md)',
        ],
      },
      {
        file: `${LANG}/values/periods.test.ts`,
        tests: ['§7.3.9: with today 2025-06-15, within 30 days reaches past and future, inclusive'],
      },
      { file: `${LANG}/values/patterns.test.ts`, tests: ['compilePattern (§7.3.12 [D-pattern-semantics])'] },
      { file: `${LANG}/grammar-stale.test.ts`, tests: ['matches what `npm run grammar` produces from grammar/RuleLang.g4'] },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows publish without governance',
    title: 'draft → published by PUT with a non-draft status when governance is off: a new version, organization-level ownership',
    coveredBy: [
      {
        file: `${REG}/policies.test.ts`,
        tests: [
          'updates a draft with status draft, then publishes it as version 1, consuming the draft',
          'a never-published base is listed for its creator only, loadable by id by a colleague; after publish both list it',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows draft update and delete',
    title: 'PUT with status draft updates the draft (edited); DELETE on the base soft-deletes it (admin)',
    coveredBy: [
      { file: `${REG}/events.test.ts`, tests: ['every change lands on the stream with the spec kind, subject and message id'] },
      { file: `${REG}/policies.test.ts`, tests: ['deleting any record id hides the whole base everywhere, by base and exact version id'] },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows GET draft',
    title: 'GET .../draft creates a draft from a version and returns it',
    coveredBy: [
      {
        file: `${REG}/policies.test.ts`,
        tests: ['GET draft on a version creates one (201) from that version, then returns the same draft (200)'],
      },
    ],
  },
  {
    id: 'docs/api.md#governance-review review summary',
    title: 'a review summary of a draft with its state (draft, pending_approval, approved, rejected, published)',
    coveredBy: [
      {
        file: `${GOV}/reviews.test.ts`,
        tests: [
          'a new draft has review state `draft` and no request',
          'summaries answer the state of several drafts at once, stale ones as draft',
        ],
      },
      { file: `${GW}/review-routes.test.ts`, tests: ['submit → approve → publish; record bodies and versions show the review state'] },
    ],
  },
  {
    id: 'docs/api.md#governance-review transitions',
    title:
      'governance on: draft → pending_approval → approved | rejected → published; staleness after an edit; only an approved, unchanged draft is published',
    coveredBy: [
      {
        file: `${GOV}/reviews.test.ts`,
        tests: [
          'draft → pending_approval → approved → published, with the events, actors and request id',
          'pending_approval → rejected; a rejected draft cannot be published, is edited and submitted again',
          'approved → edited: the review is stale (state draft), publish answers 409 review_stale, a new approval is needed',
          'publish is refused without a request (409 not_approved) and while pending (409 not_approved)',
          'any state → deleted (admin): every review endpoint answers 404 for the deleted base',
        ],
      },
      {
        file: `${GW}/review-routes.test.ts`,
        tests: ['PUT with status published publishes directly (201), as before', 'reject → edit → resubmit → approve → publish'],
      },
      {
        file: `${E2E}/registry.test.ts`,
        tests: ['a publish becomes a review request (202); approve and publish make the version; nothing is published before'],
      },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows policy endpoints',
    title: 'policy endpoints: create, update/publish, get, versions, draft, list, delete',
    coveredBy: [
      { file: `${GW}/registry-routes.test.ts`, tests: ['forwards the path ids, the body and the list query with its defaults'] },
      {
        file: `${REG}/policies.test.ts`,
        tests: [
          'applies content fields before publishing in the same PUT',
          'pages newest first with an opaque cursor and searches names case-insensitively, `%` literal',
        ],
      },
      {
        file: `${E2E}/registry.test.ts`,
        tests: [
          'never change after publish: PUT on a version is 409 and the version reads byte-identical',
          'pages lists with limit and cursor and searches by name',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows flow endpoints',
    title: 'flow endpoints: the same as policies, for flows',
    coveredBy: [
      {
        file: `${REG}/flows.test.ts`,
        tests: ['creates, publishes with passing tests, versions and drafts like policies', 'deleting a flow base hides it everywhere'],
      },
      { file: `${E2E}/registry.test.ts`, tests: ['the same holds for flows', 'works the same for flows'] },
    ],
  },
  {
    id: 'docs/api.md#governance-review review endpoints',
    title: 'GET …/review, POST …/review/approve|reject|publish for policies and flows, with roles and tenants',
    coveredBy: [
      {
        file: `${GW}/review-routes.test.ts`,
        tests: [
          'flows have the same endpoints',
          'permission matrix of the review endpoints for every role, another org and no credentials',
          'documents every review route with its body, answers and problem responses',
        ],
      },
      {
        file: `${GOV}/reviews.test.ts`,
        tests: ['flows go through the same workflow', 'another org, unknown and malformed ids answer 404; a malformed request 400'],
      },
    ],
  },
  {
    id: 'docs/api.md#evaluate-rules stored runs',
    title: 'execution endpoints: /run, /run/policy/{baseId}, /run/policy_version/{policyId}, flow forms, /flow/test; executed events',
    coveredBy: [
      {
        file: `${E2E}/stored-runs.test.ts`,
        tests: [
          'runs the draft of a never-published base, then the latest version; an exact version id keeps running its own text',
          'runs a flow by base and by version; nodes by base, pinned version or exact id; /flow/test runs a definition unsaved',
          'publishes aggregated `executed` events on the stream for runs of stored resources',
        ],
      },
      { file: `${EXEC}/stored-runs.test.ts`, tests: ['runs a published version by base and the draft by its own id'] },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows delete',
    title: 'soft delete of the whole base from any record id; hidden from lists and groups; no load or run, by exact id either',
    coveredBy: [
      {
        file: `${E2E}/registry.test.ts`,
        tests: [
          'hides the whole base: 404 by every record id and version id, gone from lists and group lists, membership kept, second DELETE 404',
        ],
      },
      { file: `${E2E}/stored-runs.test.ts`, tests: ['answers 404 by base id and by exact version id once the base is deleted'] },
      { file: `${REG}/groups.test.ts`, tests: ['a deleted base vanishes from group lists but its membership row is kept'] },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows group endpoints',
    title: 'group endpoints: create, get, update, delete, list, add and remove members, member lists',
    coveredBy: [
      {
        file: `${REG}/groups.test.ts`,
        tests: [
          'creates, gets, updates and lists groups',
          'member lists follow visibility: a never-published member shows for its creator only',
          'removing a member and deleting a group (with its memberships)',
          'pages groups with a cursor',
        ],
      },
      { file: `${E2E}/registry.test.ts`, tests: ['deleting a group removes its memberships but not the members'] },
    ],
  },
  {
    id: 'docs/api.md#audit-trail',
    title: 'GET /audit: tenant-scoped audit events for admins and auditors',
    coveredBy: [
      {
        file: `${GW}/audit-routes.test.ts`,
        tests: [
          'gives admins and auditors their org, newest first, with cursor pages',
          'refuses viewers, editors and publishers (403), and no credentials (401)',
          'shows another org only its own events',
        ],
      },
      { file: `${AUDIT}/query.test.ts`, tests: ['filters by kind (several), actor, resource type, resource id, base id and time range'] },
    ],
  },
  {
    id: 'docs/api.md#mcp-rules-for-ai-agents',
    title: 'MCP: POST /mcp, Streamable HTTP, the four tools with their argument and result shapes',
    coveredBy: [
      {
        file: `${MCP}/tools.test.ts`,
        tests: [
          'lists the four tools, each with an input and an output schema',
          'evaluates a rule: result, outcomes, string trace, error null; text content = structured content',
          'explains a rule (LANGUAGE.md §12.2 example)',
          'returns the exact spec array as text and wraps it as {operators} in structured content',
        ],
      },
      {
        file: `${E2E}/mcp.test.ts`,
        tests: ['evaluate_rules returns result, outcomes, trace and error:null, with the same JSON as text'],
      },
    ],
  },
  {
    id: 'deploy/README.md#mcp-has-its-own-door',
    title:
      "MCP's own port (MCP_HTTP_PORT, where the ingress routes /mcp): the gateway's key authentication, 401 challenge, 403, JSON-RPC errors, body limit, and one rate limit per key over both doors",
    coveredBy: [
      {
        file: `${E2E}/mcp-direct.test.ts`,
        tests: [
          'initializes, lists the four tools and evaluates a rule',
          'refuses a missing key with 401 and the API-key challenge, as the gateway does',
          'refuses a wrong key and a revoked one with 401 and the challenge',
          'refuses a key whose rights lack view with 403, as the gateway does',
          'answers a body that is not JSON, or none, with the JSON-RPC parse error (-32700), as the gateway does',
          'refuses on the mcp port a key the gateway door used up',
          'refuses on the gateway a key the mcp port used up, on /mcp and on every other route',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#authentication-and-roles',
    title: 'authentication: x-api-key with view on execution, three ways for MCP, personal keys, roles, role and ownership checks',
    coveredBy: [
      {
        file: `${GW}/api-key-auth.test.ts`,
        tests: ['refuses a request without a key (401 problem)', 'refuses a key without scope view on every execution endpoint (403)'],
      },
      { file: `${E2E}/mcp.test.ts`, tests: ['accepts the key as x-mcp-api-key, x-api-key and the api_key query parameter'] },
      {
        file: `${REG}/policies.test.ts`,
        tests: ['only the owner or an admin edits a never-published draft'],
      },
      { file: `${E2E}/platform.test.ts`, tests: ["a key cannot exceed its owner's role, and demoting the owner demotes the key"] },
    ],
  },
  {
    id: 'docs/api.md#audit-trail event kinds',
    title: 'events of the spec kinds for every change and run (created, edited, published, assigned, executed, deleted)',
    coveredBy: [
      { file: `${REG}/events.test.ts`, tests: ['every change lands on the stream with the spec kind, subject and message id'] },
      {
        file: `${GW}/identity-events.test.ts`,
        tests: ['records a role assignment as `assigned`, with the actor and whether the member was added'],
      },
      { file: `${E2E}/registry.test.ts`, tests: ['a role assignment puts an `assigned` event on the JetStream stream'] },
      { file: `${EXEC}/stored-runs.test.ts`, tests: ['aggregates runs per record and actor and publishes them on the stream'] },
    ],
  },
  {
    id: 'docs/api.md#audit-trail review events',
    title: 'approval requested, approved and rejected events',
    coveredBy: [
      {
        file: `${GOV}/events.test.ts`,
        tests: [
          'approval requested, rejected and approved land on the stream with actor, request id, subject and message id',
          'an event is not lost while JetStream refuses it: the relay retries until the stream is back',
        ],
      },
    ],
  },
  {
    id: 'docs/errors.md',
    title: 'engine errors are results (parse error, missing selector, missing property); deleted bases refused; no key refused',
    coveredBy: [
      {
        file: `${GW}/run-rules.test.ts`,
        tests: [
          'answers a parse error as a 200 result with error and errorCode (docs/errors.md)',
          'answers missing data as a 200 result with an errorCode',
        ],
      },
      { file: `${E2E}/stored-runs.test.ts`, tests: ['reports engine errors as 200 results'] },
      { file: `${E2E}/mcp.test.ts`, tests: ['refuses no key with 401 before any MCP processing, challenging for an API key (not OAuth)'] },
    ],
  },
  {
    id: 'docs/api.md#limits-on-what-a-request-may-carry',
    title: 'limits (docs/api.md#limits-on-what-a-request-may-carry): body size, rule size, data depth, time-out, rate limit',
    coveredBy: [
      {
        file: `${GW}/http-conventions.test.ts`,
        tests: [
          'answers 413 for a body over the limit (1 MiB)',
          'answers 429 past RATE_LIMIT_MAX per key, shared by replicas through Redis, other keys unaffected',
        ],
      },
      {
        file: `${EXEC}/service.test.ts`,
        tests: [
          'refuses an oversized rule with payload_too_large before any worker sees it',
          'refuses data nested deeper than the limit with validation_failed',
        ],
      },
      { file: `${EXEC}/worker-pool.test.ts`, tests: ['aborts a runaway evaluation with timeout, replacing the worker'] },
      {
        file: `${E2E}/edge-hardening.test.ts`,
        tests: [
          'answers a 14,000-item trace with the trace cut and a marker (was 500)',
          'limits saved-test data to a run data depth (64) although the body is within the edge limit',
          'answers an over-long path parameter as a problem (was a bare 414 FST_ERR_MAX_PARAM_LENGTH)',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows versions',
    title:
      'versioning: one base, many records; versions from drafts; runs by base use the latest version, else the draft; versions never deleted alone',
    coveredBy: [
      {
        file: `${REG}/policies.test.ts`,
        tests: [
          'a version never changes: PUT answers 409 version_immutable and the row stays as published',
          'the database refuses UPDATE and DELETE of a published record (trigger)',
        ],
      },
      {
        file: `${E2E}/stored-runs.test.ts`,
        tests: ['never serves a stale version: 5 publishes, each followed at once by 100 runs spread over both replicas'],
      },
    ],
  },

  // ---- docs/design/ and the other docs -----------------------------------------------------------
  {
    id: 'docs/architecture.md shape',
    title: 'libs without I/O, services on the bus; each service starts alone; first start creates the database and migrates',
    coveredBy: [
      { file: `${LANG}/boundary.test.ts`, tests: ['never imports node:fs, node:net, nats, pg or ioredis'] },
      { file: `${KIT}/database.test.ts`, tests: ['creates a missing database once, even when many processes race'] },
      { file: `${GW}/bootstrap.test.ts`, tests: ['creating the database and migrating again are no-ops'] },
    ],
  },
  {
    id: 'docs/operations.md#health-metrics-and-alerts every service',
    title: 'JSON logs, /healthz and /readyz, Prometheus metrics, graceful shutdown, clear start-up failures',
    coveredBy: [
      { file: `${KIT}/logger.test.ts`, tests: ['writes JSON lines naming the service'] },
      {
        file: `${KIT}/ops-server.test.ts`,
        tests: [
          'answers /readyz from the ready callback, 503 when it says no or throws',
          'serves Prometheus text with registered and default metrics, labelled by service',
        ],
      },
      { file: `${KIT}/shutdown.test.ts`, tests: ['runs the shutdown once on the first signal, then exits 0'] },
      {
        file: `${E2E}/startup.test.ts`,
        tests: ['%s with its dependencies unreachable exits 1 with one fatal JSON line', '%s with a bad variable exits 1 naming it'],
      },
    ],
  },
  {
    id: 'CONTRIBUTING.md#tests test servers',
    title: 'tests use the running servers when they answer (env URLs first), testcontainers when Docker is there, else one clear message',
    coveredBy: [
      {
        file: 'libs/test-kit/test/servers.test.ts',
        tests: [
          'uses the running servers when all three answer, whatever Docker says',
          'starts only the servers that did not answer when Docker is available',
          'with neither, fails the run with the one message',
        ],
      },
    ],
  },
  {
    id: 'docs/operations.md#outages-of-postgresql failures of the servers',
    title: 'killing or freezing NATS, Redis, PostgreSQL or a service: clean answers (no 500), recovery by itself, no lost event',
    coveredBy: [
      {
        file: `${E2E}/faults/faults.test.ts`,
        tests: ['answers every request cleanly through each fault, recovers by itself and loses no event'],
      },
      {
        file: `${GW}/database-outage.test.ts`,
        tests: ['keeps a key in use working past the cache TTL, answers 503 with retry-after for what needs the database, and recovers'],
      },
    ],
  },
  {
    id: 'docs/operations.md',
    title: 'NATS credentials and per-service permissions, Redis password; dashboards and alerts on the metrics the services expose',
    coveredBy: [
      {
        file: `${E2E}/nats-auth.test.ts`,
        tests: [
          'runs the whole stack: create, publish, stored run, MCP, events in the stream',
          'refuses a client without credentials, or with a wrong password',
        ],
      },
      { file: `${KIT}/credentials.test.ts`, tests: ['authenticates with the password in REDIS_URL and is refused without it'] },
      { file: `${E2E}/observability.test.ts`, tests: ['queries only metrics that the running services expose'] },
    ],
  },
  {
    id: 'docs/design/bus.md',
    title: 'the bus: request/reply with queue groups, reply envelopes, principals re-checked; events after commit with unique ids',
    coveredBy: [
      {
        file: `${KIT}/bus.test.ts`,
        tests: ['shares requests between replicas, each request handled once', 'carries a handler ArbiterError across the bus'],
      },
      { file: `${EXEC}/service.test.ts`, tests: ['re-checks the caller: a principal without view is refused, one with view runs'] },
      {
        file: `${KIT}/event-relay.test.ts`,
        tests: [
          'publishes committed events in order, each under its subject with its id as message id, and marks them sent',
          'writes nothing when the change rolls back',
        ],
      },
    ],
  },
  {
    id: 'docs/design/identity.md',
    title: 'identity: org roles, bearer JWT and personal API keys (role ∩ scopes), revocation at once, bootstrap, identity endpoints',
    coveredBy: [
      {
        file: `${GW}/jwt-auth.test.ts`,
        tests: [
          'accepts a valid token; the role comes from the membership table, not the token',
          'provisions an unknown user of a known org as a viewer',
        ],
      },
      {
        file: `${GW}/api-key-auth.test.ts`,
        tests: [
          'a demoted owner’s key loses the rights on the very next request, on every replica',
          'a revoked key is refused on the very next request, including on another replica (401)',
        ],
      },
      { file: `${GW}/bootstrap.test.ts`, tests: ['ensures the org, the admin and exactly that key, idempotently'] },
      {
        file: `${GW}/people-and-org-keys.test.ts`,
        tests: ['removes the member and revokes their keys at once (and keys made with them), with events'],
      },
      {
        file: `${GW}/identity-endpoints.test.ts`,
        tests: [
          'PUT adds a new member (201), then changes the role (200)',
          'only an admin reads and writes (docs/design/identity.md); unknown fields are refused',
        ],
      },
      {
        file: `${E2E}/platform.test.ts`,
        tests: ['refuses an expired key with 401', 'refuses JWTs with a wrong signature, issuer, audience or expiry with 401'],
      },
    ],
  },
  {
    id: 'docs/api.md#conventions',
    title:
      'HTTP conventions: validated bodies, RFC 9457 problems, engine outcomes as 200, cursor lists, OpenAPI at /openapi.json and /docs',
    coveredBy: [
      {
        file: `${GW}/http-conventions.test.ts`,
        tests: [
          'answers 400 listing every failing field: unknown fields, wrong types, missing fields',
          'answers unknown routes with a 404 problem',
          'serves a valid OpenAPI 3.1 document listing every route',
          'serves the interactive docs at /docs',
        ],
      },
      { file: 'libs/contracts/test/errors-doc.test.ts', tests: ['documents every error code with its status, and nothing else'] },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows records, drafts and versions',
    title: 'policies and flows: records, publish checks (parse, schema paths, saved tests), drafts, delete, flow DAGs, run answers',
    coveredBy: [
      {
        file: `${REG}/policies.test.ts`,
        tests: [
          '422 lists every reason (bad schema path, failing tests) and changes nothing, edits included',
          'two simultaneous publishes of one draft make exactly one version; the loser gets 409',
        ],
      },
      {
        file: `${REG}/publish-deadline.test.ts`,
        tests: ['a policy whose saved test runs too long is refused (422), and the registry answers other requests meanwhile'],
      },
      { file: `${FLOW}/validate.test.ts`, tests: ['lists every problem at once'] },
      { file: `${FLOW}/run.test.ts`, tests: ['reaches the shared custom node from both paths'] },
      {
        file: `${E2E}/stored-runs.test.ts`,
        tests: ['validates the data against the policy schema: a mismatch is a 200 result naming the first failing path'],
      },
    ],
  },
  {
    id: 'docs/design/governance.md',
    title: 'review summary, the approver is not the requester, review_stale, resubmission after rejection, races',
    coveredBy: [
      {
        file: `${GOV}/reviews.test.ts`,
        tests: [
          'the requester may not approve, reject or publish their own request, whatever their role',
          'a rejected draft may be submitted again unchanged',
          'two publishers publishing the same approved request at once make exactly one version',
          'an edit racing a publish (200 runs): the publish is refused or the version is exactly the approved content',
        ],
      },
      {
        file: `${GW}/review-routes.test.ts`,
        tests: ['separation of duties: the requester may not approve, reject or publish (403 separation_of_duties)'],
      },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows groups of bases',
    title: 'groups are org-wide; editors create; creator or admin manages; member lists follow visibility',
    coveredBy: [
      {
        file: `${REG}/permissions.test.ts`,
        tests: ['the group creator (an editor) manages its group', 'org B cannot add org A bases to its own group'],
      },
      { file: `${REG}/groups.test.ts`, tests: ['member lists follow visibility: a never-published member shows for its creator only'] },
    ],
  },
  {
    id: 'docs/design/events-and-audit.md events',
    title: 'events {eventId, orgId, kind, at, actor, resource, details} on one stream; executed batched off the hot path; none lost',
    coveredBy: [
      {
        file: `${REG}/events.test.ts`,
        tests: ['an event is not lost when JetStream refuses it: the relay retries until the stream is back'],
      },
      {
        file: `${EXEC}/stored-runs.test.ts`,
        tests: ['keeps closed windows in memory, bounded, while the outbox cannot be written, and writes them once it can'],
      },
      { file: `${E2E}/stored-runs.test.ts`, tests: ['runs 200 warm stored policies and flows with no statement in the stack database'] },
    ],
  },
  {
    id: 'docs/design/events-and-audit.md audit',
    title:
      'a durable audit consumer into PostgreSQL (idempotent, nothing lost while it is down); GET /audit filters and pages, newest first',
    coveredBy: [
      {
        file: `${AUDIT}/ingest.test.ts`,
        tests: [
          'stores every kind once with its actor, resource and details',
          'stores a redelivered event once (same event id, a new message)',
        ],
      },
      {
        file: `${AUDIT}/faults.test.ts`,
        tests: ['kill -9 of the audit process while thousands of events flow: after a restart every event is stored once'],
      },
      {
        file: `${E2E}/audit.test.ts`,
        tests: [
          'records each kind once, with the actor and the resource',
          'keeps runs and edits working while the audit service is down; the trail catches up',
        ],
      },
      { file: `${AUDIT}/query.test.ts`, tests: ['pages with a cursor, and a page stays right while new events arrive'] },
    ],
  },
  {
    id: 'services/mcp/README.md',
    title: 'MCP: stateless Streamable HTTP, the four tools with output schemas and structuredContent, the official SDK client',
    coveredBy: [
      { file: `${MCP}/tools.test.ts`, tests: ['initializes with the official client'] },
      {
        file: `${E2E}/mcp.test.ts`,
        tests: [
          'initializes and lists the four tools with input and output schemas',
          'answers GET with 405 (stateless server), and 503 while no mcp replica runs',
        ],
      },
    ],
  },
  {
    id: 'CONTRIBUTING.md#habits',
    title: 'engineering habits: real servers in integration and e2e tests, isolated per file; no timed assertions',
    coveredBy: [{ file: `${E2E}/requirements.test.ts`, tests: ['no test mocks a module, skips, or leaves a todo'] }],
  },
  {
    id: 'docs/design/identity.md keys that make keys',
    title: 'a view-only key makes no keys; a key makes keys within its scopes and expiry; revoking revokes what it made',
    coveredBy: [
      {
        file: `${GW}/api-key-auth.test.ts`,
        tests: [
          'refuses a key that can only read: a short-lived view key cannot mint a permanent one (403, nothing created)',
          'gives a key made with an expiring key that expiry, refuses a later one, accepts an earlier one',
          'revokes every key made from a revoked key, transitively, on the very next request on every replica',
        ],
      },
    ],
  },
  {
    id: 'docs/design/fair-scheduling.md evaluation budget',
    title: 'steps counted; past EXEC_STEP_BUDGET a budget_exceeded result (HTTP 200); the deadline counts from when a worker starts',
    coveredBy: [
      {
        file: `${LANG}/budget.test.ts`,
        tests: ['stops with budget_exceeded in every mode, after exactly its budget of steps'],
      },
      {
        file: `${EXEC}/service.test.ts`,
        tests: [
          'stops a runaway evaluation with budget_exceeded as a result, no time-out, the worker kept',
          'is configurable (EXEC_STEP_BUDGET, EXEC_TRACE_STEP_BUDGET)',
        ],
      },
      {
        file: `${EXEC}/worker-pool.test.ts`,
        tests: ['counts the deadline from when a worker starts a task: one queued behind a slow task does not time out'],
      },
      { file: `${FLOW}/run.test.ts`, tests: ['shares one budget across the policy nodes of a run'] },
      {
        file: `${E2E}/fairness.test.ts`,
        tests: [
          'answers 200 budget_exceeded, and the next ordinary runs succeed (the issue reproduction)',
          'answers 429 with retry-after past the per-caller limit (EXEC_CALLER_MAX), other keys unaffected',
        ],
      },
    ],
  },
  {
    id: 'docs/design/governance.md governance service',
    title: 'governance in its own service; the registry refuses a governed publish without an approved, unchanged review (content hash)',
    coveredBy: [
      {
        file: 'services/registry/test/publish-reviewed.test.ts',
        tests: ['a changed draft is refused (409 review_stale) and nothing is written'],
      },
      {
        file: `${GW}/review-routes.test.ts`,
        tests: ['the governance service down: review endpoints and governed PUTs answer 503, the rest of the API works, and it recovers'],
      },
      {
        file: `${GOV}/reviews.test.ts`,
        tests: ['review requests answer 503 dependency_unavailable, the registry is unaffected, and it recovers'],
      },
    ],
  },
  {
    id: 'docs/design/events-and-audit.md audit kinds',
    title: 'key created, key revoked, member removed, settings changed recorded in the trail',
    coveredBy: [
      { file: `${GW}/identity-events.test.ts`, tests: ['records key creation and revocation (once) without the secret'] },
      { file: `${E2E}/audit.test.ts`, tests: ['records each kind once, with the actor and the resource'] },
    ],
  },
  {
    id: 'docs/operations.md#health-metrics-and-alerts operations endpoints',
    title: '/metrics on the ops port',
    coveredBy: [
      { file: `${KIT}/ops-server.test.ts`, tests: ['serves Prometheus text with registered and default metrics, labelled by service'] },
      {
        file: `${GW}/request-metrics.test.ts`,
        tests: ['count answers by method, route pattern and status, and time them, with bounded labels'],
      },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows restore',
    title: 'an admin restores a soft-deleted policy or flow base with its versions and lists deleted bases; events for both',
    coveredBy: [
      {
        file: `${REG}/restore.test.ts`,
        tests: [
          'brings a deleted base back with its versions and draft, by base id or any record id; runs resolve again',
          '409 when the base is not deleted; 404 for unknown, non-UUID and other-org ids; 403 below admin',
          'emits `restored` through the outbox, after `deleted`',
        ],
      },
      {
        file: `${GW}/restore-routes.test.ts`,
        tests: [
          'accepts an empty body whatever the content type, `{}` as JSON; refuses other bodies',
          '401 without credentials, 403 below admin, 404 unknown or other org, 409 when not deleted',
          'admins list deleted bases with deletedAt/deletedBy; others 403; other orgs see none',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#export-and-import export',
    title: 'GET /export (admin): the org’s policies and flows with every version, tests and schemas, and groups, as one JSON bundle',
    coveredBy: [
      {
        file: `${REG}/export.test.ts`,
        tests: [
          'pages the org’s live policies with every version (oldest first, draft last), flows and groups with live members',
          'admin only (403 otherwise); a bad cursor is 400; unknown sections and limits over the page size are refused',
        ],
      },
      {
        file: `${GW}/restore-routes.test.ts`,
        tests: [
          'answers the org’s bundle: policies with every version, flows, groups; more than one registry page',
          '401 without credentials, 403 below admin; another org gets its own (empty) bundle',
        ],
      },
    ],
  },
  {
    id: 'services/console/README.md serving',
    title: 'the gateway serves the built console at /console (page for client routes, CSP, 404 for a missing asset, 503 when not built)',
    coveredBy: [
      {
        file: `${GW}/console-routes.test.ts`,
        tests: [
          'serves the page at /console with a content security policy and no caching',
          'answers client routes under /console/ with the same page',
          'answers a missing asset 404 as a problem, not with the page',
          'never serves a file outside the build folder',
          'answers 503 naming the fix when the console is not built',
        ],
      },
      {
        file: `${E2E}/console/console.test.ts`,
        tests: ['is served at /console with a content security policy, and client routes get the page'],
      },
    ],
  },
  {
    id: 'services/console/README.md editor',
    title:
      'sign in with an API key or bearer token; live /validate diagnostics underlined; /operators completion; run with result, outcomes and linked trace',
    coveredBy: [
      {
        file: `${E2E}/console/console.test.ts`,
        tests: [
          'refuses a wrong key with the API problem detail, and never puts the key in the URL',
          'signs in with an API key (keyboard only), checked through the SDK client',
          'underlines a typo at the line and column /validate reports, and clears it when fixed',
          'completes operator phrases from /operators',
          'runs the rule on the data pane and links trace lines to rule lines',
          'fits a narrow window without sideways scrolling',
          'keeps the sign-in across a reload of the tab only, and forgets it on sign out',
        ],
      },
      { file: `${E2E}/console/console-review.test.ts`, tests: ['an editor signed in with a bearer token submits a draft for review'] },
      { file: 'services/console/test/rule-syntax.test.ts', tests: ['errorRange', 'traceLineSources', 'operatorPrefix'] },
    ],
  },
  {
    id: 'services/console/README.md policies and flows',
    title:
      'in the console: list, search, paging, create, edit draft, saved tests, publish or review, versions diff, delete, flow graph with a run’s path, audit view',
    coveredBy: [
      {
        file: `${E2E}/console/console.test.ts`,
        tests: [
          'saves a policy with a test, runs the tests, publishes it and runs it by base id',
          'shows a failing saved test as failed',
          'finds the policy in the list by name search',
          'shows an unknown policy as the API 404 detail, not a blank page',
          'draws a flow and highlights the path of a test run',
          'creates a flow, edits its definition as JSON and saves the draft',
          'pages through the policy list and the audit trail',
          'shows the audit trail to an admin, with filters',
        ],
      },
      {
        file: `${E2E}/console/console-review.test.ts`,
        tests: [
          'a publisher approves and publishes it',
          'a publisher rejects a later change with a comment, and the versions diff shows the change',
          'a viewer sees the policy without editing, publishing or deleting controls',
          'an admin deletes the policy; it leaves the list and the API answers 404',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#export-and-import import',
    title: 'POST /import (dry run: what would be created or conflict; else load keeping version numbers) and rules pull/push',
    coveredBy: [
      {
        file: `${E2E}/import.test.ts`,
        tests: [
          'dry run into org B lists what would be created and changes nothing',
          'imports into org B with new ids, versions, draft, tests, schema, remapped flow references and group members; runnable by new base ids',
          'importing the same bundle again duplicates nothing: every item is unchanged',
          'a live base of the same name is no conflict (names are labels, as at create); a real import with a conflict answers 409 listing them and changes nothing',
          'a flow naming a policy that is neither in the bundle nor in the org is a conflict naming it',
          'unhappy paths: no key 401, non-admin 403, malformed 400, wrong formatVersion 400, unknown key 400, too large 413; nothing changes',
          'pull writes one directory per policy and flow, push --dry-run prints the plan, push imports into another org',
          'prints the problem detail of an HTTP error, a missing key is a usage error, an empty directory imports nothing',
        ],
      },
      {
        file: `${REG}/import.test.ts`,
        tests: [
          'loads into the target org in one transaction, queues one `imported` event per base, remembers the origin',
          'a conflicting import writes nothing (no base, no record, no outbox row)',
          'imports in parts: a later part’s flow naming a policy of an earlier part resolves to the imported copy',
        ],
      },
      {
        file: `${REG}/import-plan.test.ts`,
        tests: [
          'creates every base and group with new ids, keeps versions and authors, remaps flow references and members',
          'a base imported before at the same version is unchanged and flows resolve to it; another version is a conflict',
        ],
      },
      {
        file: `${CLI}/bundle-files.test.ts`,
        tests: [
          'writes one directory per base, one .rule file per version and the draft, sorted JSON; reads back the same bundle',
          'refuses files that cannot be reassembled, naming the file',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#policies-and-flows groups on records',
    title: 'GET /policy/{id} and GET /flow/{id} (record or base id) carry the groups containing the base',
    coveredBy: [{ file: `${E2E}/import.test.ts`, tests: ['carry the live groups containing the base, by record id and by base id'] }],
  },
  {
    id: 'docs/architecture.md#batch-runs',
    title: 'POST /run/batch and the stored batch forms, item limits, rate limits per item',
    coveredBy: [
      {
        file: `${E2E}/batch-runs.test.ts`,
        tests: [
          'answers every item in order, each exactly what POST /run answers for it',
          'refuses more than RUN_BATCH_MAX_ITEMS items with 413, and bad calls as the single endpoint does',
          'counts every item in the rate limit: a key is refused once its items pass RATE_LIMIT_MAX',
          'answers each item as the single stored run does, by base, by version, and for flows',
        ],
      },
    ],
  },
  {
    id: 'docs/design/identity.md admin-issued first keys',
    title:
      'POST /users/{userId}/apikeys (admin): a key owned by a member, within its role, shown once, audited; admin create-key; console People page',
    coveredBy: [
      {
        file: `${GW}/issued-keys.test.ts`,
        tests: [
          'issues a key owned by the member, shown once, that acts as the member; audited as `key created` naming the issuer',
          'refuses scopes past the member role with 403 naming them; nothing is created',
          'answers 404 for an unknown user, another org’s member, and a removed member; nothing is created',
        ],
      },
      {
        file: `${GW}/admin-create-key.test.ts`,
        tests: ['prints a key owned by the member with every scope of the role, audited as issued by the command line'],
      },
      {
        file: `${E2E}/console/console-people.test.ts`,
        tests: [
          'issues alice a key within her role, shown once and copyable, that acts as alice',
          'revokes the key from the list: it stops working at once',
        ],
      },
    ],
  },
  {
    id: 'docs/operations.md#several-stacks-on-one-machine',
    title: 'the governance and audit databases follow DATABASE_URL (or their own URL settings): stacks side by side never share a trail',
    coveredBy: [
      {
        file: `${E2E}/side-by-side.test.ts`,
        tests: ['keep separate audit trails and governance databases, each beside its DATABASE_URL'],
      },
      {
        file: 'services/audit/test/config.test.ts',
        tests: ['follows DATABASE_URL, so stacks with different databases keep separate ones'],
      },
      {
        file: 'services/governance/test/config.test.ts',
        tests: ['follows DATABASE_URL, so stacks with different databases keep separate ones'],
      },
    ],
  },
  {
    id: 'docs/design/per-person-limits.md live keys per user',
    title: 'live API keys per user are capped (APIKEYS_PER_USER_MAX): 409 too_many_api_keys past it, race-safe',
    coveredBy: [
      {
        file: `${GW}/api-key-cap.test.ts`,
        tests: [
          '20 concurrent POST /apikeys of one user create exactly up to the cap; the rest are 409 and create nothing',
          '20 concurrent admin issues for one user never pass the cap',
        ],
      },
    ],
  },
  {
    id: 'CONTRIBUTING.md#habits docs kept true',
    title: 'every relative link and anchor of the Markdown resolves; docs/getting-started.md runs against a fresh stack',
    coveredBy: [
      {
        file: `${E2E}/docs-links.test.ts`,
        tests: ['resolves every relative link and anchor of the README, CONTRIBUTING, docs/ and the package READMEs'],
      },
      {
        file: `${E2E}/getting-started.test.ts`,
        tests: [
          'runs the ten lines of curl on a fresh stack, each output of the shape shown',
          'runs every shell block of getting-started after them, to a governed publish by two users, each output of the shape shown',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#export-and-import an export imports into an empty org',
    title: 'import takes names as create does (labels, not keys), so every export imports into an empty org',
    coveredBy: [
      {
        file: `${E2E}/getting-started.test.ts`,
        tests: ['round-trips the org they leave: its export, with two policies named "Driving licence", imports whole into an empty org'],
      },
      {
        file: `${REG}/import.test.ts`,
        tests: ['takes names as create does: two policies and two groups of one name, into an org holding a third, all created'],
      },
    ],
  },
  {
    id: 'docs/operations.md#readiness ready means every service answers',
    title: '`npm start` says ready only when every service answers on the bus; the gateway /readyz reports each dependency',
    coveredBy: [
      {
        file: `${E2E}/start-ready.test.ts`,
        tests: [
          'says ready only when every service answers: a /run sent right after it is 200',
          'reports each back-end service; only the required ones (GATEWAY_READY_SERVICES) decide its status',
        ],
      },
    ],
  },
  {
    id: 'docs/sdk.md#the-client',
    title:
      '@arbiter/sdk: one typed method per endpoint, cursor iterators, one ArbiterError per problem, time-outs, retries only where safe',
    coveredBy: [
      {
        file: `${E2E}/sdk-client.test.ts`,
        tests: [
          'creates, publishes, lists, runs and deletes through typed calls',
          '401: an unknown key',
          '403: a viewer creating a policy',
          '404: an unknown policy',
          '409: editing a published version',
          '413: a body over the limit',
          '422: a publish whose saved test fails, with its reasons',
          '429: refused with retry-after; the client waits for it and tries again, or throws when told not to',
          '503: a dependency down (the registry), and the client does not wait when told not to retry',
        ],
      },
      {
        file: `${SDK}/transport.test.ts`,
        tests: ['a 429 is sent again after its retry-after, whatever the method', 'a 503 is retried for GETs and runs, never for changes'],
      },
      { file: `${SDK}/boundary.test.ts`, tests: ['bundles for the browser with esbuild'] },
      {
        file: `${E2E}/sdk-pack.test.ts`,
        tests: ['installs from its tarballs into an empty folder and runs the docs example against a stack'],
      },
    ],
  },
  {
    id: 'docs/sdk.md#local-evaluation',
    title:
      'local runs answer byte-identically to /run/policy and /run/flow, from runnable records kept in sync by GET /runnable and its change feed',
    coveredBy: [
      {
        file: `${E2E}/sdk-parity.test.ts`,
        tests: [
          'every case with data answers the same locally and through POST /run/policy/{baseId}',
          'every policy fixture answers the same locally and through the service, refusals included',
          'every flow fixture answers the same locally and through the service',
        ],
      },
      {
        file: `${E2E}/sdk-sync.test.ts`,
        tests: [
          'follows a publish, a draft edit of a never-published base, a delete and a restore',
          'keeps answering from the last revision, says how stale it is, and catches up when the gateway is back',
          'a revoked key stops the sync with an ArbiterError the caller observes; runs keep the last state',
        ],
      },
      { file: `${REG}/runnable-sync.test.ts`, tests: ['moves with what a run would run, and only with that'] },
      {
        file: `${GW}/runnable-routes.test.ts`,
        tests: ['answers the selection at the org revision, with an ETag that 304s until something changes'],
      },
      { file: `${SDK}/state.test.ts`, tests: ['a flow run keeps the state it started with while a new one is swapped in'] },
    ],
  },
  {
    id: 'docs/sdk.md#what-is-reported',
    title: 'local runs come back as aggregated executed events (via sdk), retried, bounded, never blocking a run',
    coveredBy: [
      { file: `${E2E}/sdk-sync.test.ts`, tests: ['reports its runs: executed events via sdk add up to them, by outcome'] },
      {
        file: `${REG}/runnable-sync.test.ts`,
        tests: ['become `executed` events via sdk, once per report however often it is sent; foreign records are left out'],
      },
      {
        file: `${SDK}/reporter.test.ts`,
        tests: ['while the service is away, keeps at most maxPending reports (oldest dropped) and never blocks counting'],
      },
    ],
  },
  {
    id: 'docs/performance.md hot path',
    title:
      'one framing and queue path for all evaluations; raw answers forwarded; one Redis round trip and one deadline timer per turn/process',
    coveredBy: [
      {
        file: `${EXEC}/eval.test.ts`,
        tests: [
          "answers one turn's evaluations of several callers in order, as one message and one worker task",
          'runs 1,000 items of one key as 4 messages of at most 256: all answered, in order, bad items alone, in few tasks',
        ],
      },
      { file: `${KIT}/frame.test.ts`, tests: ['carries items as raw JSON slices after a one-line header, never as JSON text inside JSON'] },
      { file: `${KIT}/request-mux.test.ts`, tests: ['keeps one deadline timer for all requests in flight, not one per request'] },
      {
        file: `${GW}/http-conventions.test.ts`,
        tests: ["authenticates and counts one turn's API-key requests, of several keys, with one Redis command, each with its own count"],
      },
    ],
  },
  {
    id: 'docs/design/trace-switch.md',
    title: 'POST /run and /run/batch take "trace": false, the other run routes ?trace=false: "trace": [] and otherwise the same bytes',
    coveredBy: [
      {
        file: `${E2E}/trace-switch.test.ts`,
        tests: [
          'answers every run route without traces when asked, otherwise byte for byte the traced answer',
          'takes `?trace=true` (and `"trace": true`) as the default, and refuses anything else with 400',
          'is documented in the OpenAPI document: a body field of /run and /run/batch, a query parameter of the other run routes',
        ],
      },
      {
        file: `${EXEC}/eval.test.ts`,
        tests: ['answers raw JSON in the contract key order, trace on or off, with nothing but the contract fields'],
      },
    ],
  },
  {
    id: 'docs/design/per-person-limits.md',
    title: 'rate limits, fair-queue shares and in-flight caps count per person (key owner, bearer user) as well as per key',
    coveredBy: [
      {
        file: `${GW}/http-conventions.test.ts`,
        tests: [
          "counts a person's requests over all their keys and their bearer token (RATE_LIMIT_PERSON_MAX), other persons unaffected",
          "counts a batch call's items for the person too: a second key of the same person is refused past the person's limit",
        ],
      },
      {
        file: `${EXEC}/fair-queue.test.ts`,
        tests: [
          "gives a person one share over all their keys: five keys' jobs take turns with another person's one",
          'counts evaluations in progress per person across keys (perPersonMax)',
          'bounds the items a key, a person and everyone may have in progress, and frees them when a job is over',
        ],
      },
    ],
  },
  {
    id: 'docs/design/fair-scheduling.md batch flood',
    title: "work whose caller has gone is dropped before it runs; a batch's items charged at their cost; tasks stay short",
    coveredBy: [
      {
        file: `${E2E}/fairness.test.ts`,
        tests: ['is dropped, not run: a 1,000-item batch of slow items answers timeout per item and the execution service stops with it'],
      },
      {
        file: `${EXEC}/eval.test.ts`,
        tests: [
          'drops the items of a caller who stopped waiting before they could start: answered timeout, never run',
          'does not run the items whose answers cannot fit in the reply: they answer result_too_large, unrun',
        ],
      },
      {
        file: `${EXEC}/fair-queue.test.ts`,
        tests: [
          'drops the items of a job whose deadline passed before they started, and runs none of them',
          'keeps a person with slow items from filling a task others wait in: tasks stay near their target',
        ],
      },
    ],
  },
  {
    id: 'docs/design/decision-records.md',
    title:
      'stored runs recorded (masked, bounded), drops counted in a metric and the base stats, ingest exactly once under kill -9, impact analysis of policies and flows',
    coveredBy: [
      {
        file: `${E2E}/decisions.test.ts`,
        tests: [
          'records stored runs with the org masks and the base masks applied, readable by admins and auditors',
          'answers 503 dependency_unavailable while the audit service is down, runs still answering 200',
          "exposes the ingest lag of the stored decisions on the audit service's /metrics",
        ],
      },
      {
        file: `${E2E}/decision-drops.test.ts`,
        tests: ["counts the records a full outbox dropped in the metric and in the base's stats: stored + dropped = runs"],
      },
      { file: `${E2E}/faults/decision-ingest.test.ts`, tests: ['stores every decision of the outbox exactly once: 0 lost, 0 duplicated'] },
      {
        file: `${E2E}/impact.test.ts`,
        tests: ['counts exactly the decisions between the old and the new threshold as changed, and keeps the report for the draft'],
      },
      {
        file: `${E2E}/flow-impact.test.ts`,
        tests: [
          'counts exactly the decisions between the old and the new threshold of its policy as changed, with their paths, and keeps the report for the draft',
          'counts decisions whose replay reads a masked value, in a table node or a policy node, as unreplayable',
        ],
      },
    ],
  },
  {
    id: 'docs/decisions.md#impact-analysis in the console and the SDK',
    title:
      "the review view shows a draft's impact report (counts, transitions, examples before/after, stale or none) with Run impact analysis for who may run it; the SDK's policies.impact and flows.impact",
    coveredBy: [
      {
        file: `${E2E}/console/console-review.test.ts`,
        tests: [
          'a publisher runs it on a submitted draft that moves the threshold and sees the API’s report: counts and transitions; an admin also sees the examples side by side',
          'a viewer sees the report, and the run button disabled with the reason',
          'an edit of the draft makes the report stale; the editor runs it again',
          'a draft whose base has no recorded decisions gets a report of 0 replayed, with a hint',
        ],
      },
      {
        file: 'services/console/test/impact.test.ts',
        tests: [
          'lets editors, publishers and admins run it; tells a viewer, an auditor and a key without `edit` why not',
          'shows the summary’s report; a report that disappears after an edit is stale, never absent',
        ],
      },
      {
        file: `${E2E}/sdk-impact.test.ts`,
        tests: [
          'replays the recorded decisions through a draft and answers the typed report; limit and from/to are sent',
          'throws the refusals as ArbiterError: a viewer 403, an unknown record 404, a limit over 10,000 400',
        ],
      },
      {
        file: `${SDK}/client-options.test.ts`,
        tests: ['posts the options to /policy/{id}/impact and /flow/{id}/impact, and retries a 503 as a run is'],
      },
    ],
  },
  {
    id: 'docs/webhooks.md webhooks',
    title:
      'org admins register endpoints (secret shown once); events delivered signed (Standard Webhooks), at least once, retried, 410 and a whole failing window disable; private addresses refused; rotation overlap; SIGKILL loses nothing',
    coveredBy: [
      {
        file: `${E2E}/webhooks.test.ts`,
        tests: [
          'delivers a change signed, with the event as GET /audit shows it; rotation, ping, deliveries and audit',
          "refuses a key without `admin`, hides an org's endpoints from another org, and answers a bad URL with a clear 400",
        ],
      },
      {
        file: `${E2E}/faults/webhooks.test.ts`,
        tests: ['delivers every event at least once across a SIGKILL of the service and a receiver outage'],
      },
      {
        file: 'services/webhooks/test/delivery.test.ts',
        tests: [
          'retries a receiver answering 500 with backoff until it answers 2xx, every attempt kept',
          'disables an endpoint answering 410 at once and records `webhook disabled`',
          'gives a delivery up after the retry window and disables an endpoint failing for all of it',
          'a receiver that never answers holds only its own endpoint: another gets every event meanwhile',
          'signs with both secrets during a rotation, so a receiver holding either verifies',
          'refuses to deliver to a private address unless allowed: the attempt is recorded, the receiver never hit',
        ],
      },
      {
        file: 'services/webhooks/test/manage.test.ts',
        tests: [
          'refuses viewers, editors, publishers, auditors and admin keys without the admin scope; another org sees nothing',
          'answers a bad or refused URL with a clear 400 and creates nothing',
        ],
      },
    ],
  },
  {
    id: 'docs/api.md#static-checks',
    title:
      'policy static checks (constant_condition, contradiction) as warnings with line, column and text: rules check, /validate, policy save answers; decision-table findings in flow save answers; never blocking; bounded work',
    coveredBy: [
      {
        file: `${LANG}/policy-checks.test.ts`,
        tests: ['constant_condition', 'contradiction', 'says the checks are incomplete when the work bound stops them'],
      },
      { file: `${REG}/static-checks.test.ts`, tests: ['registry.policy.checks', 'registry.flow.checks'] },
      {
        file: `${GW}/registry-routes.test.ts`,
        tests: ['static checks in the answers of policy and flow saves', 'POST /validate with the registry'],
      },
      { file: `${CLI}/cli-unit.test.ts`, tests: ['prints static-check warnings with their place on stderr, after ok, and still exits 0'] },
      { file: `${E2E}/static-checks.test.ts`, tests: ['static checks'] },
    ],
  },
  {
    id: 'docs/decisions.md#saved-tests-from-decisions',
    title:
      "a recorded decision's masked input and answer saved as a test of the base's draft (made from the latest version); edit and audit rights; other base and errors refused",
    coveredBy: [
      { file: `${E2E}/tests-from-decision.test.ts`, tests: ['tests from decisions'] },
      { file: `${GW}/tests-from-decisions.test.ts`, tests: ['testFromDecision'] },
    ],
  },
  {
    id: 'docs/decisions.md#reasons',
    title:
      'records keep the reasons of runs that asked for them, masked like the input (entry values and the sentence), none for runs that did not; audit readers only; impact examples say why before and after',
    coveredBy: [
      { file: `${E2E}/decision-reasons.test.ts`, tests: ['reasons in decision records', 'impact analysis examples'] },
      { file: `${EXEC}/reason-masks.test.ts`, tests: ['maskReasons', 'pathSegments'] },
      { file: 'services/governance/test/impact-report.test.ts', tests: ['why each example came out'] },
    ],
  },
  {
    id: 'docs/decisions.md#recorded-decisions-in-the-console',
    title:
      "the console shows a run's reasons (sentence, deciding conditions green and red, a table's deciding rows and cells) and a base's recorded decisions with Save as test for edit and audit",
    coveredBy: [{ file: `${E2E}/console/console-decision-reasons.test.ts`, tests: ['reasons of a run', 'recorded decisions'] }],
  },
  {
    id: 'docs/api.md#staged-rollouts',
    title:
      'a publish with `rollout` sends a share of the runs by base id to the new version by a stable hash of the value at `by` (service and SDK alike); widen, promote, roll back by publishers; governed orgs through review; an error guard rolls back by itself',
    coveredBy: [
      {
        file: `${E2E}/rollout.test.ts`,
        tests: [
          'sends 10 % ± 1 % of 10,000 distinct customers to the new version, the same customer always to the same one',
          'shows its state to members, refuses bad shares, other roles and a second publish, and changes nothing when refused',
          'rolls back: the previous version serves all, the new one stays in history; then nothing to promote',
          'rolls a new version that errors back by itself, with a `guard` event',
          'starts a rollout only with the approved, unchanged review',
        ],
      },
      {
        file: `${E2E}/sdk-parity.test.ts`,
        tests: ['a base in a staged rollout answers the same version and bytes locally and through the service, per customer and per flow'],
      },
      { file: `libs/run/test/rollout.test.ts`, tests: ['sends the same value to the same version, and the share asked for'] },
    ],
  },
];

/** Requirements without a test yet. The test prints this list; it is not a place to hide failures. */
export const KNOWN_GAPS: readonly KnownGap[] = [];
