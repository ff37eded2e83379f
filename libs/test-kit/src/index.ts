import { fileURLToPath } from 'node:url';

export { eventually, freePort, randomPrefix, deleteRedisKeys } from './helpers.js';
export { streamMessages, rejectionOf, principals, type StreamReader, type TestPrincipal } from './support.js';
export {
  type ServerName,
  type ServerUrls,
  type ServerPlan,
  SERVER_NAMES,
  SERVER_ENV,
  testServers,
  withDatabase,
  hostPort,
  probe,
  chooseServers,
} from './servers.js';
export { planServers, prepareServers } from './global-setup.js';
export { TcpProxy } from './tcp-proxy.js';
export { dropDatabases, CLEANUP_TIMEOUT_MS, CLEANUP_STATEMENT_TIMEOUT_MS } from './databases.js';
export {
  startRedisServer,
  startNatsServer,
  startNatsCluster,
  type OwnServer,
  type NatsCluster,
  type NatsClusterNode,
} from './own-servers.js';

/** The absolute path of the vitest global setup, for a package's `vitest.config.ts` (`globalSetup: [serversSetup]`). */
export const serversSetup: string = fileURLToPath(new URL('./global-setup.js', import.meta.url));
