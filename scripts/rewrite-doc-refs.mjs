#!/usr/bin/env node
// Rewrites references to documents the repository does not hold — the design notes and the product
// spec the project started from, a style guide, and issue numbers — into references to the
// repository's own docs (docs/design/*.md, docs/*.md, package READMEs), or into the reason in words.
// test/e2e/doc-refs.test.ts fails on any such reference left; run this after merging branches that
// add comments, then read the diff and hand-edit what it lists as left over.
//
//   node scripts/rewrite-doc-refs.mjs           rewrite in place, list what is left
//   node scripts/rewrite-doc-refs.mjs --check   change nothing; exit 1 when something would change
//
// Idempotent: a rewritten text no longer matches any rule. CHANGELOG.md is history and is left
// alone. This file has to name what it rewrites, so the test does not scan it.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');

const DESIGN = ['DESIGN', 'md'].join('.');
const STYLE = ['STYLE', 'md'].join('.');
const SPEC = ['spec', '§'].join(' ');
const ISSUE = ['[Ii]ssue', 's?'].join('');

/** Files never rewritten: history, and the two files that must name the patterns. */
const SKIP = new Set(['CHANGELOG.md', 'scripts/rewrite-doc-refs.mjs', 'test/e2e/doc-refs.test.ts', 'package-lock.json']);
const TEXT =
  /\.(?:ts|tsx|mts|cts|js|mjs|cjs|json|md|ya?ml|sh|sql|g4|conf|html|css|example)$|(?:^|\/)(?:Dockerfile|\.gitignore|\.dockerignore|\.prettierignore|\.editorconfig|\.ci\/run)$/;

// ---- Where each section of the old notes is stated in the repository ---------------------------

/** Sections of the architecture notes with one topic each. */
const DESIGN_SECTIONS = {
  1: 'docs/architecture.md',
  2: 'docs/design/bus.md',
  3: 'docs/design/identity.md',
  4: 'docs/api.md#conventions',
  5: 'docs/api.md#policies-and-flows',
  6: 'docs/api.md#policies-and-flows',
  7: 'docs/design/events-and-audit.md',
  8: 'services/mcp/README.md',
  9: 'CONTRIBUTING.md#habits',
};

/** Sections listing several decisions: the line's words pick the one meant (first match), else the map above. */
const DESIGN_TOPICS = {
  5: [[/review/i, 'docs/api.md#governance-review']],
  10: [
    [/key/i, 'docs/design/identity.md'],
    [/budget/i, 'docs/design/fair-scheduling.md'],
    [/batch/i, 'docs/architecture.md#batch-runs'],
    [/review|governance|publish/i, 'docs/design/governance.md'],
    [/kind|audit|event/i, 'docs/design/events-and-audit.md'],
    [/metrics|ops port|operations/i, 'docs/operations.md#health-metrics-and-alerts'],
  ],
  11: [
    [/trace/i, 'docs/design/trace-switch.md'],
    [/table/i, 'docs/design/tables.md'],
    [/CPU|cost/i, 'docs/performance.md#method'],
    [/person|limit|share/i, 'docs/design/per-person-limits.md'],
    [/key/i, 'docs/design/identity.md'],
    [/decision record/i, 'docs/design/decision-records.md'],
    [/sdk|runnable|local/i, 'docs/sdk.md'],
    [/governed|review/i, 'docs/design/governance.md'],
  ],
};

/** Sections of the product spec: the repository doc that states the same thing. */
const SPEC_SECTIONS = {
  1: 'README.md',
  2.1: 'docs/api.md#policies-and-flows',
  2.2: 'docs/api.md#policies-and-flows',
  2.3: 'docs/api.md#governance-review',
  2.4: 'docs/api.md#policies-and-flows',
  2.5: 'docs/api.md#users-and-keys',
  2.6: 'docs/api.md#evaluate-rules',
  2.7: 'docs/LANGUAGE.md',
  3: 'docs/api.md#governance-review',
  4: 'docs/api.md',
  4.1: 'docs/api.md#policies-and-flows',
  4.2: 'docs/api.md#policies-and-flows',
  4.3: 'docs/api.md#evaluate-rules',
  4.4: 'docs/api.md#policies-and-flows',
  4.5: 'docs/api.md#policies-and-flows',
  4.6: 'docs/api.md#audit-trail',
  4.7: 'docs/api.md#mcp-rules-for-ai-agents',
  5: 'docs/api.md#authentication-and-roles',
  5.1: 'docs/api.md#authentication-and-roles',
  5.2: 'docs/api.md#mcp-rules-for-ai-agents',
  6: 'docs/api.md#audit-trail',
  7: 'docs/errors.md',
  8: 'docs/api.md#limits-on-what-a-request-may-carry',
  9: 'docs/api.md#policies-and-flows',
};

/** The MCP tools' shapes are the language reference's. */
const TOOL_SECTIONS = { validate_rule: '12.1', explain_rule: '12.2', list_operators: '12.3' };

// ---- Rules ---------------------------------------------------------------------------------------

const unique = (xs) => [...new Set(xs)];

/** `§2.6, §7` / `§4.1/4.2/4.4` / `§4.1–§4.2` / `§3 and §4.1` → the section numbers. */
function sectionsOf(list) {
  return list.match(/\d+(?:\.\d+)?/g) ?? [];
}

function designDoc(section, line) {
  for (const [words, doc] of DESIGN_TOPICS[section] ?? []) if (words.test(line)) return doc;
  return DESIGN_SECTIONS[section] ?? null;
}

const SECTION_LIST = String.raw`§\d+(?:\.\d+)?(?:(?:[/–-]§?|, §| and §)\d+(?:\.\d+)?)*`;
const ISSUE_TAIL = String.raw`\d+(?:(?:, | and )\d+)*(?: items? \d+(?:(?:, | and |–)\d+)*| #\d+(?:(?:, |–| and )#?\d+)*| defect \d+| reproduction| follow-up)?`;

/**
 * Exact texts whose meaning needs more than a section map: rewritten first, as whole phrases. Each is
 * [old, new]; both sides are built so that the new one never matches an old one.
 */
const PHRASES = [
  // Markdown: links, not paths (first: later phrases would take parts of these).
  [`see ${DESIGN} §4.)`, 'see [the API conventions](api.md#conventions).)'],
  [`(sent as \`?trace=false\`, ${DESIGN} §11)`, '(sent as `?trace=false`; [design/trace-switch.md](design/trace-switch.md))'],
  [
    `The review workflow of ${SPEC}3 and §4.1–§4.2 (issue 11, ${DESIGN} §5 Review):`,
    'The review workflow ([docs/api.md](../../docs/api.md#governance-review), [docs/design/governance.md](../../docs/design/governance.md)):',
  ],
  [`Arbiter rules (${SPEC}4.7, ${DESIGN} §8).`, 'Arbiter rules ([docs/api.md](../../docs/api.md#mcp-rules-for-ai-agents)).'],
  [`## Authentication (${SPEC}5.2)`, '## Authentication'],
  [`(\`BODY_LIMIT_BYTES\`, ${SPEC}5.2)`, '(`BODY_LIMIT_BYTES`, [docs/configuration.md](../../docs/configuration.md#gateway))'],
  // Sections with a qualifier, lists the section map cannot split, and sentences that name the notes.
  [`${DESIGN} §5 Review`, 'docs/design/governance.md'],
  [`${DESIGN} §5–§7`, 'docs/api.md#policies-and-flows, docs/design/events-and-audit.md'],
  [`${DESIGN} §1 and §4 limits`, 'docs/configuration.md#execution, docs/api.md#limits-on-what-a-request-may-carry'],
  [`(${DESIGN} §1, §8)`, '(docs/configuration.md#mcp)'],
  [
    `isolates stacks sharing one NATS (${DESIGN} §1)`,
    'isolates stacks sharing one NATS (docs/operations.md#several-stacks-on-one-machine)',
  ],
  [`never\n * share them (${DESIGN} §11)`, 'never\n * share them (docs/operations.md#several-stacks-on-one-machine)'],
  [`${DESIGN} §4's evaluation time-out`, 'the evaluation time-out of docs/configuration.md#registry'],
  [
    `applies the ${DESIGN} defaults to an empty environment`,
    'applies the documented defaults (docs/configuration.md) to an empty environment',
  ],
  [`the bare hops of ${DESIGN}`, 'the bare hops of docs/architecture.md'],
  [`creates a draft with the record shape of ${DESIGN} §5`, 'creates a draft with the record shape of docs/api.md (policies and flows)'],
  [`describe('test habits (${DESIGN} §9)'`, `describe('test habits (CONTRIBUTING.md#habits)'`],
  [`describe('${SPEC}3 transitions (governance on)'`, `describe('review transitions (governance on)'`],
  [`(${STYLE} §2, issue 2: "no I/O")`, '(the language library does no I/O: docs/architecture.md#the-rule-engine)'],
  [`(${DESIGN} §5, ${SPEC}2.2, §3 without governance, §4.1/4.2/4.4, §9)`, '(docs/api.md#policies-and-flows)'],
  [`The review endpoints of ${SPEC}4.1/§4.2 (issue 11),`, 'The review endpoints (docs/api.md#governance-review),'],
  [`(${SPEC}4.7, LANGUAGE.md`, '(LANGUAGE.md'],
  [`in the shapes of the service ${SPEC}4.7.`, 'in the shapes of docs/LANGUAGE.md §11–§12.'],
  [
    `the spec's nine strings (${SPEC}6, ${DESIGN} §7), then the identity and\n * lifecycle kinds of ${DESIGN} §10`,
    'the nine kinds of changes and runs, then the identity and\n * lifecycle kinds (docs/design/events-and-audit.md, docs/design/identity.md)',
  ],
  [
    'history an [impact analysis](#impact-analysis) replays a draft against. Issue 23.',
    'history an [impact analysis](#impact-analysis) replays a draft against. The decision behind them: [design/decision-records.md](design/decision-records.md).',
  ],
  ['measures the targets of issue 23 against', 'measures the decision-record targets against'],
  ['### Node.js 20 and 24 (`bench:http`, issue 25)', '### Node.js 20 and 24 (`bench:http`)'],
  ['| issue 14, `npm run bench:http` with alternating rounds', '| coalescing on the bus, `npm run bench:http` with alternating rounds'],
  ['| issue 14 follow-up (2026-11-23, after 17:00', '| batch items as one job per message (2026-11-23, after 17:00'],
  [
    '| issue 14, the whole `npm run bench:http` on the merged code',
    '| coalescing and batch jobs, the whole `npm run bench:http` on the merged code',
  ],
  ['| the same, issue 14 follow-up (mcp path', '| the same, after the batch-job change (mcp path'],
  ['| stored vs ad hoc, issue 14 follow-up (', '| stored vs ad hoc, after the batch-job change ('],
  // Issue numbers said as a noun in a sentence: the reason in words instead.
  ['sends the issue-13 runaway rule back to back', 'sends a runaway rule back to back'],
  ["The gateway's issue-19 estimate of", "The gateway's earlier estimate of"],
  ['The issue-19 target (25× at 100 items)', 'The batch target first set (25× at 100 items)'],
  ["and the ratios of issue 19's targets.", 'and the ratios of the hot-path targets (bench/RESULTS.md).'],
  ["the figure of issue 19's target", 'the batch size of the hot-path target'],
  ['The trace switch (issue 19): measured', 'The trace switch (docs/design/trace-switch.md): measured'],
  [
    'the ratios against the targets of issue 2, and',
    'the ratios against the language targets (docs/performance.md#the-rule-language-benchmark), and',
  ],
  ['// Ratios against the targets of issues 2 and 22.', '// Ratios against the language and SDK targets (docs/performance.md).'],
  ['Targets (issue 24): Arbiter', 'Targets (docs/tables.md#performance): Arbiter'],
  ['the circle of issue 21 ran through one.', 'an import circle once ran through one.'],
  ['the edge defects of issue 13 (#6–#12, #14)', 'the edge defects (bad input at the HTTP edge, oversized and forged values)'],
  [
    'The fault suite (issue 13, issue 20 item 15), printed as one table.',
    'The fault suite (docs/operations.md#outages-of-postgresql), printed as one table.',
  ],
  ['Until the run routes take `?trace=false` (issue 19) they', 'Until the run routes take `?trace=false` they'],
  [' (issue 4 items\n * 2, 6, 7 and 8)', '\n *'],
  ["The review view's impact analysis\n * (issue 23): a publisher", "The review view's impact analysis:\n * a publisher"],
  [
    '`POST /flow/{flowId}/impact` (issue 23,\n * docs/decisions.md#impact-analysis):',
    '`POST /flow/{flowId}/impact`\n * (docs/decisions.md#impact-analysis):',
  ],
  // test/e2e/requirements.ts: what the manifest is checked against.
  [
    `Every section of the product spec (spec/service-spec.md) and every decision of ${DESIGN}, with\n * the tests that cover it`,
    'Every requirement the docs state (each id names the doc first: docs/api.md, docs/design/*.md, …),\n * with the tests that cover it',
  ],
  [
    '`spec §4.3` or `design §10 keys that make keys`: unique.',
    '`docs/api.md#evaluate-rules stored runs`: the doc that states it, then a topic; unique.',
  ],
  [`(the spec leaves them open; DESIGN §4 fixes them)`, '(docs/api.md#limits-on-what-a-request-may-carry)'],
  [
    `// ---- ${DESIGN} ------------------------------------------------------------------------------`,
    '// ---- docs/design/ and the other docs -----------------------------------------------------------',
  ],
];

/** Requirement ids of test/e2e/requirements.ts: the doc that states each requirement, then its topic. */
const REQUIREMENT_IDS = {
  'spec §1': 'README.md what the service does',
  'spec §2.1': 'docs/api.md#policies-and-flows identifiers',
  'spec §2.2': 'docs/api.md#policies-and-flows records and visibility',
  'spec §2.3': 'docs/api.md#governance-review review summary',
  'spec §2.4': 'docs/api.md#policies-and-flows groups',
  'spec §2.5': 'docs/api.md#users-and-keys',
  'spec §2.6': 'docs/api.md#evaluate-rules',
  'spec §2.7': 'docs/LANGUAGE.md',
  'spec §3 publish without governance': 'docs/api.md#policies-and-flows publish without governance',
  'spec §3 draft update and delete': 'docs/api.md#policies-and-flows draft update and delete',
  'spec §3 GET draft': 'docs/api.md#policies-and-flows GET draft',
  'spec §3 governance': 'docs/api.md#governance-review transitions',
  'spec §4.1': 'docs/api.md#policies-and-flows policy endpoints',
  'spec §4.2': 'docs/api.md#policies-and-flows flow endpoints',
  'spec §4.1/§4.2 review endpoints': 'docs/api.md#governance-review review endpoints',
  'spec §4.3': 'docs/api.md#evaluate-rules stored runs',
  'spec §4.4': 'docs/api.md#policies-and-flows delete',
  'spec §4.5': 'docs/api.md#policies-and-flows group endpoints',
  'spec §4.6': 'docs/api.md#audit-trail',
  'spec §4.7': 'docs/api.md#mcp-rules-for-ai-agents',
  'spec §5': 'docs/api.md#authentication-and-roles',
  'spec §6 published so far': 'docs/api.md#audit-trail event kinds',
  'spec §6 review events': 'docs/api.md#audit-trail review events',
  'spec §7': 'docs/errors.md',
  'spec §8': 'docs/api.md#limits-on-what-a-request-may-carry',
  'spec §9': 'docs/api.md#policies-and-flows versions',
  'design §1 shape': 'docs/architecture.md shape',
  'design §1 every service': 'docs/operations.md#health-metrics-and-alerts every service',
  'design §1 test servers': 'CONTRIBUTING.md#tests test servers',
  'design §1 failures of the servers': 'docs/operations.md#outages-of-postgresql failures of the servers',
  'design §1 operations': 'docs/operations.md',
  'design §2': 'docs/design/bus.md',
  'design §3': 'docs/design/identity.md',
  'design §4': 'docs/api.md#conventions',
  'design §5': 'docs/api.md#policies-and-flows records, drafts and versions',
  'design §5 review': 'docs/design/governance.md',
  'design §6': 'docs/api.md#policies-and-flows groups of bases',
  'design §7 events': 'docs/design/events-and-audit.md events',
  'design §7 audit': 'docs/design/events-and-audit.md audit',
  'design §8': 'services/mcp/README.md',
  'design §9': 'CONTRIBUTING.md#habits',
  'design §10 keys that make keys': 'docs/design/identity.md keys that make keys',
  'design §10 evaluation budget': 'docs/design/fair-scheduling.md evaluation budget',
  'design §10 governance service': 'docs/design/governance.md governance service',
  'design §10 audit kinds': 'docs/design/events-and-audit.md audit kinds',
  'design §10 operations endpoints': 'docs/operations.md#health-metrics-and-alerts operations endpoints',
  'design §10 batch evaluation': 'docs/architecture.md#batch-runs',
  'design §11 admin-issued first keys': 'docs/design/identity.md admin-issued first keys',
  'design §11 databases per stack': 'docs/operations.md#several-stacks-on-one-machine',
  'design §11 live keys per user': 'docs/design/per-person-limits.md live keys per user',
  'design §11 sdk client': 'docs/sdk.md#the-client',
  'design §11 sdk local evaluation': 'docs/sdk.md#local-evaluation',
  'design §11 sdk run reports': 'docs/sdk.md#what-is-reported',
  'design §11 trace switch': 'docs/design/trace-switch.md',
  'design §11 per person': 'docs/design/per-person-limits.md',
  'design §11 decision records': 'docs/design/decision-records.md',
  'issue 15 restore': 'docs/api.md#policies-and-flows restore',
  'issue 15 export': 'docs/api.md#export-and-import export',
  'issue 15 import': 'docs/api.md#export-and-import import',
  'issue 15 groups on records': 'docs/api.md#policies-and-flows groups on records',
  'issue 16 console serving': 'services/console/README.md serving',
  'issue 16 console editor': 'services/console/README.md editor',
  'issue 16 console policies and flows': 'services/console/README.md policies and flows',
  'issue 19 hot path': 'docs/performance.md hot path',
  'issue 20 batch flood': 'docs/design/fair-scheduling.md batch flood',
  'issue 21 docs kept true': 'CONTRIBUTING.md#habits docs kept true',
  'issue 23 impact in the console and the SDK': 'docs/decisions.md#impact-analysis in the console and the SDK',
};

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The rules, in order. Each takes a file's text and its path and returns the new text. */
const RULES = [
  // 1. Whole phrases.
  (text) => PHRASES.reduce((t, [from, to]) => t.split(from).join(to), text),
  // 2. Requirement ids (only where they are ids: `id: '…'`).
  (text) => text.replace(/(\bid: )'([^']+)'/g, (all, lead, id) => (REQUIREMENT_IDS[id] ? `${lead}'${REQUIREMENT_IDS[id]}'` : all)),
  // 3. The MCP tools' shapes: the language reference's section.
  (text) =>
    text.replace(
      new RegExp(`${escape(SPEC)}4\\.7 (validate_rule|explain_rule|list_operators)`, 'g'),
      (_, tool) => `docs/LANGUAGE.md §${TOOL_SECTIONS[tool]} ${tool}`,
    ),
  // 4. Spec sections, one or a list.
  (text) =>
    text.replace(new RegExp(`${escape(SPEC.slice(0, -1))}(${SECTION_LIST})`, 'g'), (all, list) => {
      const docs = sectionsOf(list).map((s) => SPEC_SECTIONS[s]);
      return docs.every(Boolean) ? unique(docs).join(', ') : all;
    }),
  // 5. Sections of the architecture notes, one or a list; sections 10 and 11 by the line's words.
  (text) =>
    text
      .split('\n')
      .map((line) =>
        line.replace(new RegExp(`${escape(DESIGN)} (${SECTION_LIST})`, 'g'), (all, list) => {
          const docs = sectionsOf(list).map((s) => designDoc(Number(s), line));
          return docs.every(Boolean) ? unique(docs).join(', ') : all;
        }),
      )
      .join('\n'),
  // 6. Issue numbers: dropped where the sentence says its reason already.
  (text) =>
    text
      // `(issue 15 item 6)` alone in its parentheses
      .replace(new RegExp(String.raw`[ \t]*\(${ISSUE} ${ISSUE_TAIL}\)`, 'g'), '')
      // `(issue 23, docs/decisions.md)`, `(issue 20 item 7; was 500)`
      .replace(new RegExp(String.raw`\(${ISSUE} ${ISSUE_TAIL}(?:, |; |: )`, 'g'), '(')
      // `(admin; issue 15 item 6)`, `(spec §2.2, issue 15 item 3)`
      .replace(new RegExp(String.raw`(?:, |; )${ISSUE} ${ISSUE_TAIL}(?=\))`, 'g'), '')
      // `// Issue 20 item 1: work whose …` at the start of a comment
      .replace(
        new RegExp(String.raw`((?:\/\/|\*|#) )${ISSUE} ${ISSUE_TAIL}: (\p{Ll})`, 'gu'),
        (_, lead, first) => `${lead}${first.toUpperCase()}`,
      ),
  // 7. A doc named twice in a row by two rewritten references: once.
  (text) => text.replace(/((?:docs|services|libs)\/[\w/.-]+\.md(?:#[\w-]+)?)(?:, \1)+/g, '$1'),
];

// ---- Run -----------------------------------------------------------------------------------------

/** What is still a reference to a document outside the repository, for the report. */
const LEFT = new RegExp(`${escape(DESIGN)}|${escape(STYLE)}|\\b(?:spec|design) §|spec/service-spec\\.md|\\b${ISSUE}[ -]#?\\d+`, 'i');

const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
  .split('\0')
  .filter((f) => f && TEXT.test(f) && !SKIP.has(f));

let changed = 0;
const left = [];
for (const file of files) {
  const full = path.join(root, file);
  let before;
  try {
    before = readFileSync(full, 'utf8');
  } catch {
    continue; // listed by git but deleted in the work tree
  }
  const after = RULES.reduce((t, rule) => rule(t, file), before);
  if (after !== before) {
    changed += 1;
    if (check) console.log(`would rewrite ${file}`);
    else writeFileSync(full, after);
  }
  after.split('\n').forEach((line, i) => {
    if (LEFT.test(line)) left.push(`${file}:${i + 1}: ${line.trim()}`);
  });
}

console.log(`${check ? 'would rewrite' : 'rewrote'} ${changed} file(s)`);
if (left.length > 0) {
  console.log(`\n${left.length} reference(s) left for a hand edit:`);
  for (const l of left) console.log(`  ${l}`);
}
if (check && changed > 0) process.exitCode = 1;
