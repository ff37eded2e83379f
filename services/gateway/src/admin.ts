import { parseArgs } from 'node:util';
import { isArbiterError } from '@arbiter/contracts';
import { ConfigError, ensureDatabase, loadConfig, openDatabase } from '@arbiter/service-kit';
import type { Knex } from 'knex';
import { GatewayConfig } from './config.js';
import { gatewayOutbox } from './events/outbox.js';
import { migrateGateway } from './migrate.js';
import { BOOTSTRAP_ADMIN_USER, createOrgWithAdmin } from './identity/bootstrap.js';
import { KeyIssuer } from './identity/key-issuer.js';

const USAGE = [
  'usage: admin create-org <orgId> [--admin <userId>]',
  '       admin create-key <orgId> <userId> [--scopes <scope,...>] [--name <name>]',
].join('\n');

/** One command: its positional arguments after the command name, and its options. */
interface Command {
  readonly args: string[];
  readonly values: { admin?: string | undefined; scopes?: string[] | undefined; name?: string | undefined };
}

/** The commands, each run against the migrated identity database; each prints what it made. */
const COMMANDS: Record<string, { arity: number; run: (db: Knex, config: GatewayConfig, c: Command) => Promise<string> }> = {
  /** Creates an org and prints its first admin key. */
  'create-org': {
    arity: 1,
    run: async (db, _config, { args: [orgId], values }) => {
      const created = await createOrgWithAdmin(db, orgId, values.admin ?? BOOTSTRAP_ADMIN_USER);
      return `Created org \`${created.orgId}\` with admin \`${created.userId}\`.\nAdmin API key (shown once, store it now):\n  ${created.key}\n`;
    },
  },
  /**
   * Issues a key owned by a member of an org (scopes: the member's role by default) and prints it;
   * the `key created` event waits in the gateway's outbox until a gateway relays it.
   */
  'create-key': {
    arity: 2,
    run: async (db, config, { args: [orgId, userId], values }) => {
      const issuer = new KeyIssuer(db, gatewayOutbox(db).events, () => new Date(), config.APIKEYS_PER_USER_MAX);
      const scopes = values.scopes?.flatMap((s) => s.split(',')).map((s) => s.trim());
      const created = await issuer.issueAsOperator(orgId, userId, {
        ...(values.name !== undefined ? { name: values.name } : {}),
        ...(scopes !== undefined ? { scopes } : {}),
      });
      return (
        `Issued API key \`${created.name}\` for \`${created.owner}\` in org \`${orgId}\` (scopes: ${created.scopes.join(', ')}).\n` +
        `API key (shown once, hand it over and store it now):\n  ${created.key}\n`
      );
    },
  },
};

/** `admin <command> ...` (see {@link USAGE}): 0 done, 1 refused (the reason on stderr), 2 usage. */
async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        admin: { type: 'string' },
        scopes: { type: 'string', multiple: true },
        name: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [name, ...args] = positionals;
  const command = name !== undefined && Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (values.help || command === undefined || args.length !== command.arity) {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  let config: GatewayConfig;
  try {
    config = loadConfig(GatewayConfig);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`error: ${err.message}\n`);
    return 1;
  }
  await ensureDatabase(config.DATABASE_URL, { connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS });
  const db = openDatabase(config.DATABASE_URL, { poolMax: 2, connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS });
  try {
    await migrateGateway(db);
    process.stdout.write(await command.run(db, config, { args, values }));
    return 0;
  } catch (err) {
    if (isArbiterError(err)) {
      process.stderr.write(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await db.destroy();
  }
}

process.exitCode = await main(process.argv.slice(2));
