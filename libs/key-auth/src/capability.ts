import { ArbiterError, hasCapability, ROLE_CAPABILITIES, type Principal, type Scope } from '@arbiter/contracts';

/**
 * The `forbidden` refusal of a caller whose effective rights (role ∩ key scopes) lack `scope`,
 * saying which of the two lacks it; undefined when the caller has it. Every door refuses alike.
 */
export function capabilityRefusal(principal: Principal, scope: Scope): ArbiterError | undefined {
  if (hasCapability(principal, scope)) return undefined;
  const why = !ROLE_CAPABILITIES[principal.role].includes(scope)
    ? `role \`${principal.role}\` does not include \`${scope}\``
    : `the API key lacks scope \`${scope}\``;
  return new ArbiterError('forbidden', `${why}; this endpoint needs \`${scope}\``);
}
