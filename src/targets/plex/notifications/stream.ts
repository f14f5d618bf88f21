import http from 'node:http';
import https from 'node:https';
import WebSocket from 'ws';
import type { Logger } from '../../../core/logger.ts';
import { parseSseEvent, parseWebsocketFrame, type ActivityEvent, type ParsedFrame } from './frames.ts';
import { SseReader } from './sse.ts';

export type Transport = 'websocket' | 'sse';

export type StreamState =
  | { kind: 'idle' }
  | { kind: 'connecting'; transport: Transport }
  | { kind: 'open'; transport: Transport; since: number }
  | { kind: 'down'; error: string; retryAt: number; attempt: number }
  | { kind: 'closed' };

export type StreamMessage =
  | { kind: 'activity'; event: ActivityEvent; at: number }
  | { kind: 'refused'; reason: string; at: number }
  | { kind: 'state'; state: StreamState };

export interface StreamOptions {
  /** PLEX_LOCAL_URL. */
  baseUrl: string;
  token: string;
  verifyTls?: boolean;
  log: Logger;
  /** Tried in this order; the one that worked last is tried first next time. */
  transports?: Transport[];
  /** Reconnect backoff: first wait, doubling up to the max; back to the first after a connection opened. */
  backoffMs?: number;
  backoffMaxMs?: number;
  /**
   * Keep-alive. SSE: Plex sends a `ping` event every 10 s, so silence this long means a dead connection.
   * Websocket: a ping every this long; no pong before the next one means a dead connection.
   */
  keepaliveMs?: number;
  /** A connection attempt that has not opened after this long fails. */
  connectTimeoutMs?: number;
}

/** One open connection, whatever its transport. */
interface Connection {
  close(): void;
}

interface ConnectionHooks {
  onOpen(): void;
  onFrame(frame: ParsedFrame): void;
  /** Called once: the connection failed to open, or closed after it opened. */
  onEnd(reason: string): void;
}

/**
 * The one long-lived connection to Plex's notification stream (docs/protocols.md, "Plex's notification
 * stream"): the websocket `/:/websockets/notifications`, or Server-Sent Events at `/:/eventsource/notifications`
 * when the websocket is refused (an old server, a proxy that drops upgrades). Reconnects with backoff, forever,
 * until closed. Frames become typed activity events through the schema in frames.ts; what it does not
 * understand is passed on as "refused" (and logged), never as an event. Its sockets and timers never keep the
 * process alive.
 */
export class PlexNotificationStream {
  private current: StreamState = { kind: 'idle' };
  private readonly listeners = new Set<(m: StreamMessage) => void>();
  private conn: Connection | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private preferred: Transport;
  private wasOpen = false;
  private readonly opts: Required<Omit<StreamOptions, 'verifyTls'>> & { verifyTls: boolean };

  constructor(opts: StreamOptions) {
    this.opts = {
      transports: ['websocket', 'sse'],
      backoffMs: 1000,
      backoffMaxMs: 60_000,
      keepaliveMs: 30_000,
      connectTimeoutMs: 10_000,
      verifyTls: true,
      ...opts,
    };
    this.preferred = this.opts.transports[0]!;
  }

  get state(): StreamState {
    return this.current;
  }

  /** The transport in use, when a connection is open. */
  get openTransport(): Transport | undefined {
    return this.current.kind === 'open' ? this.current.transport : undefined;
  }

  subscribe(fn: (m: StreamMessage) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Connects (once; later calls do nothing). */
  start(): void {
    if (this.current.kind !== 'idle') return;
    this.connect();
  }

  close(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const conn = this.conn;
    this.conn = undefined;
    this.setState({ kind: 'closed' });
    conn?.close();
  }

  /** Drops the open connection as a network fault would (tests, and a keep-alive that found it dead). */
  drop(): void {
    this.conn?.close();
  }

  private emit(m: StreamMessage): void {
    for (const fn of this.listeners) fn(m);
  }

  private setState(state: StreamState): void {
    this.current = state;
    this.emit({ kind: 'state', state });
  }

  private connect(): void {
    if (this.current.kind === 'closed') return;
    const order = [this.preferred, ...this.opts.transports.filter((t) => t !== this.preferred)];
    this.tryTransport(order, 0, []);
  }

  private tryTransport(order: Transport[], i: number, errors: string[]): void {
    if (this.current.kind === 'closed') return;
    const transport = order[i];
    if (!transport) return this.down(errors.join('; '));
    this.setState({ kind: 'connecting', transport });
    let opened = false;
    let ended = false;
    let conn: Connection | undefined;
    const hooks: ConnectionHooks = {
      onOpen: () => {
        if (ended || this.current.kind === 'closed') return;
        opened = true;
        this.attempt = 0;
        this.preferred = transport;
        this.wasOpen = true;
        this.opts.log.info({ transport }, `Plex notification stream connected (${transport === 'sse' ? 'Server-Sent Events' : 'websocket'}): a scan ends when Plex says it ended`);
        this.setState({ kind: 'open', transport, since: Date.now() });
      },
      onFrame: (frame) => {
        if (ended) return;
        const at = Date.now();
        for (const reason of frame.refused) {
          this.opts.log.warn({ transport, reason }, 'Plex notification not understood; ignored (the scan watch checks /activities instead)');
          this.emit({ kind: 'refused', reason, at });
        }
        for (const event of frame.events) this.emit({ kind: 'activity', event, at });
      },
      onEnd: (reason) => {
        if (ended) return;
        ended = true;
        if (this.conn === conn) this.conn = undefined;
        if (this.current.kind === 'closed') return;
        if (opened) this.down(`${transport}: ${reason}`);
        else this.tryTransport(order, i + 1, [...errors, `${transport}: ${reason}`]);
      },
    };
    conn = transport === 'websocket' ? this.openWebsocket(hooks) : this.openSse(hooks);
    if (!ended) this.conn = conn;
  }

  private down(error: string): void {
    this.attempt++;
    const waitMs = Math.min(this.opts.backoffMaxMs, this.opts.backoffMs * 2 ** Math.min(20, this.attempt - 1));
    const ctx = { error, retryInS: waitMs / 1000, attempt: this.attempt };
    if (this.attempt === 1 && this.wasOpen) this.opts.log.warn(ctx, 'Plex notification stream lost: polling /activities until it is back');
    else if (this.attempt === 1) this.opts.log.info(ctx, 'Plex notification stream not available: polling /activities meanwhile');
    else this.opts.log.debug(ctx, 'Plex notification stream still not available');
    this.setState({ kind: 'down', error, retryAt: Date.now() + waitMs, attempt: this.attempt });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect();
    }, waitMs);
    this.retryTimer.unref();
  }

  private url(path: string, ws: boolean): string {
    const base = this.opts.baseUrl.endsWith('/') ? this.opts.baseUrl : `${this.opts.baseUrl}/`;
    const url = new URL(path.replace(/^\//, ''), base);
    if (ws) url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('filters', 'activity');
    return url.toString();
  }

  private openWebsocket(hooks: ConnectionHooks): Connection {
    const ws = new WebSocket(this.url('/:/websockets/notifications', true), {
      // JSON, as every other call: Plex answers XML unless asked for JSON.
      headers: { 'X-Plex-Token': this.opts.token, Accept: 'application/json' },
      rejectUnauthorized: this.opts.verifyTls,
      handshakeTimeout: this.opts.connectTimeoutMs,
      perMessageDeflate: false,
    });
    let keepalive: NodeJS.Timeout | undefined;
    let alive = true;
    const end = (reason: string) => {
      if (keepalive) clearInterval(keepalive);
      hooks.onEnd(reason);
    };
    ws.on('upgrade', (res) => res.socket.unref());
    ws.on('unexpected-response', (req, res) => {
      // A server or proxy that does not upgrade: say what it answered, and drop the request.
      end(`HTTP ${res.statusCode ?? '?'} instead of a websocket`);
      res.resume();
      req.destroy();
    });
    ws.on('open', () => {
      hooks.onOpen();
      keepalive = setInterval(() => {
        if (!alive) {
          ws.terminate();
          return end(`no pong within ${this.opts.keepaliveMs / 1000} s`);
        }
        alive = false;
        ws.ping();
      }, this.opts.keepaliveMs);
      keepalive.unref();
    });
    ws.on('pong', () => (alive = true));
    ws.on('message', (data: WebSocket.RawData) => hooks.onFrame(parseWebsocketFrame(Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8'))));
    ws.on('error', (err) => end(err.message));
    ws.on('close', (code) => end(`closed (code ${code})`));
    return { close: () => ws.terminate() };
  }

  private openSse(hooks: ConnectionHooks): Connection {
    const url = new URL(this.url('/:/eventsource/notifications', false));
    const lib = url.protocol === 'https:' ? https : http;
    let last = Date.now();
    let watchdog: NodeJS.Timeout | undefined;
    const end = (reason: string) => {
      if (watchdog) clearInterval(watchdog);
      hooks.onEnd(reason);
    };
    const req = lib.request(url, {
      headers: { 'X-Plex-Token': this.opts.token, Accept: 'text/event-stream, application/json' },
      agent: false,
      ...(url.protocol === 'https:' ? { rejectUnauthorized: this.opts.verifyTls } : {}),
    });
    req.on('socket', (s) => s.unref());
    req.setTimeout(this.opts.connectTimeoutMs, () => req.destroy(new Error(`no answer within ${this.opts.connectTimeoutMs / 1000} s`)));
    req.on('error', (err) => end(err.message));
    req.on('response', (res) => {
      const type = String(res.headers['content-type'] ?? '');
      if (res.statusCode !== 200 || !type.startsWith('text/event-stream')) {
        res.resume();
        req.destroy();
        return end(`HTTP ${res.statusCode ?? '?'}${res.statusCode === 200 ? ` with ${type || 'no content type'}` : ''} instead of an event stream`);
      }
      req.setTimeout(0);
      hooks.onOpen();
      const reader = new SseReader((name, data) => hooks.onFrame(parseSseEvent(name, data)));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        last = Date.now();
        reader.push(chunk);
      });
      res.on('end', () => end('the server ended the event stream'));
      res.on('close', () => end('the event stream closed'));
      watchdog = setInterval(() => {
        if (Date.now() - last < this.opts.keepaliveMs) return;
        req.destroy();
        end(`nothing received for ${this.opts.keepaliveMs / 1000} s (Plex pings every 10 s)`);
      }, Math.max(50, Math.floor(this.opts.keepaliveMs / 4)));
      watchdog.unref();
    });
    req.end();
    return { close: () => req.destroy() };
  }
}
