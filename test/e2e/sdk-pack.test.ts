/**
 * `@arbiter/sdk` installs and runs outside the monorepo: `npm pack` of the SDK and the
 * four workspace packages it depends on, `npm install` of the five tarballs into an empty folder
 * (third-party packages from the registry), then the quick-start example of docs/sdk.md, run by
 * Node from that folder against a started stack; and the browser entry `@arbiter/sdk/client`.
 */

import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './harness.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'arbiter-sdk-pack-'));
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ services: ['registry', 'execution', 'gateway'] });
});
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The code block after the quick-start marker of docs/sdk.md. */
function quickStart(): string {
  const doc = readFileSync(path.join(root, 'docs/sdk.md'), 'utf8');
  const after = doc.slice(doc.indexOf('<!-- example: quick start'));
  const block = /```js\n([\s\S]*?)```/.exec(after);
  if (!block) throw new Error('docs/sdk.md has no quick-start example');
  return block[1];
}

describe('the packed SDK', () => {
  it('installs from its tarballs into an empty folder and runs the docs example against a stack', () => {
    const npm = (args: string[], cwd: string) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    npm(
      [
        'pack',
        '--pack-destination',
        dir,
        '-w',
        '@arbiter/contracts',
        '-w',
        '@arbiter/rule-lang',
        '-w',
        '@arbiter/flow',
        '-w',
        '@arbiter/run',
        '-w',
        '@arbiter/sdk',
      ],
      root,
    );
    const tarballs = readdirSync(dir)
      .filter((f) => f.endsWith('.tgz'))
      .sort();
    expect(tarballs).toEqual([
      'arbiter-contracts-0.1.0.tgz',
      'arbiter-flow-0.1.0.tgz',
      'arbiter-rule-lang-0.1.0.tgz',
      'arbiter-run-0.1.0.tgz',
      'arbiter-sdk-0.1.0.tgz',
    ]);

    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
    npm(['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs.map((t) => `./${t}`)], dir);
    for (const pkg of ['sdk', 'contracts', 'rule-lang', 'flow', 'run']) {
      const installed = path.join(dir, 'node_modules/@arbiter', pkg);
      expect(lstatSync(installed).isSymbolicLink(), pkg).toBe(false);
      expect(realpathSync(installed).startsWith(realpathSync(dir)), pkg).toBe(true);
    }

    writeFileSync(path.join(dir, 'example.mjs'), quickStart());
    const out = execFileSync(process.execPath, ['example.mjs'], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ARBITER_URL: stack.baseUrl, ARBITER_API_KEY: stack.adminKey },
    });
    expect(out.trim().split('\n')).toEqual(['true 1', 'true', '404 not_found']);

    // The browser entry (the console's): the client alone, and the zod-free error class it throws.
    writeFileSync(
      path.join(dir, 'client.mjs'),
      [
        "import { ArbiterClient, ArbiterError } from '@arbiter/sdk/client';",
        "import { ArbiterError as FromContracts } from '@arbiter/contracts';",
        'const api = new ArbiterClient({ baseUrl: process.env.ARBITER_URL, apiKey: process.env.ARBITER_API_KEY, retries: { max: 0 } });',
        'console.log((await api.me()).role, (await api.policies.list({ pageSize: 1 }).page()).items.length);',
        "const err = await api.policies.get('0190a0b0-0000-7000-8000-00000000dead').catch((e) => e);",
        'console.log(err instanceof ArbiterError, err instanceof FromContracts, err.status, err.code);',
      ].join('\n'),
    );
    const client = execFileSync(process.execPath, ['client.mjs'], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ARBITER_URL: stack.baseUrl, ARBITER_API_KEY: stack.adminKey },
    });
    expect(client.trim().split('\n')).toEqual(['admin 1', 'true true 404 not_found']);
  }, 240_000);
});
