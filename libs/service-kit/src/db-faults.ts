/** SQLSTATEs (and classes) that mean the database cannot serve now, as opposed to a bad statement. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '57014']);
const UNAVAILABLE_CLASSES = ['08'];
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
/**
 * node-postgres reports a lost or timed-out connection with these messages and no code;
 * `timeout expired` is its connect deadline (`connectionTimeoutMillis`) against a server that
 * accepts the connection but never answers (frozen).
 */
const PG_CLIENT_MESSAGES = [
  'Connection terminated',
  'timeout expired',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
];

/**
 * Whether `err` (or one of its causes) means PostgreSQL is unreachable, overloaded or too slow —
 * an infrastructure fault to answer with 503 and `retry-after`, never 500: connection refused or
 * lost, the connect deadline of a server that does not answer, the pool's acquire deadline
 * (`KnexTimeoutError`), the client's read deadline of a query, a statement cancelled by its deadline
 * (57014), the server shutting down or refusing connections (57P01–57P03, 53300, class 08).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth++) {
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (UNAVAILABLE_SQLSTATES.has(code) || NETWORK_CODES.has(code)) return true;
      if (/^[0-9A-Z]{5}$/.test(code) && UNAVAILABLE_CLASSES.includes(code.slice(0, 2))) return true;
    }
    if (name === 'KnexTimeoutError') return true;
    if (typeof message === 'string' && PG_CLIENT_MESSAGES.some((m) => message.includes(m))) return true;
    if (e instanceof AggregateError && e.errors.some((inner) => isDatabaseUnavailable(inner))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
