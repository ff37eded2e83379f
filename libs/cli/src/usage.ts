/** Help texts of the `rules` CLI. */

const EXIT_CODES = `Exit codes:
  0  done (eval: the policy was evaluated, whatever the result; check: valid; test: all passed)
  1  the rule does not parse, or (test) a case failed
  2  usage error: bad arguments, unreadable file, input that is not the JSON expected
  70 internal error (a bug; please report it)`;

/** `rules --help`. */
export const MAIN_USAGE = `Usage: rules <command> [options]

Commands:
  eval    evaluate a rule file against a data file, or JSON lines from stdin (--jsonl)
  check   check a rule file for syntax and static errors
  test    run saved cases against a rule file
  pull    write an org's policies, flows and groups into a directory (GET /export)
  push    load a pulled directory into an org (POST /import), or plan it (--dry-run)
  help    show help for a command (rules help <command>)

Run \`rules <command> --help\` for a command's options.

${EXIT_CODES}
`;

/** Help of each command, by name. */
export const COMMAND_USAGE: Readonly<Record<'eval' | 'check' | 'test' | 'pull' | 'push', string>> = {
  eval: `Usage: rules eval --rule FILE --data FILE [--now ISO] [--step-budget N] [--no-trace] [--reasons]
       rules eval --bundle DIR --base ID --data FILE [--as-of ISO] [--now ISO] [--step-budget N] [--no-trace] [--reasons]
       rules eval --jsonl [--now ISO] [--step-budget N] [--no-trace] [--reasons] < requests.jsonl

Evaluates a policy and prints {result, outcomes, trace, error?, errorCode?, reasons?} as JSON.

With --bundle DIR --base ID, the policy (or flow) is one of a directory \`rules pull\` wrote, run
by its base id as the service runs it: the version in effect at --as-of, else at --now, else now (a
version scheduled for later, or cancelled, does not run before its instant; a base never published
runs its draft), evaluated with --now, else --as-of, as the clock. The JSON also names the record
that ran (policyId, baseId, version), as the service does. A flow prints the service's flow answer
{result, path, nodes, error?, errorCode?} with flowId, baseId and version; its policy nodes run the
pulled policy each names, a node following a base its version in effect at the same instant; exit 1
when the flow stops on an error.

Options:
  -r, --rule FILE   the rule text (- reads stdin)
  -d, --data FILE   the data: one JSON object (- reads stdin)
      --now ISO     the clock for date operators, e.g. 2025-01-31 or 2025-01-31T12:00:00Z
                    (default: the current time; with --bundle and no --as-of, also the
                    instant whose version runs)
      --bundle DIR  a pulled directory (rules pull) holding the policy or flow
      --base ID     the policy's or flow's base id in it
      --as-of ISO   with --bundle: run the version in effect at this instant (and evaluate
                    at it unless --now is given)
      --step-budget N
                    steps an evaluation may take before it stops with errorCode
                    budget_exceeded (default 1000000, or 10000 with a trace)
      --no-trace    leave the trace empty (faster)
      --reasons     add "reasons": why the result came out, in the rule's own words
                    (the deciding conditions and a sentence; LANGUAGE.md §10.4)
      --jsonl       read {"rule": "...", "data": {...}} per stdin line; write one result per
                    line {result, outcomes, trace, error, errorCode} (error/errorCode null when
                    absent). A bad line is answered with errorCode "bad_input" and an error
                    naming the line; blank lines are skipped. Exit 0 once stdin ends.
  -h, --help        show this help

Exit codes:
  0  the policy was evaluated (result true or false; missing data is reported in the JSON
     with errorCode missing_selector / missing_property / budget_exceeded)
  1  the rule does not parse (the JSON with errorCode parse_error is still printed)
  2  usage error: bad arguments, unreadable file, data that is not a JSON object; with
     --bundle also a base not in the directory, or an instant before its first version
`,
  check: `Usage: rules check FILE

Checks a rule file (syntax and static checks, no data needed). Prints "ok", or the parse
error (Parse error: line L, column C: ...) on stderr. FILE may be - for stdin.
A valid rule may get warnings on stderr (warning[contradiction]: ..., warning[constant_condition]: ...,
each with its line and column); they do not change the exit code.

Exit codes:
  0  the rule is valid (warnings or not)
  1  the rule does not parse
  2  usage error: bad arguments, unreadable file
`,
  test: `Usage: rules test FILE --cases FILE [--now ISO] [--step-budget N] [--verbose] [--coverage [--min N]] [--json]
       rules test FLOW.json [--cases FILE] [--bundle DIR] [--version N] [--now ISO] [--coverage [--min N]] [--json]

Runs saved cases against a rule file. The cases file is a JSON array:
  [{"name": "adult guest", "data": {...}, "expect": true},
   {"name": "no email", "data": {...}, "expect": {"result": false, "errorCode": "missing_property"}}]
"expect" is a boolean (the result only) or {"result": boolean, "errorCode"?: string | null}
(null: the evaluation must have no error). A case may carry its own "now" (ISO 8601).
Prints one line per case (✓ name / ✗ name: expected ..., got ...) and "N passed, M failed".

A FILE ending in .json is a flow: a pulled flow.json (its draft, else its latest version, or
--version N) or a bare definition {"start", "nodes"}. Its cases are [{"name", "data", "expect"}]
with "expect" the flow's result (a boolean, a string or a table's output, compared deeply); without
--cases the tested record's saved tests run. Policy nodes run the policies of the pulled directory
(--bundle DIR, else the directory FLOW.json was pulled into: DIR/flows/<name>/flow.json), as a run
by base id would: the pinned version, else the latest version, else the draft.

Options:
  -c, --cases FILE  the cases (JSON array)
      --now ISO     the clock for cases without their own "now" (default: the current time)
      --step-budget N
                    steps each case may take (default 1000000, with or without --verbose)
  -v, --verbose     print the trace under each failing case
      --coverage    also print what the cases cover: each condition seen both true and false,
                    each quantifier holding and failing, each rule reference followed (a
                    condition seen one way counts half), and every part not covered, with its
                    line and column; for a flow, each decision-table row matched and each
                    edge (node to node) taken, and every row and edge not covered
      --bundle DIR  a flow: the pulled directory its policy nodes are found in
      --version N   a flow: test version N of the pulled flow.json instead of its draft
      --min N       with --coverage: fail (exit 1) when coverage is below N %
      --json        print one JSON document: {passed, failed, cases, coverage?}
  -h, --help        show this help

Exit codes:
  0  every case passed (and coverage reached --min)
  1  a case failed, coverage is below --min, or the rule does not parse
  2  usage error: bad arguments, unreadable file, malformed cases file
`,
  pull: `Usage: rules pull --url URL [--key KEY] [--dir DIR]

Writes the org's bundle (GET /export, admin) into DIR (default: rules) as files Git can diff:
  arbiter-bundle.json                the format and the source org
  policies/<name>-<id>/policy.json   each policy with its versions, draft, tests and schema;
  policies/<name>-<id>/v1.rule …     the rule text of each version and of the draft (draft.rule)
  flows/<name>-<id>/flow.json        each flow with its versions and draft
  groups.json                        the groups and their members
JSON keys are sorted. DIR must be empty or an earlier pull (whose files are replaced).

Options:
      --url URL   the gateway, e.g. http://localhost:3000
      --key KEY   an admin API key (default: the ARBITER_API_KEY environment variable)
      --dir DIR   the directory (default: rules)
  -h, --help      show this help

Exit codes:
  0  pulled
  1  the gateway refused (its problem detail is printed) or could not be reached
  2  usage error: bad arguments, no API key
`,
  push: `Usage: rules push --url URL [--key KEY] [--dir DIR] [--dry-run]

Reads a pulled directory back into a bundle and loads it into the key's org (POST /import,
admin). Each policy, flow and group is created (new ids), unchanged (imported before at the
same version), or a conflict (e.g. a live policy of that name); any conflict refuses the
whole import. Prints one line per item and a summary.

Options:
      --url URL   the gateway, e.g. http://localhost:3000
      --key KEY   an admin API key (default: the ARBITER_API_KEY environment variable)
      --dir DIR   the directory (default: rules)
      --dry-run   print what would happen; change nothing
  -h, --help      show this help

Exit codes:
  0  imported (or, with --dry-run, nothing conflicts)
  1  conflicts, a refusal of the gateway (its problem detail is printed), or no answer
  2  usage error: bad arguments, no API key
`,
};
