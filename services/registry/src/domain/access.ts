import { ArbiterError, hasCapability, type Principal, type Scope } from '@arbiter/contracts';

/** Throws `forbidden` unless the caller's effective rights include `scope`; `action` completes "may not …". */
export function requireCapability(principal: Principal, scope: Scope, action: string): void {
  if (!hasCapability(principal, scope)) {
    throw new ArbiterError(
      'forbidden',
      `role \`${principal.role}\`${principal.scopes ? ' with this key' : ''} may not ${action}: it needs the \`${scope}\` right`,
    );
  }
}

/** Whether the caller acts with admin rights. */
export function isAdmin(principal: Principal): boolean {
  return hasCapability(principal, 'admin');
}
