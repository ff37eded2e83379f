import { readFileSync } from 'node:fs';

/** The `version` of the package.json at `packageJsonUrl` (e.g. `new URL('../package.json', import.meta.url)`). */
export function packageVersion(packageJsonUrl: URL): string {
  const pkg = JSON.parse(readFileSync(packageJsonUrl, 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}
