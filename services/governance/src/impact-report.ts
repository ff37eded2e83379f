import { ArbiterError, impactReportFor, type ImpactExample, type ImpactReport, type Principal } from '@arbiter/contracts';

/** NATS's default max payload, assumed before the server has said. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/**
 * Bytes an impact report may take (as JSON): three quarters of the bus limit, so the review
 * summary that carries it (its ids, names and a comment of up to 2,000 characters) and the reply
 * envelope always fit one message with room to spare.
 */
export function reportBudget(maxPayload: number | undefined): number {
  return Math.floor(((maxPayload ?? DEFAULT_MAX_PAYLOAD) * 3) / 4);
}

const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/**
 * The report within `maxBytes`: its examples in order, leaving out each one that no longer fits
 * (`examplesTruncated` says whether any was), so a report of large recorded inputs keeps as many
 * as fit; the examples' reasons are kept, in order, as far as the room left by the examples goes
 * (an example without them rather than no example). 422 `result_too_large` when the counts alone pass it (a very large number of distinct
 * transitions): nothing of such a report is kept.
 */
export function boundReport(report: ImpactReport, maxBytes: number): ImpactReport {
  const { examples = [], examplesTruncated: _truncated, ...counts } = report;
  // `false` is the longer spelling: the size is an upper bound whatever the flag ends up being.
  const base = bytesOf({ ...counts, examples: [], examplesTruncated: false });
  if (base > maxBytes) {
    throw new ArbiterError(
      'result_too_large',
      `the impact report would take ${base} bytes without its examples and at most ${maxBytes} fit: ` +
        'its decisions changed in too many different ways to count; analyse fewer decisions (`limit`, `from`, `to`)',
    );
  }
  let room = maxBytes - base;
  const kept: ImpactExample[] = [];
  // Examples first (without their reasons), then the reasons of those kept, in order, as long as they fit.
  const whole: ImpactExample[] = [];
  for (const example of examples) {
    const bare = withoutReasons(example);
    const size = bytesOf(bare) + (kept.length > 0 ? 1 : 0);
    if (size > room) continue;
    kept.push(bare);
    whole.push(example);
    room -= size;
  }
  for (let i = 0; i < kept.length; i++) {
    if (whole[i] === kept[i]) continue;
    const extra = bytesOf(whole[i]) - bytesOf(kept[i]);
    if (extra > room) continue;
    kept[i] = whole[i]!;
    room -= extra;
  }
  return { ...counts, examples: kept, examplesTruncated: kept.length < examples.length };
}

/** An example without the reasons of its sides (the same object when it has none). */
function withoutReasons(example: ImpactExample): ImpactExample {
  const bare = (side: ImpactExample['before']): ImpactExample['before'] => {
    const { reasons: _reasons, nodeReasons: _nodeReasons, ...rest } = side;
    return rest;
  };
  const has = (side: ImpactExample['before']) => side.reasons !== undefined || side.nodeReasons !== undefined;
  return has(example.before) || has(example.after) ? { ...example, before: bare(example.before), after: bare(example.after) } : example;
}

/**
 * A kept report as `reader` sees it ({@link impactReportFor}: examples for the readers of
 * decisions only). A report kept before reports were bounded is bounded here; one that cannot be
 * is not shown (null, as if none was run), so the review summary stays readable.
 */
export function shownReport(reader: Pick<Principal, 'role' | 'scopes'>, report: ImpactReport, maxBytes: number): ImpactReport | null {
  try {
    return impactReportFor(reader, boundReport(report, maxBytes));
  } catch {
    return null;
  }
}
