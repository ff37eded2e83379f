import { randomBytes } from 'node:crypto';
import { createLogger } from '../src/logger.js';

/** A subject prefix no other test file uses. */
export function randomPrefix(): string {
  return `test_${randomBytes(6).toString('hex')}`;
}

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
