import { useEffect, useState } from 'react';

/** The console lives under this path on the gateway; client routes are below it. */
export const BASE = '/console';

/** The route part of the current address (`/policies/abc` for `/console/policies/abc`). */
export function currentRoute(pathname = window.location.pathname): string {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  return rest === '' ? '/' : rest;
}

export function navigate(route: string): void {
  window.history.pushState(null, '', `${BASE}${route}`);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** Goes to `route` in place of the current entry (no new history step): a redirect. */
export function redirect(route: string): void {
  window.history.replaceState(null, '', `${BASE}${route}`);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** The current route, updated on navigation and on back/forward. */
export function useRoute(): string {
  const [route, setRoute] = useState(currentRoute());
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    window.addEventListener('popstate', update);
    return () => window.removeEventListener('popstate', update);
  }, []);
  return route;
}

/** Matches `/policies/:id` style patterns; returns the parameters or null. */
export function matchRoute(pattern: string, route: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean);
  const r = route.split('/').filter(Boolean);
  if (p.length !== r.length) return null;
  const params = new Map<string, string>();
  for (let i = 0; i < p.length; i++) {
    const part = p[i];
    if (part.startsWith(':')) params.set(part.slice(1), decodeURIComponent(r[i]));
    else if (part !== r[i]) return null;
  }
  return Object.fromEntries(params);
}
