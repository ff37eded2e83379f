import type { createLogger } from '@arbiter/service-kit';

/** The service-kit (pino) logger type, named without a direct dependency on pino. */
export type Logger = ReturnType<typeof createLogger>;
