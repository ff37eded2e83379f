import {
  ArbiterError,
  DecisionPage,
  DecisionSubject,
  hasCapability,
  type DecisionRecord,
  type ImpactReport,
  type ImpactRequest,
  type Principal,
} from '@arbiter/contracts';
import type { Bus, EvalClient } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { v7 } from 'uuid';
import type { RegistryPort } from './registry-port.js';
import { saveImpactReport } from './repositories/impact-reports.js';

/** Decisions read per history page and replayed per batch. */
const PAGE = 1000;
/** Changed decisions a report shows. */
const MAX_EXAMPLES = 20;

/** What {@link ImpactService} needs. */
export interface ImpactDeps {
  db: Knex;
  bus: Pick<Bus, 'request'>;
  evals: EvalClient;
  registry: RegistryPort;
  timeoutMs: number;
}

/** One side of a decision as compared. */
interface Side {
  result: DecisionRecord['result'];
  errorCode: string | null;
  outcomes: Record<string, unknown>;
}

const decoder = new TextDecoder();

/** The label of a side in `transitions`: `error`, else the result (`true`, `false`, an outcome). */
function labelOf(side: Side): string {
  if (side.errorCode !== null) return 'error';
  return typeof side.result === 'string' ? side.result : JSON.stringify(side.result);
}

/**
 * Impact analysis (issue 23, docs/decisions.md#impact-analysis): replays a base's most recent
 * recorded decisions through one policy record — usually the draft under review — in the execution
 * service's workers (as the caller's low-priority work, each at its decision's `now`), compares
 * each answer with the recorded one, and keeps the report as the latest for the record's content
 * hash (the review summary of the draft shows it until the draft changes).
 */
export class ImpactService {
  constructor(private readonly deps: ImpactDeps) {}

  async analyse(p: Principal, policyId: string, req: ImpactRequest, requestId?: string): Promise<ImpactReport> {
    const record = await this.deps.registry.get(p, 'policy', policyId, requestId);
    if (!hasCapability(p, 'publish')) {
      // Editors analyse drafts only (the registry already refused records they may not see).
      if (!hasCapability(p, 'edit') || record.status !== 'draft') {
        throw new ArbiterError('forbidden', `role \`${p.role}\` may analyse the impact of drafts only: it needs the \`publish\` right`);
      }
    }
    const report: ImpactReport = {
      impactId: v7(),
      policyId: record.recordId,
      baseId: record.baseId,
      contentHash: record.contentHash,
      at: new Date().toISOString(),
      replayed: 0,
      unchanged: 0,
      changed: 0,
      errors: 0,
      unreplayable: 0,
      transitions: {},
      outcomes: {},
      examples: [],
    };
    let cursor: string | undefined;
    let left = req.limit;
    while (left > 0) {
      const page = await this.deps.bus.request(
        DecisionSubject.history,
        {
          principal: p,
          baseId: record.baseId,
          limit: Math.min(PAGE, left),
          ...(req.from !== undefined ? { from: req.from } : {}),
          ...(req.to !== undefined ? { to: req.to } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
        },
        DecisionPage,
        { timeoutMs: this.deps.timeoutMs },
      );
      await this.replay(p, record.recordId, page.items, report, requestId);
      left -= page.items.length;
      if (page.nextCursor === null || page.items.length === 0) break;
      cursor = page.nextCursor;
    }
    await saveImpactReport(this.deps.db, p.orgId, report);
    return report;
  }

  /** Replays one page: decisions sharing a `now` go as one group. */
  private async replay(p: Principal, recordId: string, decisions: DecisionRecord[], report: ImpactReport, requestId?: string) {
    const byNow = new Map<string, DecisionRecord[]>();
    for (const d of decisions) {
      const list = byNow.get(d.now);
      if (list) list.push(d);
      else byNow.set(d.now, [d]);
    }
    await Promise.all(
      [...byNow].map(async ([now, list]) => {
        const answers = await this.deps.evals.many(
          {
            subject: 'exec.stored.policy.record',
            principal: p,
            id: recordId,
            trace: false,
            now,
            replay: true,
            timeoutMs: this.deps.timeoutMs,
            ...(requestId !== undefined ? { requestId } : {}),
          },
          list.map((d) => JSON.stringify(d.input)),
        );
        list.forEach((d, i) => count(report, d, answers[i]));
      }),
    );
  }
}

/** Counts one replayed decision in the report. */
function count(report: ImpactReport, d: DecisionRecord, answer: Uint8Array | ArbiterError): void {
  report.replayed++;
  if (answer instanceof ArbiterError) {
    report.errors++;
    return;
  }
  const body = JSON.parse(decoder.decode(answer)) as {
    result: boolean;
    outcomes?: Record<string, unknown>;
    errorCode?: string;
    maskedRead?: boolean;
  };
  if (body.maskedRead === true) {
    report.unreplayable++;
    return;
  }
  const before: Side = { result: d.result, errorCode: d.errorCode, outcomes: d.outcomes ?? {} };
  const after: Side = { result: body.result, errorCode: body.errorCode ?? null, outcomes: body.outcomes ?? {} };
  if (after.errorCode !== null) report.errors++;
  const from = labelOf(before);
  const to = labelOf(after);
  let outcomeChanged = false;
  for (const name of new Set([...Object.keys(before.outcomes), ...Object.keys(after.outcomes)])) {
    if (before.outcomes[name] !== after.outcomes[name]) {
      report.outcomes[name] = (report.outcomes[name] ?? 0) + 1;
      outcomeChanged = true;
    }
  }
  if (from === to && !outcomeChanged) {
    report.unchanged++;
    return;
  }
  report.changed++;
  if (from !== to) report.transitions[`${from}→${to}`] = (report.transitions[`${from}→${to}`] ?? 0) + 1;
  if (report.examples.length < MAX_EXAMPLES) report.examples.push({ decisionId: d.decisionId, at: d.at, before, after, input: d.input });
}
