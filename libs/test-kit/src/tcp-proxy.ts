import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a real server, so a test can take the server away from one client (cut:
 * every connection dropped, new ones refused; or freeze: connections stay open and new ones are
 * accepted, but not a byte goes through, like a server that hangs) and give it back, without
 * touching the shared server.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private frozen = false;

  private constructor(
    private readonly target: { host: string; port: number },
    readonly port: number,
  ) {}

  /** Listens on a free port of 127.0.0.1 and forwards to `target`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const probe = createServer();
    const port = await new Promise<number>((resolve, reject) => {
      probe.once('error', reject);
      probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port));
    });
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const proxy = new TcpProxy(target, port);
    await proxy.restore();
    return proxy;
  }

  /** Accepts and forwards connections again; after {@link freeze}, the frozen connections are dropped first. */
  async restore(): Promise<void> {
    if (this.frozen) {
      this.frozen = false;
      for (const s of this.sockets) s.destroy();
      this.sockets.clear();
    }
    if (this.server) return;
    const server = createServer((client) => {
      if (this.frozen) {
        // Accepted and never answered, nor forwarded.
        this.sockets.add(client);
        client.on('close', () => this.sockets.delete(client));
        client.on('error', () => client.destroy());
        client.pause();
        return;
      }
      const upstream = connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /**
   * Stops forwarding until {@link restore}: open connections stay open but carry nothing more in
   * either direction, and new connections are accepted and left unanswered (a frozen server).
   */
  freeze(): void {
    this.frozen = true;
    for (const s of this.sockets) {
      s.unpipe();
      s.pause();
    }
  }

  /** Drops every connection and refuses new ones until {@link restore}. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
