/** Starts missing test servers as containers through testcontainers (loaded only when needed). */
import type { ServerName } from './servers.js';

/** A started container: its URL for the tests and how to stop it. */
export interface StartedServer {
  url: string;
  stop(): Promise<void>;
}

/** Whether a Docker (or compatible) runtime answers; a string says why not. */
export async function dockerAvailable(timeoutMs = 10_000): Promise<true | string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    await Promise.race([getContainerRuntimeClient(), deadline]);
    return true;
  } catch (err) {
    return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'unknown error';
  } finally {
    clearTimeout(timer);
  }
}

/** Starts one server: PostgreSQL 16 (trust auth), Redis 7, NATS 2 with JetStream (`-js`). */
export async function startContainer(name: ServerName): Promise<StartedServer> {
  const { GenericContainer, Wait } = await import('testcontainers');
  switch (name) {
    case 'postgres': {
      const c = await new GenericContainer('postgres:16-alpine')
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
        .start();
      return { url: `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`, stop: async () => void (await c.stop()) };
    }
    case 'redis': {
      const c = await new GenericContainer('redis:7-alpine')
        .withCommand(['redis-server', '--save', '', '--appendonly', 'no'])
        .withExposedPorts(6379)
        .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
        .start();
      return { url: `redis://${c.getHost()}:${c.getMappedPort(6379)}`, stop: async () => void (await c.stop()) };
    }
    case 'nats': {
      const c = await new GenericContainer('nats:2')
        .withCommand(['-js'])
        .withExposedPorts(4222)
        .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
        .start();
      return { url: `nats://${c.getHost()}:${c.getMappedPort(4222)}`, stop: async () => void (await c.stop()) };
    }
  }
}
