import { pino, type DestinationStream, type Logger } from 'pino';

const REDACTED = '[REDACTED]';
const SECRET_HEADERS = ['authorization', 'x-api-key', 'x-mcp-api-key'];
const SECRET_QUERY_PARAMS = new Set(['api_key']);

/** Replaces the value of every secret query parameter (`api_key`) in a URL or path. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const hash = url.indexOf('#', q);
  const end = hash < 0 ? url.length : hash;
  const query = url
    .slice(q + 1, end)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      return SECRET_QUERY_PARAMS.has(decodeName(rawName)) ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, q + 1)}${query}${url.slice(end)}`;
}

/** Hides the password of a connection address (`nats://user:secret@host` → `nats://user:[REDACTED]@host`). */
export function redactCredentials(address: string): string {
  return address.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/]*):[^@/]*@/i, `$1:${REDACTED}@`);
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

function redactPaths(): string[] {
  const headerPaths = SECRET_HEADERS.flatMap((h) => [`headers["${h}"]`, `*.headers["${h}"]`, `*.*.headers["${h}"]`]);
  return [...headerPaths, 'url', '*.url', '*.*.url'];
}

function censor(value: unknown, path: string[]): unknown {
  if (path[path.length - 1] === 'url') return typeof value === 'string' ? redactUrl(value) : value;
  return REDACTED;
}

/**
 * A pino JSON logger bound to `service`. Secret headers (`authorization`, `x-api-key`,
 * `x-mcp-api-key`) are redacted under any `headers` object up to two levels deep, and the
 * `api_key` query parameter inside any logged `url`.
 */
export function createLogger(opts: { service: string; level?: string; destination?: DestinationStream }): Logger {
  const options = {
    level: opts.level ?? 'info',
    base: { service: opts.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: redactPaths(), censor },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
