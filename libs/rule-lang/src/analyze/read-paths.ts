/** The data paths a policy reads, for checking a policy against a JSON Schema. */

import type { ConditionList, Path, PolicyAst } from '../ast/types.js';

/** Marks "any element of the array" in a path from {@link readPathsOf}. */
export const ELEMENT = '[]';

/**
 * Every path the policy reads, root first, as written (`["applicant", "date of birth"]`). Paths
 * inside any/all that start at `its` are prefixed by the array's path and {@link ELEMENT}.
 * Duplicates are removed; order is text order.
 */
export function readPathsOf(ast: PolicyAst): string[][] {
  const seen = new Set<string>();
  const out: string[][] = [];
  const add = (steps: string[]): void => {
    const key = JSON.stringify(steps);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(steps);
    }
  };
  const absolute = (p: Path, element: string[] | null): string[] => {
    const names = p.steps.map((s) => s.name);
    return p.root === 'its' ? [...(element ?? []), ...names] : names;
  };
  const walk = (list: ConditionList, element: string[] | null): void => {
    for (const c of list.items) {
      if (c.kind === 'comparison') {
        add(absolute(c.left, element));
        if (c.right?.kind === 'path') add(absolute(c.right.path, element));
      } else if (c.kind === 'quantifier') {
        const array = absolute(c.path, element);
        add(array);
        walk(c.body, [...array, ELEMENT]);
      } else if (c.kind === 'group') walk(c.body, element);
    }
  };
  for (const rule of ast.rules) walk(rule.conditions, null);
  return out;
}
