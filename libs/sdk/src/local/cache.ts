import { RunnableSnapshot } from '@arbiter/contracts';

/** Where a runtime keeps its last state, to answer from it on a cold start while the service is unreachable. */
export interface LocalCacheStore {
  /** The saved text, or null when there is none. */
  load(): Promise<string | null>;
  /** Replaces the saved text. */
  save(text: string): Promise<void>;
}

/** A cache file's content: the state and when it was last confirmed current. */
export interface CachedState {
  snapshot: RunnableSnapshot;
  /** Ms since the epoch at which the service last confirmed this revision current. */
  confirmedAt: number;
}

const FORMAT = 'arbiter-local-cache';

/** The text a cache store keeps for `state` of selection `key`. */
export function encodeCache(key: string, state: CachedState): string {
  return JSON.stringify({ format: FORMAT, formatVersion: 1, key, confirmedAt: state.confirmedAt, snapshot: state.snapshot });
}

/** The state in a cache store's text, when it is one of ours for selection `key`; null otherwise (or unreadable). */
export function decodeCache(key: string, text: string | null): CachedState | null {
  if (text === null) return null;
  try {
    const json = JSON.parse(text) as {
      format?: unknown;
      formatVersion?: unknown;
      key?: unknown;
      confirmedAt?: unknown;
      snapshot?: unknown;
    };
    if (json.format !== FORMAT || json.formatVersion !== 1 || json.key !== key || typeof json.confirmedAt !== 'number') return null;
    const snapshot = RunnableSnapshot.safeParse(json.snapshot);
    return snapshot.success ? { snapshot: snapshot.data, confirmedAt: json.confirmedAt } : null;
  } catch {
    return null;
  }
}

/** The part of `node:fs/promises` a cache file needs. */
interface FileSystem {
  readFile(path: string, encoding: 'utf8'): Promise<string>;
  writeFile(path: string, data: string, encoding: 'utf8'): Promise<void>;
  rename(from: string, to: string): Promise<void>;
}

// A specifier the bundlers of browser builds do not follow: a cache file exists only under Node.
const NODE_FS = 'node:fs/promises';

/**
 * A cache store in a file (Node only): read once at start, replaced atomically (a temporary file
 * renamed over it) after each change. A missing file is no cache.
 */
export function fileCache(path: string): LocalCacheStore {
  const fs = () => import(/* @vite-ignore */ NODE_FS) as Promise<FileSystem>;
  return {
    async load() {
      try {
        return await (await fs()).readFile(path, 'utf8');
      } catch (err) {
        if ((err as { code?: string }).code === 'ENOENT') return null;
        throw err;
      }
    },
    async save(text) {
      const io = await fs();
      const temporary = `${path}.${globalThis.crypto.randomUUID()}.tmp`;
      await io.writeFile(temporary, text, 'utf8');
      await io.rename(temporary, path);
    },
  };
}
