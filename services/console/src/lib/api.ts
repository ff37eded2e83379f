import { authHeaders, type Credentials } from './credentials.js';

/** An RFC 9457 problem from the API (or a network failure dressed as one). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly errors: readonly { code?: string; message?: string; path?: string }[] = [],
  ) {
    super(detail);
  }
}

/** The text to show for a failed call: the problem's `detail`, plus its listed reasons. */
export function problemText(err: unknown): string {
  if (err instanceof ApiError) {
    // reasons the detail already says are not repeated
    const reasons = err.errors.map((e) => e.message).filter((m): m is string => !!m && !err.message.includes(m));
    return reasons.length ? `${err.message}: ${reasons.join('; ')}` : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

const TIMEOUT_MS = 30_000;

/** Turns a non-2xx answer into an {@link ApiError} carrying the problem's `detail`. */
async function failure(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { detail?: unknown; title?: unknown; code?: unknown; errors?: unknown };
    const detail = typeof body.detail === 'string' ? body.detail : typeof body.title === 'string' ? body.title : `HTTP ${res.status}`;
    const errors = Array.isArray(body.errors) ? (body.errors as ApiError['errors']) : [];
    return new ApiError(res.status, typeof body.code === 'string' ? body.code : 'error', detail, errors);
  } catch {
    return new ApiError(res.status, 'error', text.trim() || `HTTP ${res.status} ${res.statusText}`);
  }
}

/** A small client of the public API: every call carries the credentials and a deadline. */
export class Api {
  constructor(
    private readonly credentials: Credentials,
    private readonly baseUrl = '',
  ) {}

  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = { ...authHeaders(this.credentials), accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const deadline = AbortSignal.timeout(TIMEOUT_MS);
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new ApiError(0, 'network', `The API did not answer (${(err as Error).message})`);
    }
    if (!res.ok) throw await failure(res);
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  }

  get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.request<T>('GET', path, undefined, signal).then((r) => r.body);
  }
  post<T>(path: string, body: unknown = {}, signal?: AbortSignal): Promise<T> {
    return this.request<T>('POST', path, body, signal).then((r) => r.body);
  }
  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, body).then((r) => r.body);
  }
  delete(path: string): Promise<void> {
    return this.request<unknown>('DELETE', path).then(() => undefined);
  }
}

/** Builds `?a=1&b=2` from the defined values. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
