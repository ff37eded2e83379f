import { createContext, useContext } from 'react';
import type { ArbiterClient } from '@arbiter/sdk/client';
import { hasCapability } from '@arbiter/contracts/access';
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
 * Whether the signed-in caller may do what `scope` stands for: its role's capabilities, within the
 * key's scopes when it signed in with a key (a bearer session has no scopes in `/me`). The API decides in the end; this
 * only hides controls that would be refused.
 */
export function can(me: MeResponse, scope: Scope): boolean {
  return hasCapability(me, scope);
}
