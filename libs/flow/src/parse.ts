import { FlowDefinition } from '@arbiter/contracts';
import type { FlowProblem } from './problems.js';

/** A definition that passed the zod schema, or the problems of one that did not. */
export type ParsedDefinition = { ok: true; definition: FlowDefinition } | { ok: false; problems: FlowProblem[] };

/** Checks `input` against the {@link FlowDefinition} schema (shape only; see `validateDefinition` for the graph). */
export function parseDefinition(input: unknown): ParsedDefinition {
  const parsed = FlowDefinition.safeParse(input);
  if (parsed.success) return { ok: true, definition: parsed.data };
  return {
    ok: false,
    problems: parsed.error.issues.map((i) => {
      const path = i.path.map(String).join('.');
      return { code: 'invalid_definition', message: path ? `\`${path}\`: ${i.message}` : i.message, ...(path ? { path } : {}) };
    }),
  };
}
