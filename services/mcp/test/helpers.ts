import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { fileURLToPath } from 'node:url';
import { encodePrincipalHeader, McpHeader, OperatorsResponse, type Principal } from '@arbiter/contracts';
import { connectBus, createLogger } from '@arbiter/service-kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpConfig } from '../src/config.js';
import { startMcp, type RunningMcp } from '../src/start.js';

export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const INTERNAL_TOKEN = 'test-internal-token-0123456789';

const EXECUTION_MAIN = fileURLToPath(new URL('../../execution/dist/main.js', import.meta.url));

/** A subject prefix no other test file uses. */
export function randomPrefix(): string {
  return `test_mcp_${randomBytes(6).toString('hex')}`;
}

/** A viewer's API-key principal, as the gateway would send it. */
export const VIEWER: Principal = { orgId: 'acme', userId: 'mara', role: 'viewer', apiKeyId: 'key-1', scopes: ['view'] };

/** Headers the gateway adds for `principal`, with the internal token unless it is `null`. */
export function gatewayHeaders(principal: Principal = VIEWER, token: string | null = INTERNAL_TOKEN): Record<string, string> {
  return {
    [McpHeader.principal]: encodePrincipalHeader(principal),
    ...(token === null ? {} : { [McpHeader.internalToken]: token }),
  };
}

/** Every log line written to a capturing logger. */
export interface LogCapture {
  lines: string[];
  logger: ReturnType<typeof createLogger>;
}

/** A debug-level service-kit logger writing into memory. */
export function captureLogger(): LogCapture {
  const lines: string[] = [];
  const logger = createLogger({ service: 'mcp-test', level: 'debug', destination: { write: (s: string) => void lines.push(s) } });
  return { lines, logger };
}

/** Starts the mcp service in-process on a free port. */
export async function startTestMcp(prefix: string, logger: LogCapture['logger'], internalToken: string | undefined = INTERNAL_TOKEN): Promise<RunningMcp> {
  const config = McpConfig.parse({
    NATS_URL,
    NATS_SUBJECT_PREFIX: prefix,
    MCP_PORT: '0',
    HOST: '127.0.0.1',
    MCP_TIMEOUT_MS: '5000',
    ...(internalToken === undefined ? {} : { MCP_INTERNAL_TOKEN: internalToken }),
  });
  return startMcp(config, logger);
}

/** Removes what the execution service wrote under `prefix` (its rule index), once it has stopped. */
async function deleteRedisKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  await redis.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A real execution service process (`services/execution/dist/main.js`) on `prefix`. */
export interface ExecutionProcess {
  stop(): Promise<void>;
}

/** Spawns the execution service and waits until it answers `exec.operators`. */
export async function startExecution(prefix: string): Promise<ExecutionProcess> {
  if (!existsSync(EXECUTION_MAIN)) {
    throw new Error(`${EXECUTION_MAIN} is missing: run \`npx turbo run build --filter=@arbiter/execution...\``);
  }
  const child: ChildProcess = spawn(process.execPath, [EXECUTION_MAIN], {
    env: {
      ...process.env,
      NATS_URL,
      REDIS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      LOG_LEVEL: 'warn',
      EXEC_POOL_SIZE: '1',
      OPS_PORT: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await deleteRedisKeys(prefix);
  };
  const bus = await connectBus({ url: NATS_URL, prefix, name: 'mcp-test-probe', logger: createLogger({ service: 'probe', level: 'silent' }) });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`execution service exited with ${child.exitCode}: ${stderr}`);
      try {
        await bus.request('exec.operators', {}, OperatorsResponse, { timeoutMs: 2000 });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } catch (err) {
    await stop();
    throw err;
  } finally {
    await bus.close();
  }
  return { stop };
}

/** The address of a running service's MCP endpoint, with an optional query string. */
export function mcpUrl(mcp: RunningMcp, query = ''): URL {
  return new URL(`http://127.0.0.1:${mcp.port}/mcp${query}`);
}

/** An official SDK client connected over Streamable HTTP with `headers` on every request. */
export async function connectClient(url: URL, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'arbiter-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

/** The JSON of a tool result's first text content item. */
export function textJson(result: object): unknown {
  const content = (result as { content: { type: string; text: string }[] }).content;
  if (content[0]?.type !== 'text') throw new Error('first content item is not text');
  return JSON.parse(content[0].text);
}

/** The text of a tool result's first content item. */
export function firstText(result: object): string {
  return (result as { content: { type: string; text: string }[] }).content[0]?.text ?? '';
}
