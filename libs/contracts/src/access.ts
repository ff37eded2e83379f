import type { Principal, Role, Scope } from './principal.js';

/** What each role may do, as key scopes (docs/design/identity.md). Each authoring role includes the ones before. */
export const ROLE_CAPABILITIES: Readonly<Record<Role, readonly Scope[]>> = {
  viewer: ['view'],
  editor: ['view', 'edit'],
  publisher: ['view', 'edit', 'publish'],
  admin: ['view', 'edit', 'publish', 'admin', 'audit'],
  auditor: ['view', 'audit'],
};

/**
 * The effective rights of a caller: its role's capabilities, intersected with the key's scopes
 * when it authenticated with an API key (a key never exceeds its owner).
 */
export function capabilitiesOf(principal: Pick<Principal, 'role' | 'scopes'>): Set<Scope> {
  const fromRole = ROLE_CAPABILITIES[principal.role];
  if (principal.scopes === undefined) return new Set(fromRole);
  const granted = new Set(principal.scopes);
  return new Set(fromRole.filter((s) => granted.has(s)));
}

/** Whether the caller's effective rights include `scope` (no allocation: it runs on every request). */
export function hasCapability(principal: Pick<Principal, 'role' | 'scopes'>, scope: Scope): boolean {
  const fromRole = ROLE_CAPABILITIES[principal.role] as readonly Scope[] | undefined;
  if (fromRole === undefined || !fromRole.includes(scope)) return false;
  return principal.scopes === undefined || principal.scopes.includes(scope);
}

/**
 * The right that reads recorded decisions and what they hold (inputs as recorded, both sides of a
 * replay): the audit trail's readers, admins and auditors (a key needs the `audit` scope). Every
 * door to that data checks this one right: `GET /decisions`, the audit service, and the examples
 * of an impact report.
 */
export const DECISION_READ_RIGHT: Scope = 'audit';

/** Whether the caller may read recorded decisions and the examples of impact reports ({@link DECISION_READ_RIGHT}). */
export function canReadDecisions(principal: Pick<Principal, 'role' | 'scopes'>): boolean {
  return hasCapability(principal, DECISION_READ_RIGHT);
}
