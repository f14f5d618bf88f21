import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { AddressInfo, Socket } from 'node:net';

/**
 * up: serves; error503: answers 503; down: the port is closed (connection refused); hang: accepts and never answers
 * (a server whose process is stuck: the connection stays open until the client gives up).
 */
export type ServerMode = 'up' | 'error503' | 'down' | 'hang';

/**
 * The part every fake media server shares: listen on 127.0.0.1 (random port), and switch between up,
 * 503 and down while keeping the same port, so a client sees an outage and a recovery.
 */
export abstract class SwitchableServer {
  protected mode: ServerMode = 'up';
  private server: Server | undefined;
  private sockets = new Set<Socket>();
  private port = 0;
  /** HTTPS with this key and certificate (PEM), set with useTls before start. */
  private tls: { key: string; cert: string } | undefined;

  protected abstract handle(req: IncomingMessage, res: ServerResponse): Promise<void>;

  /** An HTTP upgrade (websocket); a server without websockets refuses it. */
  protected handleUpgrade(_req: IncomingMessage, socket: Duplex, _head: Buffer): void {
    socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  }

  get url(): string {
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${this.port}`;
  }

  /** Serve HTTPS (call before start): a real TLS handshake with this certificate. */
  useTls(tls: { key: string; cert: string }): this {
    this.tls = tls;
    return this;
  }

  async start(port = 0): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res);
    const server: Server = this.tls ? createHttpsServer(this.tls, handler) : createServer(handler);
    // 'connection' is the TCP socket for both (https.Server extends tls.Server extends net.Server).
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.handleUpgrade(req, socket, head));
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port || this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    this.mode = 'up';
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** 'down' closes the port, 'error503' answers 503, 'up' serves again on the same port. */
  async setMode(mode: ServerMode): Promise<void> {
    if (mode === 'down') await this.stop();
    else if (!this.server) await this.start(this.port);
    this.mode = mode;
  }
}
