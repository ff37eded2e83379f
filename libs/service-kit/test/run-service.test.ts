import { freePort } from '@arbiter/test-kit';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { LogConfig, OpsConfig, serviceConfig } from '../src/config.js';
import { runService, type RunningService } from '../src/run-service.js';
import { startOpsServer } from '../src/ops-server.js';
import { createRegistry } from '../src/metrics.js';

const Config = serviceConfig([LogConfig, OpsConfig], { SVC_GREETING: z.string().min(2) });
const PACKAGE_JSON = new URL('../package.json', import.meta.url);

/** Collects what a run writes and how it exits. */
function harness() {
  const lines: Array<Record<string, unknown>> = [];
  const exits: number[] = [];
  return {
    lines,
    exits,
    opts: {
      destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
      exit: (code: number) => void exits.push(code),
      signals: ['SIGUSR2'] as NodeJS.Signals[],
    },
  };
}

const running: RunningService[] = [];
afterEach(async () => {
  process.removeAllListeners('SIGUSR2');
  await Promise.all(running.splice(0).map((r) => r.close()));
});

describe('runService', () => {
  it('reports a bad configuration as one fatal JSON line naming the variables, and exits 1 without starting', async () => {
    const h = harness();
    let started = false;
    const result = await runService(
      {
        name: 'svc',
        config: Config,
        packageJson: PACKAGE_JSON,
        start: () => {
          started = true;
          return Promise.resolve({ ready: () => true, close: () => Promise.resolve() });
        },
      },
      { ...h.opts, env: { SVC_GREETING: 'x', OPS_PORT: 'many' } },
    );
    expect(result).toBeUndefined();
    expect(started).toBe(false);
    expect(h.exits).toEqual([1]);
    expect(h.lines).toHaveLength(1);
    expect(h.lines[0]).toMatchObject({ level: 60, service: 'svc', variables: ['OPS_PORT', 'SVC_GREETING'] });
    expect(h.lines[0]!.msg).toMatch(/^invalid configuration: /);
  });

  it('reports a failed start (a dependency down) as one fatal JSON line with the error, and exits 1', async () => {
    const h = harness();
    const result = await runService(
      {
        name: 'svc',
        config: Config,
        packageJson: PACKAGE_JSON,
        start: () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })),
      },
      { ...h.opts, env: { SVC_GREETING: 'hello' } },
    );
    expect(result).toBeUndefined();
    expect(h.exits).toEqual([1]);
    const fatal = h.lines.filter((l) => l.level === 60);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatchObject({
      msg: 'svc failed to start',
      err: { message: 'connect ECONNREFUSED 127.0.0.1:1', code: 'ECONNREFUSED' },
    });
  });

  it('gives start the checked configuration, a logger, a metrics registry and the package version; serves the ops port; shuts down on a signal', async () => {
    const h = harness();
    const port = await freePort();
    let closed = 0;
    let seen: { greeting: string; version: string; hasMetrics: boolean } | undefined;
    const service = await runService(
      {
        name: 'svc',
        config: Config,
        packageJson: PACKAGE_JSON,
        start: (kit) => {
          seen = { greeting: kit.config.SVC_GREETING, version: kit.version, hasMetrics: typeof kit.metrics.metrics === 'function' };
          kit.logger.info('started');
          return Promise.resolve({
            ready: () => true,
            close: () => {
              closed++;
              return Promise.resolve();
            },
          });
        },
      },
      { ...h.opts, env: { SVC_GREETING: 'hello', OPS_PORT: String(port), OPS_HOST: '127.0.0.1', LOG_LEVEL: 'info' } },
    );
    expect(service).toBeDefined();
    expect(seen).toEqual({ greeting: 'hello', version: '0.1.0', hasMetrics: true });
    expect(h.lines.map((l) => l.msg)).toContain('started');
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(/^process_cpu_user_seconds_total\{service="svc"\} /m);
    process.emit('SIGUSR2', 'SIGUSR2');
    await expect.poll(() => h.exits).toEqual([0]);
    expect(closed).toBe(1);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });
});

describe('the ops server', () => {
  it('answers /readyz 503 when the readiness check does not answer within the deadline', async () => {
    const ops = await startOpsServer({
      port: 0,
      host: '127.0.0.1',
      ready: () => new Promise<boolean>(() => undefined),
      registry: createRegistry('t'),
      readyTimeoutMs: 100,
    });
    try {
      const res = await fetch(`http://127.0.0.1:${ops.port}/readyz`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'not_ready' });
    } finally {
      await ops.close();
    }
  });
});
