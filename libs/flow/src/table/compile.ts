import type { FlowTableNode, TableOutputObject, TableValue } from '@arbiter/contracts';
import { CellTableError, compileCellTable, type CompiledCellTable } from '@arbiter/rule-lang';
import type { FlowProblem } from '../problems.js';

/** A table node ready to run: its cells compiled, each rule's output object and rank resolved. */
export interface CompiledTable {
  readonly node: FlowTableNode;
  readonly cells: CompiledCellTable;
  /** Per rule: its output object, every output present (an omitted one takes its default, else null). */
  readonly outputs: readonly TableOutputObject[];
  /** The result's object when no rule matches: each output's default, else null. */
  readonly defaults: TableOutputObject;
  /** Per rule: the rank of its value in each output that declares `values` (lower first), for `priority`. */
  readonly ranks: readonly (readonly number[])[];
}

/** A table node compiled, or every problem that keeps it from compiling. */
export type TableCompilation = { ok: true; table: CompiledTable } | { ok: false; problems: FlowProblem[] };

/** Compiled tables by node object: a definition parsed once (the execution service's entry cache) compiles each table once. */
const cache = new WeakMap<FlowTableNode, TableCompilation>();

/** The hit policies whose result is one output object (routes need one). */
const SINGLE = new Set(['unique', 'any', 'priority', 'first']);

/** 1-based ordinal words of messages: rules and inputs are numbered from 1 for people, from 0 in paths. */
const nth = (i: number): number => i + 1;

/** Compiles table node `node` (cached per node object); `nodeId` names it in problems. */
export function compileTable(nodeId: string, node: FlowTableNode): TableCompilation {
  const hit = cache.get(node);
  if (hit !== undefined) return hit;
  const compiled = compileUncached(nodeId, node);
  cache.set(node, compiled);
  return compiled;
}

function sameValue(a: TableValue, b: TableValue): boolean {
  return a === b || (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b));
}

function show(v: TableValue): string {
  return JSON.stringify(v);
}

function compileUncached(nodeId: string, node: FlowTableNode): TableCompilation {
  const problems: FlowProblem[] = [];
  const at = `nodes.${nodeId}`;
  const table = `table \`${nodeId}\``;
  const problem = (code: FlowProblem['code'], message: string, path: string) =>
    problems.push({ code, message: `${table}: ${message}`, path });

  const seenNames = new Map<string, string>();
  node.inputs.forEach((input, i) => {
    if (seenNames.has(input.name)) problem('invalid_table', `input \`${input.name}\` is named twice`, `${at}.inputs.${i}.name`);
    seenNames.set(input.name, 'input');
  });
  const outputIndex = new Map<string, number>();
  node.outputs.forEach((output, i) => {
    if (outputIndex.has(output.name) || seenNames.get(output.name) === 'output') {
      problem('invalid_table', `output \`${output.name}\` is named twice`, `${at}.outputs.${i}.name`);
    }
    outputIndex.set(output.name, i);
    seenNames.set(output.name, 'output');
    if (output.values !== undefined && output.default !== undefined && !output.values.some((v) => sameValue(v, output.default!))) {
      problem(
        'invalid_table',
        `the default ${show(output.default)} of output \`${output.name}\` is not among its values`,
        `${at}.outputs.${i}.default`,
      );
    }
  });

  node.rules.forEach((rule, r) => {
    if (rule.when.length !== node.inputs.length) {
      problem(
        'invalid_table',
        `rule ${nth(r)} has ${rule.when.length} cell${rule.when.length === 1 ? '' : 's'}, but the table has ${node.inputs.length} input${node.inputs.length === 1 ? '' : 's'}: give one cell per input (\`-\` for any)`,
        `${at}.rules.${r}.when`,
      );
    }
    node.outputs.forEach((o) => {
      if (o.values !== undefined && o.default === undefined && !Object.hasOwn(rule.then, o.name)) {
        problem(
          'invalid_table',
          `rule ${nth(r)} gives no value for \`${o.name}\`, whose output lists \`values\` and has no \`default\``,
          `${at}.rules.${r}.then`,
        );
      }
    });
    for (const [name, value] of Object.entries(rule.then)) {
      const o = outputIndex.get(name);
      if (o === undefined) {
        problem('unknown_output', `rule ${nth(r)} sets \`${name}\`, which is not an output of the table`, `${at}.rules.${r}.then.${name}`);
        continue;
      }
      const values = node.outputs[o].values;
      if (values !== undefined && !values.some((v) => sameValue(v, value))) {
        problem(
          'invalid_table',
          `rule ${nth(r)} gives \`${name}\` the value ${show(value)}, which its output's \`values\` do not list${node.hitPolicy === 'priority' ? ' (the priority order)' : ''}`,
          `${at}.rules.${r}.then.${name}`,
        );
      }
    }
  });

  if (node.hitPolicy === 'priority' && !node.outputs.some((o) => o.values !== undefined)) {
    problem(
      'invalid_table',
      "a `priority` table ranks rules by the order of an output's `values`: declare `values` on at least one output",
      `${at}.outputs`,
    );
  }
  if (node.aggregation !== undefined) {
    if (node.hitPolicy !== 'collect') {
      problem(
        'invalid_table',
        `\`aggregation\` applies to the \`collect\` hit policy only, not \`${node.hitPolicy}\``,
        `${at}.aggregation`,
      );
    } else if (node.outputs.length !== 1) {
      problem(
        'invalid_table',
        `\`collect\` with \`${node.aggregation}\` needs exactly one output (DMN), not ${node.outputs.length}`,
        `${at}.outputs`,
      );
    } else if (node.aggregation !== 'count') {
      const name = node.outputs[0].name;
      node.rules.forEach((rule, r) => {
        const v = rule.then[name];
        if (v !== undefined && v !== null && typeof v !== 'number') {
          problem(
            'invalid_table',
            `\`${node.aggregation}\` needs numbers, but rule ${nth(r)} gives \`${name}\` ${show(v)}`,
            `${at}.rules.${r}.then.${name}`,
          );
        }
      });
      const d = node.outputs[0].default;
      if (d !== undefined && d !== null && typeof d !== 'number') {
        problem(
          'invalid_table',
          `\`${node.aggregation}\` needs numbers, but the default of \`${name}\` is ${show(d)}`,
          `${at}.outputs.0.default`,
        );
      }
    }
  }

  // Routing: `next`, or `routes` (+ `default`) on one output of a single result; never both.
  let routeOn: string | null = null;
  const routes = node.routes !== undefined || node.default !== undefined;
  if (node.next !== undefined && routes) {
    problem('invalid_table', 'a table goes to `next` or follows `routes`/`default`, not both', `${at}.next`);
  }
  if (node.routeOn !== undefined && node.routes === undefined) {
    problem('invalid_table', '`routeOn` needs `routes`', `${at}.routeOn`);
  }
  if (node.default !== undefined && node.routes === undefined) {
    problem('invalid_table', '`default` needs `routes`', `${at}.default`);
  }
  if (node.routes !== undefined) {
    const single = SINGLE.has(node.hitPolicy) || (node.hitPolicy === 'collect' && node.aggregation !== undefined);
    if (!single) {
      problem(
        'invalid_table',
        `\`routes\` need one output object, but a \`${node.hitPolicy}\` table without aggregation gives a list`,
        `${at}.routes`,
      );
    }
    if (node.routeOn !== undefined) {
      if (outputIndex.has(node.routeOn)) routeOn = node.routeOn;
      else problem('unknown_output', `\`routeOn\` names \`${node.routeOn}\`, which is not an output of the table`, `${at}.routeOn`);
    } else if (node.outputs.length === 1) {
      routeOn = node.outputs[0].name;
    } else {
      problem('invalid_table', 'the table has several outputs: name the one `routes` read in `routeOn`', `${at}.routeOn`);
    }
    const values = routeOn !== null ? node.outputs[outputIndex.get(routeOn)!].values : undefined;
    if (routeOn !== null && values !== undefined) {
      const listed = new Set(values.map(routeKey));
      for (const key of Object.keys(node.routes)) {
        if (!listed.has(key)) problem('invalid_table', `route \`${key}\` is not among the values of \`${routeOn}\``, `${at}.routes.${key}`);
      }
    }
    if (node.default === undefined && routeOn !== null) {
      const covered = values !== undefined && values.every((v) => Object.hasOwn(node.routes!, routeKey(v)));
      if (!covered) {
        problems.push({
          code: 'missing_branch',
          message: `${table}: \`routes\` need a \`default\` unless \`${routeOn}\` declares \`values\` and every one has a route`,
          path: `${at}.default`,
        });
      }
    }
  }

  let cells: CompiledCellTable | null = null;
  try {
    cells = compileCellTable(
      node.inputs.map((i) => i.path),
      node.rules.map((r) => r.when),
    );
  } catch (err) {
    if (!(err instanceof CellTableError)) throw err;
    for (const p of err.problems) {
      const input = node.inputs[p.column];
      const where = `line ${p.problem.line}, column ${p.problem.column}`;
      if (p.row === null) {
        problems.push({
          code: 'invalid_cell',
          message: `${table}: input \`${input.name}\`: path: ${where}: ${p.problem.detail}`,
          path: `${at}.inputs.${p.column}.path`,
        });
      } else {
        problems.push({
          code: 'invalid_cell',
          message: `${table}: rule ${nth(p.row)}, input \`${input.name}\`: ${where}: ${p.problem.detail}`,
          path: `${at}.rules.${p.row}.when.${p.column}`,
        });
      }
    }
  }
  if (problems.length > 0 || cells === null) return { ok: false, problems };

  const defaults: TableOutputObject = {};
  for (const o of node.outputs) defaults[o.name] = o.default ?? null;
  const outputs = node.rules.map((rule) => {
    const out: TableOutputObject = {};
    for (const o of node.outputs) out[o.name] = Object.hasOwn(rule.then, o.name) ? rule.then[o.name] : (o.default ?? null);
    return out;
  });
  const ranked = node.outputs.filter((o) => o.values !== undefined);
  const ranks = outputs.map((out) => ranked.map((o) => o.values!.findIndex((v) => sameValue(v, out[o.name]))));
  return { ok: true, table: { node, cells, outputs, defaults, ranks } };
}

/**
 * The output a valid table's `routes` read: `routeOn`, or the only output; null without routes.
 * (Compilation checks the same choice, reporting what makes it invalid.)
 */
export function routeOnOf(node: FlowTableNode): string | null {
  if (node.routes === undefined) return null;
  return node.routeOn ?? (node.outputs.length === 1 ? node.outputs[0].name : null);
}

/** The `routes` key an output value selects: a string as is, anything else as JSON (`10`, `true`, `null`). */
export function routeKey(v: TableValue): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}
