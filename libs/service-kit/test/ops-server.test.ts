import { Counter } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry } from '../src/metrics.js';
import { startOpsServer, type OpsServer } from '../src/ops-server.js';

let ready: boolean | Error = false;
let ops: OpsServer;
const registry = createRegistry('ops-test');
const counter = new Counter({ name: 'arbiter_test_things_total', help: 'things', registers: [registry] });

beforeAll(async () => {
  ops = await startOpsServer({
    port: 0,
    host: '127.0.0.1',
    registry,
    ready: async () => {
      if (ready instanceof Error) throw ready;
      return ready;
    },
  });
});
afterAll(() => ops.close());

const get = (path: string, method = 'GET') => fetch(`http://127.0.0.1:${ops.port}${path}`, { method });

describe('startOpsServer', () => {
  it('binds a free port when asked for port 0', () => {
    expect(ops.port).toBeGreaterThan(0);
  });

  it('answers /healthz with 200 while the process runs', async () => {
    const res = await get('/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz from the ready callback, 503 when it says no or throws', async () => {
    ready = false;
    expect((await get('/readyz')).status).toBe(503);
    ready = true;
    const res = await get('/readyz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready' });
    ready = new Error('db down');
    expect((await get('/readyz')).status).toBe(503);
  });

  it('serves Prometheus text with registered and default metrics, labelled by service', async () => {
    counter.inc(3);
    const res = await get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('arbiter_test_things_total{service="ops-test"} 3');
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('answers 404 for unknown paths and 405 for other methods', async () => {
    expect((await get('/nope')).status).toBe(404);
    expect((await get('/healthz', 'POST')).status).toBe(405);
  });
});
