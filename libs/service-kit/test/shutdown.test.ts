import { describe, expect, it } from 'vitest';
import { onShutdown } from '../src/shutdown.js';
import { memoryLogger } from './helpers.js';

function exitRecorder() {
  const { promise: exited, resolve: exit } = Promise.withResolvers<number>();
  return { exit, exited };
}

describe('onShutdown', () => {
  it('runs the shutdown once on the first signal, then exits 0', async () => {
    const { logger, lines } = memoryLogger();
    const { exit, exited } = exitRecorder();
    let runs = 0;
    const { promise: gate, resolve: release } = Promise.withResolvers<void>();
    const dispose = onShutdown(
      logger,
      async () => {
        runs++;
        await gate;
      },
      { signals: ['SIGUSR2'], exit },
    );
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      process.emit('SIGUSR2', 'SIGUSR2');
      release();
      expect(await exited).toBe(0);
      expect(runs).toBe(1);
      expect(lines.map((l) => l.msg)).toEqual(['shutting down', 'shutdown already in progress', 'shutdown complete']);
    } finally {
      dispose();
    }
  });

  it('exits 1 and logs the error when the shutdown fails', async () => {
    const { logger, lines } = memoryLogger();
    const { exit, exited } = exitRecorder();
    const dispose = onShutdown(
      logger,
      async () => {
        throw new Error('drain failed');
      },
      { signals: ['SIGUSR2'], exit },
    );
    try {
      process.emit('SIGUSR2', 'SIGUSR2');
      expect(await exited).toBe(1);
      expect(lines.at(-1)).toMatchObject({ msg: 'shutdown failed', err: { message: 'drain failed' } });
    } finally {
      dispose();
    }
  });

  it('removes its listeners when disposed', () => {
    const before = process.listenerCount('SIGUSR2');
    const dispose = onShutdown(memoryLogger().logger, async () => {}, { signals: ['SIGUSR2'], exit: () => {} });
    expect(process.listenerCount('SIGUSR2')).toBe(before + 1);
    dispose();
    expect(process.listenerCount('SIGUSR2')).toBe(before);
  });
});
