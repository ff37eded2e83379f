import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { McpHttpResponse, McpSubject, OperatorsResponse, type McpHttpRequest, type Principal } from '@arbiter/contracts';
import { connectBus, createLogger, inProcessKit, type Bus } from '@arbiter/service-kit';
import { deleteRedisKeys, eventually, randomPrefix as newPrefix, testServers } from '@arbiter/test-kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpConfig } from '../src/config.js';
import { startMcp, type RunningMcp } from '../src/service.js';

export const { nats: NATS_URL, redis: REDIS_URL } = testServers();

const EXECUTION_MAIN = fileURLToPath(new URL('../../execution/dist/main.js', import.meta.url));

/** A subject prefix no other test file uses. */
export const randomPrefix = (): string => newPrefix('test_mcp');

/** A viewer's API-key principal, as the gateway would send it. */
export const VIEWER: Principal = { orgId: 'acme', userId: 'mara', role: 'viewer', apiKeyId: 'key-1', scopes: ['view'] };

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

/** Starts the mcp service in-process on `prefix`. */
export async function startTestMcp(prefix: string, logger: LogCapture['logger']): Promise<RunningMcp> {
  const config = McpConfig.parse({ NATS_URL, NATS_SUBJECT_PREFIX: prefix, MCP_TIMEOUT_MS: '5000' });
  return startMcp(inProcessKit('mcp', config, { logger }));
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
    await deleteRedisKeys(REDIS_URL, `${prefix}:`); // what the execution service wrote (its rule index)
  };
  const bus = await connectBus({
    url: NATS_URL,
    prefix,
    name: 'mcp-test-probe',
    logger: createLogger({ service: 'probe', level: 'silent' }),
  });
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`execution service exited with ${child.exitCode}: ${stderr}`);
        await bus.request('exec.operators', { principal: { orgId: 'acme', userId: 'probe', role: 'viewer' } }, OperatorsResponse, {
          timeoutMs: 2000,
        });
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  } catch (err) {
    await stop();
    throw err;
  } finally {
    await bus.close();
  }
  return { stop };
}

/** Sends one MCP HTTP exchange over the bus, as the gateway's `/mcp` route does, and returns the reply. */
export function exchange(bus: Bus, message: McpHttpRequest, requestId?: string): Promise<McpHttpResponse> {
  return bus.request(McpSubject.http, message, McpHttpResponse, { timeoutMs: 10_000, ...(requestId ? { requestId } : {}) });
}

/**
 * A `fetch` that carries each request of an MCP client over the bus as the gateway does (the MCP
 * headers and body, plus `principal`), so the official SDK client talks to the production endpoint.
 */
export function busFetch(bus: Bus, principal: Principal): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'accept', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id']) {
      const value = request.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    const body = request.method === 'POST' ? await request.text() : undefined;
    const reply = await exchange(bus, {
      method: request.method as McpHttpRequest['method'],
      headers,
      principal,
      ...(body !== undefined ? { body } : {}),
    });
    return new Response(reply.status === 202 ? null : reply.body, { status: reply.status, headers: reply.headers });
  };
}

/** An official SDK client talking Streamable HTTP to the mcp service over `bus`, as `principal`. */
export async function connectClient(bus: Bus, principal: Principal = VIEWER): Promise<Client> {
  const client = new Client({ name: 'arbiter-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('http://gateway.test/mcp'), { fetch: busFetch(bus, principal) }));
  return client;
}

/** A client-side bus on `prefix` (what the gateway would be). */
export function clientBus(prefix: string): Promise<Bus> {
  return connectBus({
    url: NATS_URL,
    prefix,
    name: 'mcp-test-client',
    logger: createLogger({ service: 'mcp-test-client', level: 'silent' }),
  });
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
