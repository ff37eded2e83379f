import type { FastifyRequest } from 'fastify';
import type { PolicyChecksReply, Principal } from '@arbiter/contracts';

/** Runs the static checks of a policy text (the registry's `registry.policy.checks`). */
export type PolicyChecker = (principal: Principal, rule: string, ctx: { requestId: string }) => Promise<PolicyChecksReply>;

/** What an answer carries when the checks did not run: nothing found, and said to be incomplete. */
export const CHECKS_NOT_RUN: PolicyChecksReply = { checks: [], checksComplete: false };

/**
 * The static checks of `rule` for an answer that does not depend on them (`/validate`, a saved
 * policy): warnings never block, so when the checker is absent or fails the answer goes out with
 * {@link CHECKS_NOT_RUN} and the failure is logged.
 */
export async function checksFor(
  request: FastifyRequest,
  checker: PolicyChecker | undefined,
  principal: Principal,
  rule: string,
): Promise<PolicyChecksReply> {
  if (checker === undefined) return CHECKS_NOT_RUN;
  return bestEffort(request, () => checker(principal, rule, { requestId: request.id }));
}

/** Runs `check` for an answer that does not depend on it: a failure is logged and answered as {@link CHECKS_NOT_RUN}. */
export async function bestEffort<T extends { checksComplete: boolean }>(
  request: FastifyRequest,
  check: () => Promise<T>,
): Promise<T | typeof CHECKS_NOT_RUN> {
  try {
    return await check();
  } catch (err) {
    request.log.warn({ err }, 'static checks left out: the registry did not answer');
    return CHECKS_NOT_RUN;
  }
}
