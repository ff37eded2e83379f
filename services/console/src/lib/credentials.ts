/** How the console signs its requests: an API key (`x-api-key`) or a pasted bearer token. */
export type Credentials = { kind: 'apiKey'; value: string } | { kind: 'bearer'; value: string };

const STORAGE_KEY = 'arbiter.console.credentials';

/** Reads the credentials kept for this tab (sessionStorage: gone when the tab closes, never in a URL). */
export function loadCredentials(storage: Pick<Storage, 'getItem'> = sessionStorage): Credentials | null {
  const raw = storage.getItem(STORAGE_KEY);
  if (!raw) return null;
  try {
    const parsed = JSON.parse(raw) as Partial<Credentials>;
    if ((parsed.kind === 'apiKey' || parsed.kind === 'bearer') && typeof parsed.value === 'string' && parsed.value) {
      return { kind: parsed.kind, value: parsed.value };
    }
  } catch {
    // a damaged entry is the same as none
  }
  return null;
}

export function saveCredentials(credentials: Credentials, storage: Pick<Storage, 'setItem'> = sessionStorage): void {
  storage.setItem(STORAGE_KEY, JSON.stringify(credentials));
}

export function clearCredentials(storage: Pick<Storage, 'removeItem'> = sessionStorage): void {
  storage.removeItem(STORAGE_KEY);
}
