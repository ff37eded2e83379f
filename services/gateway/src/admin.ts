import { parseArgs } from 'node:util';
import { isArbiterError } from '@arbiter/contracts';
import { ConfigError, ensureDatabase, loadConfig, openDatabase } from '@arbiter/service-kit';
import { GatewayConfig } from './config.js';
import { migrateGateway } from './migrate.js';
import { BOOTSTRAP_ADMIN_USER, createOrgWithAdmin } from './identity/bootstrap.js';

const USAGE = 'usage: admin create-org <orgId> [--admin <userId>]';

/** `admin create-org <orgId> [--admin <userId>]`: creates an org and prints its first admin key. */
async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { admin: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [command, orgId, ...rest] = positionals;
  if (values.help || command !== 'create-org' || orgId === undefined || rest.length > 0) {
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
    const created = await createOrgWithAdmin(db, orgId, values.admin ?? BOOTSTRAP_ADMIN_USER);
    process.stdout.write(
      `Created org \`${created.orgId}\` with admin \`${created.userId}\`.\nAdmin API key (shown once, store it now):\n  ${created.key}\n`,
    );
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
