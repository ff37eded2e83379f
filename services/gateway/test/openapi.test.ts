import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { createLogger } from '@arbiter/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppDeps } from '../src/app.js';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { StubExecution } from './support/stub-execution.js';
import { JWT_AUDIENCE, JWT_ISSUER, JWT_SECRET } from './support/gateway.js';

/** Stands in for a service client the document's routes need registered: generating the document never calls it. */
const unused = <T>(): T => {
  const handler: ProxyHandler<() => never> = {
    get: (_target, key) => (key === 'then' ? undefined : new Proxy(() => undefined as never, handler)),
    apply: () => {
      throw new Error('not called while the OpenAPI document is generated');
    },
  };
  return new Proxy(() => undefined as never, handler) as T;
};

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
type Operation = {
  operationId?: string;
  security?: unknown[];
  responses: Record<
    string,
    { description?: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: unknown; itemSchema?: unknown }> }
  >;
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  parameters?: Array<{ name: string; in: string; schema: Record<string, unknown> }>;
};
type Doc = { servers?: Array<{ url: string }>; paths: Record<string, Record<string, Operation>> };
let doc: Doc;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const operations = (): Array<[string, string, Operation]> =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([m, op]) => [path, m, op] as [string, string, Operation]),
  );

beforeAll(async () => {
  [db, redis] = await Promise.all([createTestDatabase(), createTestRedis()]);
  const deps: AppDeps = {
    config: {
      jwt: { secret: JWT_SECRET, issuer: JWT_ISSUER, audience: JWT_AUDIENCE, orgClaim: 'org' },
      limits: { bodyLimitBytes: 1024 * 1024, rateLimitMax: 10_000, rateLimitWindowMs: 60_000, authFailuresMax: 20 },
      redisKeyPrefix: redis.prefix,
      apiKeyCacheTtlSeconds: 60,
    },
    logger: createLogger({ service: 'gateway-openapi-test', level: 'silent' }),
    db: db.db,
    redis: redis.redis,
    execution: new StubExecution(),
    mcp: unused(),
    runner: unused(),
    registry: unused(),
    runnable: { client: unused(), watch: unused() },
    audit: unused(),
    webhooks: unused(),
    decisions: unused(),
    impact: unused(),
    governance: unused(),
    shadows: unused(),
  };
  app = await buildApp(deps);
  await app.ready();
  doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
});

afterAll(async () => {
  await app?.close();
  await Promise.allSettled([db?.drop(), redis?.cleanup()]);
});

describe('the OpenAPI document, for client generators', () => {
  it('gives every operation an operationId: camelCase, unique, and the same as the published table', () => {
    const ids = operations().map(([path, method, op]) => [`${method.toUpperCase()} ${path}`, op.operationId] as const);
    expect(ids.length).toBeGreaterThanOrEqual(79);
    expect(ids.filter(([, id]) => id === undefined).map(([key]) => key)).toEqual([]);
    for (const [key, id] of ids) expect(id, key).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
    // a few fixed names generated clients depend on
    expect(doc.paths['/policies']!.get!.operationId).toBe('listPolicies');
    expect(doc.paths['/mcp']!.post!.operationId).toBe('postMcp');
    expect(doc.paths['/mcp']!.get!.operationId).toBe('getMcp');
    expect(doc.paths['/policy/{baseId}/shadow']!.put!.operationId).toBe('putPolicyShadow');
    expect(doc.paths['/flow/{baseId}/shadow']!.delete!.operationId).toBe('stopFlowShadow');
  });

  it('names a server, and marks the probes as needing no credential', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(doc.paths['/healthz']!.get!.security).toEqual([]);
    expect(doc.paths['/readyz']!.get!.security).toEqual([]);
    for (const [path, method, op] of operations()) {
      if (path === '/healthz' || path === '/readyz') continue;
      expect(op.security?.length, `${method} ${path}`).toBeGreaterThan(0);
    }
  });

  it('declares the streams with their real media types, with the shape of one line or event', () => {
    const ndjson = doc.paths['/audit/export']!.get!.responses['200']!.content!;
    expect(Object.keys(ndjson)).toEqual(['application/x-ndjson']);
    expect(JSON.stringify(ndjson['application/x-ndjson']!.schema)).toContain('eventId');
    const sse = doc.paths['/runnable/changes']!.get!.responses['200']!.content!;
    expect(Object.keys(sse)).toEqual(['text/event-stream']);
    expect(sse['text/event-stream']!.schema).toMatchObject({ type: 'string' });
  });

  it('declares /mcp: its JSON-RPC request body, its 200, 400, 405, 406 and 415 answers, and the 401 challenge', () => {
    const post = doc.paths['/mcp']!.post!;
    expect(post.requestBody).toMatchObject({ required: true, content: { 'application/json': { schema: expect.any(Object) } } });
    expect(JSON.stringify(post.requestBody)).toContain('jsonrpc');
    for (const method of ['post', 'get', 'delete']) {
      const responses = doc.paths['/mcp']![method]!.responses;
      for (const status of ['200', '405', '406', '415'])
        expect(Object.keys(responses[status]?.content ?? {}), `${method} ${status}`).toEqual(['application/json']);
      // A body that is not JSON is a JSON-RPC parse error; JSON past the edge checks a problem, as everywhere.
      expect(Object.keys(responses['400']?.content ?? {}), `${method} 400`).toEqual(['application/json', 'application/problem+json']);
      expect(responses['400']!.description).toContain('-32700');
      expect(responses['401']!.headers).toHaveProperty('www-authenticate');
    }
  });

  it('spells every `all` flag the same way: the string `true` or `false`', () => {
    const all = (path: string) => doc.paths[path]!.get!.parameters!.find((p) => p.name === 'all' && p.in === 'query')!.schema;
    for (const path of ['/apikeys', '/policies', '/flows', '/runnable']) expect(all(path), path).toEqual(all('/apikeys'));
    expect(all('/apikeys')).toMatchObject({ type: 'string', enum: ['true', 'false'] });
  });

  it('passes `redocly lint` with the recommended rules: no error (warnings are listed)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arbiter-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(doc));
      const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
      const run = await promisify(execFile)(process.execPath, [cli, 'lint', '--extends=recommended', '--format=json', file], {
        maxBuffer: 64 * 1024 * 1024,
        timeout: 120_000,
        // redocly exits non-zero when it finds an error; its report is on stdout either way
      }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      const report = JSON.parse(run.stdout) as {
        totals: { errors: number; warnings: number };
        problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
      };
      const lines = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
      if (report.totals.warnings > 0) console.info(`redocly lint warnings:\n${lines.filter((l) => l.startsWith('warn')).join('\n')}`);
      expect(lines.filter((l) => l.startsWith('error'))).toEqual([]);
      expect(report.totals.errors).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
