/**
 * Request/reply subjects of the execution service, relative to the bus prefix
 * (`Bus.subject('exec.run')` → `arbiter.exec.run`). One queue group (`exec`) serves them all.
 */
export const ExecSubject = {
  run: 'exec.run',
  validate: 'exec.validate',
  explain: 'exec.explain',
  operators: 'exec.operators',
  /**
   * Several requests of the other `exec` subjects in one message (coalesced by the caller per
   * event-loop turn): one reply carries each item's answer or error, in order.
   */
  batch: 'exec.batch',
  /** One rule run on many data objects (`POST /run/batch`): the rule crosses the bus once; one result per item. */
  runMany: 'exec.run.many',
} as const;
export type ExecSubject = (typeof ExecSubject)[keyof typeof ExecSubject];
