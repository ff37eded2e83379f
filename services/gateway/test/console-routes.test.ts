/**
 * `/console`: the console's static files and its page for client routes, served by a
 * real HTTP server from a folder laid out like `vite build` output; a missing build or file is a
 * problem document, never a bare 500 or HTML in place of a script.
 */

import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installProblemHandlers } from '../src/http/problem.js';
import { CONSOLE_CSP, consoleRoutes, defaultConsoleDir } from '../src/routes/console-routes.js';

const INDEX =
  '<!doctype html><html><body><div id="root"></div><script type="module" src="/console/assets/app-1.js"></script></body></html>';

/** A bundle-sized script (compressible, as a real one is) and its build-time `.br` / `.gz` twins. */
const BIG = `export const rows = ${JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ row: i, label: `row ${i}` })))};\n`;

/** One GET with the raw bytes as sent (fetch would decompress them). */
function rawGet(url: string, acceptEncoding?: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function serve(root: string): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  installProblemHandlers(app);
  await app.register(consoleRoutes, { root });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url };
}

let dir: string;
let built: { app: FastifyInstance; url: string };
let missing: { app: FastifyInstance; url: string };

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'console-routes-'));
  const dist = path.join(dir, 'dist');
  mkdirSync(path.join(dist, 'assets'), { recursive: true });
  writeFileSync(path.join(dist, 'index.html'), INDEX);
  writeFileSync(path.join(dist, 'assets/app-1.js'), 'console.log(1);');
  writeFileSync(path.join(dist, 'assets/big-2.js'), BIG);
  writeFileSync(path.join(dist, 'assets/big-2.js.br'), brotliCompressSync(BIG));
  writeFileSync(path.join(dist, 'assets/big-2.js.gz'), gzipSync(BIG));
  writeFileSync(path.join(dir, 'secret.txt'), 'outside the root');
  built = await serve(dist);
  missing = await serve(path.join(dir, 'not-built'));
});

afterAll(async () => {
  await built?.app.close();
  await missing?.app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('console routes', () => {
  it('serves the page at /console with a content security policy and no caching', async () => {
    const res = await fetch(`${built.url}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(await res.text()).toBe(INDEX);
  });

  it('answers client routes under /console/ with the same page', async () => {
    for (const route of ['/console/', '/console/policies', '/console/policies/01a2-x', '/console/audit?kind=published']) {
      const res = await fetch(`${built.url}${route}`);
      expect(res.status, route).toBe(200);
      expect(await res.text(), route).toBe(INDEX);
    }
  });

  it('serves hashed assets with their type, cached for a year', async () => {
    const res = await fetch(`${built.url}/console/assets/app-1.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('javascript');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(await res.text()).toBe('console.log(1);');
  });

  it('sends the build-time brotli or gzip twin of an asset per Accept-Encoding, the plain file otherwise', async () => {
    const url = `${built.url}/console/assets/big-2.js`;
    const br = await rawGet(url, 'gzip, deflate, br, zstd');
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toContain('javascript');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.body.length).toBeLessThan(BIG.length / 4);
    expect(brotliDecompressSync(br.body).toString()).toBe(BIG);

    const gz = await rawGet(url, 'gzip');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(BIG);
    expect((await rawGet(url, 'br;q=0.5, gzip;q=1')).headers['content-encoding']).toBe('gzip');

    for (const accept of [undefined, 'identity', 'zstd']) {
      const plain = await rawGet(url, accept);
      expect(plain.headers['content-encoding'], String(accept)).toBeUndefined();
      expect(plain.body.toString(), String(accept)).toBe(BIG);
    }
    // an asset too small to have twins is sent plain to any browser
    const small = await rawGet(`${built.url}/console/assets/app-1.js`, 'br, gzip');
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.body.toString()).toBe('console.log(1);');
  });

  it('answers a missing asset 404 as a problem, not with the page', async () => {
    const res = await fetch(`${built.url}/console/assets/app-0.js`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(await res.json()).toMatchObject({ code: 'not_found', detail: 'no console file `assets/app-0.js`' });
  });

  it('never serves a file outside the build folder', async () => {
    const res = await fetch(`${built.url}/console/assets/..%2f..%2fsecret.txt`);
    expect(await res.text()).not.toContain('outside the root');
    const dotted = await fetch(`${built.url}/console/%2e%2e/secret.txt`);
    expect(await dotted.text()).not.toContain('outside the root');
  });

  it('answers 503 naming the fix when the console is not built', async () => {
    for (const route of ['/console', '/console/policies']) {
      const res = await fetch(`${missing.url}${route}`);
      expect(res.status, route).toBe(503);
      const body = (await res.json()) as { code: string; detail: string };
      expect(body.code).toBe('dependency_unavailable');
      expect(body.detail).toContain('npm run build');
    }
  });

  it('finds the built console through the @arbiter/console package', () => {
    expect(defaultConsoleDir()).toBe(path.resolve(import.meta.dirname, '../../console/dist'));
  });
});
