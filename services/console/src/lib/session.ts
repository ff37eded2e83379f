import { createContext, useContext } from 'react';
import type { ArbiterClient } from '@arbiter/sdk/client';
import { ROLE_CAPABILITIES } from '@arbiter/contracts/access';
import type { MeResponse, Scope } from '@arbiter/contracts';

export interface Session {
  api: ArbiterClient;
  me: MeResponse;
  signOut: () => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}

/**
 * Whether the signed-in caller may do what `scope` stands for: the key's scopes, or for a bearer
 * session (no key, no scopes in `/me`) its role's capabilities. The API decides in the end; this
 * only hides controls that would be refused.
 */
export function can(me: MeResponse, scope: Scope): boolean {
  const scopes: readonly string[] = me.scopes ?? (Object.hasOwn(ROLE_CAPABILITIES, me.role) ? ROLE_CAPABILITIES[me.role] : []);
  return scopes.includes(scope);
}
