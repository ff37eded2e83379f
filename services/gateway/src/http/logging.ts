import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

/** Probe paths whose requests are never logged. */
const QUIET_PATHS = new Set(['/healthz', '/readyz']);

/**
 * Access logs off the per-request path: a line per request only at `debug`; at `info`
 * one request in `sampleEvery` (0: none) gets its "request completed" line, marked `sampled`.
 * Request counts, statuses and latencies are in the metrics (`arbiter_http_requests_total`). Errors
 * are always logged, each with its request id (`requestId`).
 */
export class AccessLog extends LogController {
  private seen = 0;

  constructor(
    private readonly root: FastifyBaseLogger,
    private readonly sampleEvery: number,
  ) {
    super({ requestIdLogLabel: 'requestId', disableRequestLogging: (request: { url?: string }) => QUIET_PATHS.has(request.url ?? '') });
  }

  override incomingRequest(request: FastifyRequest): void {
    if (!this.isLogDisabled(request) && levelEnabled(this.root, 'debug')) request.log.debug({ req: request }, 'incoming request');
  }

  /** {@link requestCompleted} of a `200` the run lane answered: the same lines, with the status for `res`. */
  laneCompleted(requestId: string, statusCode: number, responseTime: number): void {
    if (levelEnabled(this.root, 'debug')) {
      this.root.child({ requestId }).debug({ res: { statusCode }, responseTime }, 'request completed');
    } else if (this.sampleEvery > 0 && ++this.seen >= this.sampleEvery) {
      this.seen = 0;
      this.root.child({ requestId }).info({ res: { statusCode }, responseTime, sampled: this.sampleEvery }, 'request completed');
    }
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) {
      reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    } else if (levelEnabled(this.root, 'debug')) {
      reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
    } else if (this.sampleEvery > 0 && ++this.seen >= this.sampleEvery) {
      this.seen = 0;
      reply.log.info({ res: reply, responseTime: reply.elapsedTime, sampled: this.sampleEvery }, 'request completed');
    }
  }
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** Whether `logger` writes `level` (pino's `isLevelEnabled`; a logger without it writes everything). */
function levelEnabled(logger: FastifyBaseLogger, level: string): boolean {
  const check = (logger as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled;
  return check === undefined ? true : check.call(logger, level);
}

/**
 * A request's logger made only when something is logged at an enabled level: most requests log
 * nothing, and a pino child per request (its bindings serialized) was a visible share of the
 * gateway's CPU. Lines it writes carry the request id like any child's.
 */
class LazyChildLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.opts);
    return this.made;
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return levelEnabled(this.made ?? this.parent, level);
  }

  child(bindings: Bindings, opts?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, opts);
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  silent(): void {}

  private write(level: Level, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return;
    Reflect.apply(this.logger[level], this.logger, args);
  }
}

/** fastify's `childLoggerFactory`: a {@link LazyChildLogger} per request. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, opts);
}
