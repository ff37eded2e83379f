import { createLogger } from '../src/logger.js';

export { randomPrefix } from '@arbiter/test-kit';

/** A logger whose JSON lines are collected in memory. */
export function memoryLogger(service = 'test') {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    service,
    level: 'debug',
    destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
  });
  return { logger, lines };
}
