import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createTestDatabase, createTestRedis, type TestDatabase, type TestRedis } from './support/servers.js';
import { newOrg, startGateway } from './support/gateway.js';

/** The body time-out of this file's gateway (BODY_TIMEOUT_MS), short so that its effect shows quickly. */
const BODY_TIMEOUT_MS = 1000;
/** How long a test waits for the server to close a connection before it says the server did not. */
const GIVE_UP_MS = 12_000;

let db: TestDatabase;
let redis: TestRedis;
let app: FastifyInstance;
let port: number;
let adminKey: string;

beforeAll(async () => {
  db = await createTestDatabase();
  redis = await createTestRedis();
  app = await startGateway(db, redis, { limits: { bodyTimeoutMs: BODY_TIMEOUT_MS } });
  adminKey = await newOrg(db, 'acme');
  port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port);
});

afterAll(async () => {
  await app?.close();
  await redis?.cleanup();
  await db?.drop();
});

/** What a raw connection saw: every byte the server sent, and whether and when the server closed it. */
interface Exchange {
  text: string;
  closed: boolean;
  afterMs: number;
}

/**
 * Opens a TCP connection to the gateway, lets `talk` write to it, and collects the server's bytes
 * until the server closes the connection, or {@link GIVE_UP_MS} passes (then `closed` is false).
 */
function exchange(talk: (socket: Socket) => void): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false, afterMs: Date.now() - started });
    }, GIVE_UP_MS);
    socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
    // The server may close while the client still writes: that is the point, not a failure.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    socket.on('close', () => {
      clearTimeout(giveUp);
      resolve({ text, closed: true, afterMs: Date.now() - started });
    });
    socket.on('connect', () => talk(socket));
  });
}

/** The HTTP responses in `text`, each as its status and its body. */
function responsesOf(text: string): Array<{ status: number; body: string }> {
  return text
    .split(/(?=HTTP\/1\.1 \d{3} )/)
    .filter((r) => r !== '')
    .map((r) => ({ status: Number(r.slice(9, 12)), body: r.slice(r.indexOf('\r\n\r\n') + 4) }));
}

/** Writes one byte every 200 ms while the socket is open (a client that never finishes its body). */
function dribble(socket: Socket): void {
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) clearInterval(timer);
    else socket.write(' ');
  }, 200);
  socket.on('close', () => clearInterval(timer));
}

describe('slow request bodies (BODY_TIMEOUT_MS)', () => {
  it('answers a body shorter than its content-length 408 and closes the connection once the body time-out passes', async () => {
    const seen = await exchange((socket) => {
      socket.write(
        `POST /run HTTP/1.1\r\nHost: x\r\nx-api-key: ${adminKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"rule":"x`,
      );
    });
    expect(seen.closed, `the connection was still open after ${GIVE_UP_MS} ms`).toBe(true);
    expect(seen.afterMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50);
    const responses = responsesOf(seen.text);
    expect(responses.map((r) => r.status)).toEqual([408]);
    expect(JSON.parse(responses[0]!.body)).toMatchObject({
      status: 408,
      code: 'bad_request',
      detail: 'the request was not received in time',
    });
  });

  it('closes the connection after a 401 whose body keeps dribbling in, with the 401 as the only answer', async () => {
    const seen = await exchange((socket) => {
      socket.write(`POST /run HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"rule":"x`);
      dribble(socket);
    });
    expect(seen.closed, `the connection was still open after ${GIVE_UP_MS} ms`).toBe(true);
    const responses = responsesOf(seen.text);
    expect(responses.map((r) => r.status)).toEqual([401]);
    expect(JSON.parse(responses[0]!.body)).toMatchObject({ code: 'unauthenticated' });
  });

  it('closes the connection after a 413 (content-length past the limit) whose body never comes', async () => {
    const seen = await exchange((socket) => {
      socket.write(
        `POST /run HTTP/1.1\r\nHost: x\r\nx-api-key: ${adminKey}\r\ncontent-type: application/json\r\ncontent-length: ${2 * 1024 * 1024}\r\n\r\n{"rule":"x`,
      );
      dribble(socket);
    });
    expect(seen.closed, `the connection was still open after ${GIVE_UP_MS} ms`).toBe(true);
    expect(responsesOf(seen.text).map((r) => r.status)).toEqual([413]);
  });

  it('keeps the connection of a client that sent its whole body at once, after a 401 answered before the body was read', async () => {
    const body = JSON.stringify({ rule: 'x', data: { pad: 'p'.repeat(200_000) } });
    const seen = await exchange((socket) => {
      socket.write(`POST /run HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`);
      socket.write(body);
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nconnection: close\r\n\r\n');
    });
    expect(seen.closed).toBe(true);
    expect(responsesOf(seen.text).map((r) => r.status)).toEqual([401, 200]);
  });
});
