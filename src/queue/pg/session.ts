import pg from 'pg';
import type { Logger } from '../../core/logger.ts';
import { clientConfig } from '../../db/pg/connection.ts';

export const WAKE_CHANNEL = 'scanrelay_queue';

/**
 * A wake-up that says when something is due ("due <ms>"): a relay sets its timer for then instead of looking at
 * the queue at once. Any other payload (finished, retry, turn) means: look now.
 */
export const wakePayload = (at: number) => `due ${at}`;
const wakeTime = (payload: string | undefined) => (payload?.startsWith('due ') ? Number(payload.slice(4)) || undefined : undefined);

/**
 * This relay's one long-lived connection: it listens for the other relays' wake-ups (LISTEN/NOTIFY) and holds
 * the serial targets' turns as session-level advisory locks, which PostgreSQL keeps while the connection lives
 * (a relay stalled by a busy machine keeps them) and drops when it dies. A lock alone would free Plex's turn on
 * a connection blip while Plex still scans: TurnLeases pairs each lock with a lease row that outlives the
 * connection. When the connection is lost it is opened again (with backoff), and the locks with it (relock).
 */
export class QueueSession {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client | undefined> | undefined;
  private readonly listeners: Array<(at?: number) => void> = [];
  private readonly connected: Array<() => void> = [];
  private readonly locked = new Set<string>();
  private closed = false;
  private retryMs = 500;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly application: string,
    private readonly log?: Logger,
  ) {}

  onWake(listener: (at?: number) => void): void {
    this.listeners.push(listener);
  }

  /** Called each time the connection is (re)opened. */
  onConnect(listener: () => void): void {
    this.connected.push(listener);
  }

  /** Opens the connection (or waits for the one being opened). Undefined while PostgreSQL is unreachable. */
  async open(): Promise<pg.Client | undefined> {
    if (this.client || this.closed) return this.client;
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<pg.Client | undefined> {
    const client = new pg.Client(clientConfig(this.url, this.application));
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    client.on('notification', (msg) => {
      const at = wakeTime(msg.payload);
      for (const l of this.listeners) l(at);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${WAKE_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      this.reconnectLater(err as Error);
      return undefined;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return undefined;
    }
    this.retryMs = 500;
    this.client = client;
    for (const l of this.connected) l();
    // Whatever happened while the connection was down is looked at now.
    for (const l of this.listeners) l();
    return client;
  }

  private lost(client: pg.Client, err?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.locked.clear();
    if (!this.closed) this.reconnectLater(err);
  }

  private reconnectLater(err?: Error): void {
    if (this.closed || this.timer) return;
    this.log?.warn({ err: err?.message, retryInMs: this.retryMs }, 'the queue database connection is down; reconnecting');
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.open();
    }, this.retryMs);
    this.timer.unref?.();
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
  }

  /** Whether this connection holds the advisory lock of `key`. */
  holds(key: string): boolean {
    return this.locked.has(key);
  }

  /** Takes the advisory lock of `key`; false when another relay's connection holds it or the database is down. */
  async lock(key: string): Promise<boolean> {
    if (this.locked.has(key)) return true;
    const client = await this.open();
    if (!client) return false;
    try {
      const { rows } = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext('scanrelay.turn'), hashtext($1)) AS ok`, [key]);
      const ok = rows[0]?.ok === true && this.client === client;
      if (ok) this.locked.add(key);
      return ok;
    } catch {
      return false;
    }
  }

  async unlock(key: string): Promise<void> {
    if (!this.locked.delete(key)) return;
    const client = this.client;
    try {
      await client?.query(`SELECT pg_advisory_unlock(hashtext('scanrelay.turn'), hashtext($1))`, [key]);
    } catch {
      // The connection is gone, and the lock with it.
    }
  }

  /** Whether the listening connection is up and answers (the health check). */
  async healthy(): Promise<boolean> {
    const client = this.client;
    if (!client) return false;
    try {
      await client.query('SELECT 1');
      return this.client === client;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
