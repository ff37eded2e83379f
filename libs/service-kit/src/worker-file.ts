import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The runnable JavaScript of a worker module next to the calling module: `relative` (e.g.
 * `./worker.js`) beside `moduleUrl` when that file exists (the built service runs from `dist/`), else
 * the same path under the package's `dist/` (tests run the TypeScript sources from `src/`, and a
 * worker thread cannot load those).
 */
export function builtWorkerFile(moduleUrl: string, relative: string): URL {
  const sibling = new URL(relative, moduleUrl);
  if (existsSync(fileURLToPath(sibling))) return sibling;
  const built = new URL(sibling.href.replace(/\/src\/(?!.*\/src\/)/, '/dist/'));
  if (built.href === sibling.href || !existsSync(fileURLToPath(built))) {
    throw new Error(`worker file \`${fileURLToPath(sibling)}\` not found and no built copy under dist/: run \`npm run build\``);
  }
  return built;
}
