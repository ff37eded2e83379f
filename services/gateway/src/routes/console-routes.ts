import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ArbiterError } from '@arbiter/contracts';

/**
 * The console is a single-page app talking only to this API: scripts and styles from this origin
 * only, no framing. Styles allow inline (CodeMirror injects its theme as `<style>` elements).
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/** `dist/` of the `@arbiter/console` workspace package (found through its package.json, which every install has). */
export function defaultConsoleDir(): string {
  return path.join(path.dirname(createRequire(import.meta.url).resolve('@arbiter/console/package.json')), 'dist');
}

export interface ConsoleRoutesOptions {
  /** The console's built files (`vite build` output of `@arbiter/console`). */
  root: string;
}

/**
 * `/console`: the web console's static files, and its `index.html` for every client route under
 * `/console/*` (the app routes in the browser). Hashed assets are cached for a year (immutable)
 * and sent brotli- or gzip-compressed per `Accept-Encoding`; the page is never cached, so a new
 * build shows at the next load. Not built → 503 naming the fix.
 */
export async function consoleRoutes(app: FastifyInstance, opts: ConsoleRoutesOptions): Promise<void> {
  let indexHtml: string;
  try {
    indexHtml = await readFile(path.join(opts.root, 'index.html'), 'utf8');
  } catch {
    const notBuilt = async () => {
      throw new ArbiterError('dependency_unavailable', 'the console is not built: run `npm run build` (it builds services/console)');
    };
    app.get('/console', { schema: { hide: true } }, notBuilt);
    app.get('/console/*', { schema: { hide: true } }, notBuilt);
    return;
  }

  await app.register(fastifyStatic, {
    root: opts.root,
    prefix: '/console/',
    wildcard: false,
    index: false,
    decorateReply: false,
    serveDotFiles: false,
    cacheControl: false,
    // The build writes `.br` and `.gz` twins of the larger assets: sent as they are when the
    // browser accepts them (brotli first), the plain file otherwise.
    preCompressed: true,
    setHeaders: (res, filePath) => {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
      const hashed = filePath.includes(`${path.sep}assets${path.sep}`);
      res.setHeader('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      res.setHeader('vary', 'accept-encoding');
    },
  });

  const page = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply
      .headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache' })
      .type('text/html; charset=utf-8')
      .send(indexHtml);
  app.get('/console', { schema: { hide: true } }, page);
  app.get<{ Params: { '*': string } }>('/console/*', { schema: { hide: true } }, async (request, reply) => {
    // A missing asset is a 404, not the page (a stale bundle name must not load HTML as a script).
    if (request.params['*'].startsWith('assets/')) {
      throw new ArbiterError('not_found', `no console file \`${request.params['*'].slice(0, 200)}\``);
    }
    return page(request, reply);
  });
}
