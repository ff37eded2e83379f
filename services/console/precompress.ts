import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Plugin } from 'vite';

/** Files worth compressing; smaller ones gain nothing over the bytes of the headers. */
const MIN_BYTES = 1024;
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|map)$/;

/**
 * Writes `<file>.br` and `<file>.gz` next to each compressible built asset, once at build time, so
 * the gateway sends them as they are to a browser that accepts them (`@fastify/static`'s
 * `preCompressed`), with no compression work per request.
 */
export function precompress(): Plugin {
  let outDir = 'dist';
  return {
    name: 'arbiter-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async closeBundle() {
      const assets = path.join(outDir, 'assets');
      for (const name of await readdir(assets)) {
        const file = path.join(assets, name);
        if (!COMPRESSIBLE.test(name) || (await stat(file)).size < MIN_BYTES) continue;
        const raw = await readFile(file);
        await writeFile(
          `${file}.br`,
          brotliCompressSync(raw, {
            params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
          }),
        );
        await writeFile(`${file}.gz`, gzipSync(raw, { level: constants.Z_BEST_COMPRESSION }));
      }
    },
  };
}
