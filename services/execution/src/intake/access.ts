import { ArbiterError, hasCapability, type Principal } from '@arbiter/contracts';

/**
 * Re-checks on the execution side that the caller may run rules (docs/design/bus.md: services
 * re-check authorization): a principal without `view` (role ∩ key scopes) is refused.
 */
export function requireView(principal: Principal): void {
  if (!hasCapability(principal, 'view')) {
    throw new ArbiterError('forbidden', 'running rules needs the `view` right (role and API key scope)');
  }
}
