// The zod-free entry of the contracts: the client's bundle for browsers carries no schemas.
import { ArbiterError, isErrorCode, type ErrorCode, type ErrorReason } from '@arbiter/contracts/error-codes';

/** How failed requests are tried again (only where that is safe: see {@link Transport.request}). */
export interface RetryOptions {
  /** Attempts after the first (default 2; 0 turns retries off). */
  max?: number;
  /** First back-off delay; doubled per attempt, with jitter (default 200 ms). */
  baseDelayMs?: number;
  /** Longest back-off delay (default 5000 ms). */
  maxDelayMs?: number;
  /** A `retry-after` longer than this is not waited for: the error is thrown (default 30 000 ms). */
  maxRetryAfterMs?: number;
}

/** What the transport needs: where, who, how long, how often. */
export interface TransportOptions {
  baseUrl: string;
  /** Sent as `x-api-key`. */
  apiKey?: string;
  /** Sent as `Authorization: Bearer …`; a function is asked before every request (for refreshed tokens). */
  token?: string | (() => string | Promise<string>);
  /** Deadline of one attempt (default 30 000 ms). */
  timeoutMs?: number;
  retries?: RetryOptions;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** Aborts every request sent through this transport (with the request's own signal, whichever aborts first). */
  signal?: AbortSignal;
}

/** One request. */
export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  /** JSON body. */
  body?: unknown;
  /**
   * Safe to send again after a failure whose effect is unknown (GET, and runs, which change
   * nothing): retried on network errors, 429, 502 and 503. Other requests are retried on 429 only
   * (refused before anything happened).
   */
  idempotent: boolean;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** A successful answer. */
export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined for an empty body. */
  body: unknown;
  requestId: string;
}

const REQUEST_ID = 'x-request-id';

/**
 * The HTTP side of the client: credentials, request ids, time-outs, retries with back-off and
 * `retry-after`, and every non-2xx answer turned into one {@link ArbiterError}. Uses only the
 * standard `fetch`, so it runs in Node 20+ and in browsers.
 */
export class Transport {
  readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;
  private readonly retry: Required<RetryOptions>;

  constructor(private readonly opts: TransportOptions) {
    let url: URL;
    try {
      url = new URL(opts.baseUrl);
    } catch {
      throw new TypeError(`baseUrl \`${opts.baseUrl}\` is not a URL (e.g. http://localhost:8080)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('baseUrl must be http:// or https://');
    if ((opts.apiKey === undefined) === (opts.token === undefined)) throw new TypeError('give exactly one of `apiKey` and `token`');
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.fetchFn = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.retry = { max: 2, baseDelayMs: 200, maxDelayMs: 5000, maxRetryAfterMs: 30_000, ...opts.retries };
  }

  /** Whether the client authenticates with an API key (local evaluation needs one). */
  get hasApiKey(): boolean {
    return this.opts.apiKey !== undefined;
  }

  /** Sends `spec`, retrying where safe; resolves with a 2xx (or 304) answer, else throws an {@link ArbiterError}. */
  async request(request: RequestSpec): Promise<Answer> {
    const spec = this.withSignal(request);
    const requestId = newRequestId();
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.send(spec, requestId);
      } catch (err) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        const failure = transportError(err, this.url(spec), spec.timeoutMs ?? this.timeoutMs, requestId);
        if (failure.code === 'dependency_unavailable' && spec.idempotent && attempt < this.retry.max) {
          await sleep(this.backoff(attempt), spec.signal);
          continue;
        }
        throw failure;
      }
      if (res.ok || res.status === 304) {
        const text = await res.text();
        return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text), requestId };
      }
      const error = await problemOf(res, requestId);
      const retryable = res.status === 429 || (spec.idempotent && (res.status === 502 || res.status === 503));
      if (!retryable || attempt >= this.retry.max) throw error;
      const after = retryAfterMs(res.headers.get('retry-after'));
      if (after !== undefined && after > this.retry.maxRetryAfterMs) throw error;
      await sleep(after ?? this.backoff(attempt), spec.signal);
    }
  }

  /**
   * Opens a streamed answer (server-sent events, NDJSON): resolves with the response once its
   * status is 2xx (no time-out on the body, no retries); a problem answer is thrown.
   */
  async stream(request: Omit<RequestSpec, 'idempotent' | 'timeoutMs'> & { accept: string }): Promise<Response> {
    const spec = this.withSignal(request);
    const requestId = newRequestId();
    let res: Response;
    try {
      res = await this.send({ ...spec, idempotent: true, headers: { ...spec.headers, accept: spec.accept } }, requestId, false);
    } catch (err) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw transportError(err, this.url(spec), this.timeoutMs, requestId);
    }
    if (!res.ok) throw await problemOf(res, requestId);
    return res;
  }

  /** `spec` with the transport's signal joined to its own. */
  private withSignal<S extends { signal?: AbortSignal }>(spec: S): S {
    const own = this.opts.signal;
    if (own === undefined) return spec;
    return { ...spec, signal: spec.signal === undefined ? own : AbortSignal.any([spec.signal, own]) };
  }

  private async send(spec: RequestSpec, requestId: string, bounded = true): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', [REQUEST_ID]: requestId, ...spec.headers };
    if (this.opts.apiKey !== undefined) headers['x-api-key'] = this.opts.apiKey;
    else if (this.opts.token !== undefined) {
      const token = typeof this.opts.token === 'function' ? await this.opts.token() : this.opts.token;
      headers.authorization = `Bearer ${token}`;
    }
    let body: string | undefined;
    if (spec.body !== undefined) {
      body = JSON.stringify(spec.body);
      headers['content-type'] = 'application/json';
    }
    // The deadline covers the answer's headers; a streamed body has none.
    const signals: AbortSignal[] = [];
    if (spec.signal) signals.push(spec.signal);
    const timeout = bounded ? AbortSignal.timeout(spec.timeoutMs ?? this.timeoutMs) : undefined;
    if (timeout) signals.push(timeout);
    const res = await this.fetchFn(this.url(spec), {
      method: spec.method,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(signals.length > 0 ? { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) } : {}),
    });
    return res;
  }

  private url(spec: Pick<RequestSpec, 'path' | 'query'>): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value as readonly string[]) params.append(name, v);
      else params.append(name, String(value));
    }
    const qs = params.toString();
    return `${this.baseUrl}${spec.path}${qs === '' ? '' : `?${qs}`}`;
  }

  private backoff(attempt: number): number {
    const ceiling = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** attempt);
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }
}

/**
 * A request id: sent as `x-request-id`, kept by the gateway, named by every problem. Browsers
 * offer `crypto.randomUUID` only on HTTPS and localhost; a page served over plain HTTP (a console
 * on an internal host) gets the same kind of id from `getRandomValues`.
 */
function newRequestId(): string {
  const crypto = globalThis.crypto;
  return typeof crypto.randomUUID === 'function' ? crypto.randomUUID() : uuidFromBytes(crypto.getRandomValues(new Uint8Array(16)));
}

/** A version 4 UUID made of 16 random bytes. */
export function uuidFromBytes(random: Uint8Array): string {
  const bytes = Uint8Array.from(random.subarray(0, 16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `encodeURIComponent` for a path segment. */
export function segment(id: string): string {
  return encodeURIComponent(id);
}

/** The {@link ArbiterError} of a non-2xx answer: its RFC 9457 problem, or a code from the status when the body is not one. */
export async function problemOf(res: Response, requestId: string): Promise<ArbiterError> {
  const text = await res.text().catch(() => '');
  let problem: { code?: unknown; detail?: unknown; title?: unknown; instance?: unknown; errors?: unknown } | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object') problem = parsed;
  } catch {
    problem = undefined;
  }
  const code = isErrorCode(problem?.code) ? problem.code : codeOfStatus(res.status);
  const detail =
    typeof problem?.detail === 'string'
      ? problem.detail
      : typeof problem?.title === 'string'
        ? problem.title
        : `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
  const errors = Array.isArray(problem?.errors) ? (problem.errors as ErrorReason[]) : undefined;
  const id = typeof problem?.instance === 'string' ? problem.instance : (res.headers.get(REQUEST_ID) ?? requestId);
  return new ArbiterError(code, detail, errors, { requestId: id });
}

/** The catalogue code closest to an HTTP status whose body named none (a proxy's page, say). */
function codeOfStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return 'bad_request';
    case 401:
      return 'unauthenticated';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'unsupported_media_type';
    case 422:
      return 'cannot_publish';
    case 429:
      return 'rate_limited';
    case 502:
    case 503:
      return 'dependency_unavailable';
    case 504:
      return 'timeout';
    default:
      return status >= 500 ? 'internal' : 'bad_request';
  }
}

/** A failure before any answer: a time-out (`timeout`) or an unreachable service (`dependency_unavailable`). */
function transportError(err: unknown, url: string, timeoutMs: number, requestId: string): ArbiterError {
  const name = (err as { name?: string }).name;
  if (name === 'TimeoutError') {
    return new ArbiterError('timeout', `no answer from ${url} within ${timeoutMs} ms`, undefined, { cause: err, requestId });
  }
  const cause = (err as { cause?: { message?: string; code?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  return new ArbiterError('dependency_unavailable', `cannot reach ${url}: ${why}`, undefined, { cause: err, requestId });
}

/** Milliseconds of a `retry-after` header (seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
