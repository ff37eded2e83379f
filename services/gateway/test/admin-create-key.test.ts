import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { ArbiterEvent } from '@arbiter/contracts';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_OUTBOX_TABLE } from '../src/events/outbox.js';
import type { TestDatabase, TestRedis } from './support/servers.js';
import { closeGatewayEnv, openGatewayEnv } from './support/app-env.js';
import { withKey } from './support/gateway.js';

// `npm run admin -- create-key <org> <user>`: the built dist/admin.js, as an operator runs it.
const execute = promisify(execFile);
const script = fileURLToPath(new URL('../dist/admin.js', import.meta.url));

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let adminKey: string;

beforeAll(async () => {
  ({ db, redis, app, adminKey } = await openGatewayEnv());
  await app.inject({ method: 'PUT', url: '/users/alice', headers: withKey(adminKey), payload: { role: 'editor' } });
  await app.inject({ method: 'PUT', url: '/users/capped', headers: withKey(adminKey), payload: { role: 'viewer' } });
});

afterAll(() => closeGatewayEnv({ app, redis, db }));

/** Runs the admin script; resolves with its exit code and output either way. */
async function admin(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execute(process.execPath, [script, ...args], {
      env: { ...process.env, DATABASE_URL: db.url, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const keyIn = (stdout: string): string => /^\s+(arb_\S+)$/m.exec(stdout)?.[1] ?? '';
const me = (key: string) => app.inject({ method: 'GET', url: '/me', headers: withKey(key) });

// Each run starts a Node process and connects to PostgreSQL: seconds each on a loaded machine.
describe('admin create-key', { timeout: 90_000 }, () => {
  it('prints a key owned by the member with every scope of the role, audited as issued by the command line', async () => {
    const out = await admin(['create-key', 'acme', 'alice']);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('Issued API key `issued with the admin command line` for `alice` in org `acme` (scopes: view, edit).');
    const key = keyIn(out.stdout);
    expect((await me(key)).json()).toMatchObject({ orgId: 'acme', userId: 'alice', role: 'editor', scopes: ['view', 'edit'] });

    const events = (await db.db(GATEWAY_OUTBOX_TABLE).orderBy('id').select('payload')).map((r: { payload: ArbiterEvent }) => r.payload);
    const created = events.filter((e) => e.kind === 'key created' && e.details.owner === 'alice');
    expect(created).toEqual([
      expect.objectContaining({
        orgId: 'acme',
        actor: { userId: 'admin-cli' },
        details: expect.objectContaining({ owner: 'alice', issuedBy: 'admin-cli', scopes: ['view', 'edit'] }),
      }),
    ]);
    expect(JSON.stringify(created)).not.toContain(key);
  });

  it('takes --scopes (comma-separated or repeated) and --name', async () => {
    const out = await admin(['create-key', 'acme', 'alice', '--scopes', 'view', '--name', 'laptop']);
    expect(out.code).toBe(0);
    expect((await me(keyIn(out.stdout))).json()).toMatchObject({ userId: 'alice', scopes: ['view'] });
    const both = await admin(['create-key', 'acme', 'alice', '--scopes', 'view,edit', '--name', 'ci']);
    expect((await me(keyIn(both.stdout))).json()).toMatchObject({ scopes: ['view', 'edit'] });
  });

  it('refuses, with the reason and exit code 1, a stranger, scopes past the role and bad input', async () => {
    expect(await admin(['create-key', 'acme', 'nobody'])).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'error: user `nobody` is not a member of org `acme`\n',
    });
    expect(await admin(['create-key', 'other', 'alice'])).toMatchObject({
      code: 1,
      stderr: 'error: user `alice` is not a member of org `other`\n',
    });
    expect(await admin(['create-key', 'acme', 'alice', '--scopes', 'view,publish'])).toMatchObject({
      code: 1,
      stderr: 'error: scope `publish` exceeds the role of `alice`: role `editor` allows `view`, `edit`\n',
    });
    expect(await admin(['create-key', 'acme', 'alice', '--scopes', 'root'])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error: invalid scopes\.0: /),
    });
    expect(await admin(['create-key', 'Bad_Org', 'alice'])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error: invalid orgId: /),
    });
    expect(await admin(['create-key', 'acme', 'alice', '--name', ''])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error: invalid name: /),
    });
  });

  it('refuses a user at the key cap (APIKEYS_PER_USER_MAX) and creates nothing', async () => {
    expect((await admin(['create-key', 'acme', 'capped'], { APIKEYS_PER_USER_MAX: '1' })).code).toBe(0);
    expect(await admin(['create-key', 'acme', 'capped'], { APIKEYS_PER_USER_MAX: '1' })).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'error: `capped` already has 1 live API keys in org `acme` (the most allowed, APIKEYS_PER_USER_MAX): revoke one first\n',
    });
    expect(await db.db('api_keys').where({ org_id: 'acme', user_id: 'capped' }).count('* as n').first()).toEqual({ n: '1' });
  });

  it('prints the usage with exit code 2 for a missing argument or an unknown command', async () => {
    for (const args of [['create-key', 'acme'], ['create-key', 'acme', 'alice', 'extra'], ['toString']]) {
      const out = await admin(args);
      expect(out.code, args.join(' ')).toBe(2);
      expect(out.stderr).toContain('admin create-key <orgId> <userId> [--scopes <scope,...>] [--name <name>]');
    }
  });
});
