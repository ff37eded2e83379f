import { z } from 'zod';

/**
 * Request/reply subjects of the execution service, relative to the bus prefix
 * (`Bus.subject('exec.run')` → `arbiter.exec.run`). One queue group (`exec`) serves them all.
 */
export const ExecSubject = {
  /** Not a subject anything listens on: the `exec.eval` group name of an unsaved rule's run (`EvalSubject`). */
  run: 'exec.run',
  validate: 'exec.validate',
  explain: 'exec.explain',
  operators: 'exec.operators',
  /**
   * Evaluations in one framed message (contracts `EvalRequestHeader`): the single evaluations a
   * caller made in one event-loop turn, and batch calls, as groups of items; the reply carries each
   * item's raw answer or its error, in order.
   */
  eval: 'exec.eval',
} as const;
export type ExecSubject = (typeof ExecSubject)[keyof typeof ExecSubject];

/**
 * Every back-end service answers `<queue group>._ping` (service-kit serves it beside its endpoints)
 * with {@link PingReply}: a readiness probe that one of its replicas serves on this bus prefix.
 */
export function pingSubject(group: string): string {
  return `${group}._ping`;
}

/** The answer of `<queue group>._ping`. */
export const PingReply = z.object({ service: z.string(), version: z.string() });
export type PingReply = z.infer<typeof PingReply>;

/** The queue group of each back-end service, by the name it runs as (`services/<name>`). */
export const ServiceGroup = {
  execution: 'exec',
  registry: 'registry',
  governance: 'governance',
  audit: 'audit',
  webhooks: 'webhooks',
  mcp: 'mcp',
} as const;
export type BackEndService = keyof typeof ServiceGroup;
