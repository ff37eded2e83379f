import { createContext, useContext } from 'react';
import type { Api } from './api.js';
import type { Me } from './types.js';

export interface Session {
  api: Api;
  me: Me;
  signOut: () => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside a signed-in page');
  return s;
}

export const can = (me: Me, scope: string): boolean => me.scopes.includes(scope);
