import type { Reason, Reasons } from '@arbiter/contracts';

/** A deciding condition of a run's reasons, where it is written in the rule (docs/LANGUAGE.md §10.4). */
export interface ReasonMark {
  line: number;
  column: number;
  /** The source text exactly as written. */
  text: string;
  holds: boolean;
}

/** Most marks put on an editor: a run's reasons are bounded, but a marked editor stays readable. */
export const MAX_REASON_MARKS = 500;

/**
 * The conditions that decided a policy run, to mark in the rule editor: every `condition` entry
 * (and the `missing` entry where data was absent, as not holding), however deep under references
 * and quantifiers. Entries at no place (`line` 0) are left out.
 */
export function reasonMarks(reasons: Reasons | null | undefined): ReasonMark[] {
  const out: ReasonMark[] = [];
  const walk = (entries: readonly Reason[]): void => {
    for (const e of entries) {
      if (out.length >= MAX_REASON_MARKS) return;
      if ((e.kind === 'condition' || e.kind === 'missing') && e.line > 0 && e.text !== '') {
        out.push({ line: e.line, column: e.column, text: e.text, holds: e.kind === 'condition' && e.holds });
      }
      if (e.because) walk(e.because);
    }
  };
  if (reasons) walk(reasons.because);
  return out;
}

/** What a table node's reasons mark in its grid: the deciding rows and cells (from 0), and whether each held. */
export interface TableReasonMarks {
  rows: ReadonlyMap<number, boolean>;
  /** By `"<row>:<input>"`. */
  cells: ReadonlyMap<string, boolean>;
}

/**
 * A table node's reasons as grid marks: each `table` entry with a `row` (1-based) is a deciding row
 * (matched or not), its `because` entries the cells that decided (`line` the row, `column` the
 * input, both from 1); when no rule matched, the rows listed under that entry, each with its
 * first failing cell.
 */
export function tableReasonMarks(reasons: Reasons | null | undefined): TableReasonMarks {
  const rows = new Map<number, boolean>();
  const cells = new Map<string, boolean>();
  const walk = (entries: readonly Reason[]): void => {
    for (const e of entries) {
      if (e.kind !== 'table') continue;
      // `no rule matched` lists the rows under it, each with its first failing cell.
      if (e.row === undefined) {
        walk(e.because ?? []);
        continue;
      }
      rows.set(e.row - 1, e.holds);
      for (const c of e.because ?? []) if (c.line > 0 && c.column > 0) cells.set(`${c.line - 1}:${c.column - 1}`, c.holds);
    }
  };
  walk(reasons?.because ?? []);
  return { rows, cells };
}

/** The sentences of a flow run's nodes that gave reasons, in the order they ran. */
export function nodeSentences(
  nodes: ReadonlyArray<{ nodeId: string; reasons?: Reasons | undefined }>,
): Array<{ nodeId: string; sentence: string }> {
  return nodes.flatMap((n) => (n.reasons ? [{ nodeId: n.nodeId, sentence: n.reasons.sentence }] : []));
}
