import type { createLogger } from '@arbiter/service-kit';

/** The service-kit (pino) logger. */
export type Logger = ReturnType<typeof createLogger>;
