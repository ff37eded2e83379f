import type { Logger } from 'pino';

/** Options of {@link onShutdown}; the defaults suit a service process. */
export interface ShutdownOptions {
  /** Signals that start the shutdown; SIGTERM and SIGINT by default. */
  signals?: NodeJS.Signals[];
  /** Ends the process; `process.exit` by default. */
  exit?: (code: number) => void;
}

/**
 * On the first of `signals`, runs `fn` once, then exits 0 (1 if `fn` threw). Later signals are
 * logged and ignored while `fn` runs. Returns a function that removes the signal listeners.
 */
export function onShutdown(logger: Logger, fn: () => Promise<void>, opts: ShutdownOptions = {}): () => void {
  const signals = opts.signals ?? ['SIGTERM', 'SIGINT'];
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  let started = false;
  const listener = (signal: NodeJS.Signals): void => {
    if (started) {
      logger.warn({ signal }, 'shutdown already in progress');
      return;
    }
    started = true;
    logger.info({ signal }, 'shutting down');
    fn().then(
      () => {
        logger.info('shutdown complete');
        logger.flush?.();
        exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        logger.flush?.();
        exit(1);
      },
    );
  };
  for (const s of signals) process.on(s, listener);
  return () => {
    for (const s of signals) process.off(s, listener);
  };
}
