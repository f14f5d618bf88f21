import type Database from 'better-sqlite3';
import { notifyEventSchema, type NotifyEvent, type StoredEvent } from '../core/events.ts';

type Awaitable<T> = T | Promise<T>;

/**
 * The queue's outbox: events written with the delivery state changes they tell of (the stores write them in the
 * same transaction), read in id order by the notification sender (one cursor per destination) and the
 * dashboard's event stream. Nothing here sends anything.
 */
export interface Outbox {
  /** Adds events on their own (a hold that begins or ends; a test); delivery events go with their state change. */
  append(events: readonly NotifyEvent[]): Awaitable<void>;
  /** Events after `id`, oldest first, at most `limit`. */
  after(id: number, limit: number): Awaitable<StoredEvent[]>;
  /** The newest event's id (0: none yet). */
  latestId(): Awaitable<number>;
  /**
   * Takes (or renews) `relay`'s turn to send `destination`'s events until now + leaseMs, and returns the last id
   * sent; undefined while another relay's turn holds. A destination seen for the first time starts at the newest
   * event (it is not sent what happened before it was configured).
   */
  claim(destination: string, relay: string, leaseMs: number, now: number): Awaitable<number | undefined>;
  /** Records that `destination`'s events up to `lastId` are sent (only while `relay` holds the turn). */
  advance(destination: string, relay: string, lastId: number): Awaitable<void>;
  /** Drops events older than `before`, and the oldest beyond `maxRows`. Returns how many went. */
  prune(before: number, maxRows: number): Awaitable<number>;
}

/** An outbox row's body: the event without the columns it is stored in. */
export function encodeEvent(e: NotifyEvent): string {
  return JSON.stringify(e);
}

/** A stored row back to an event; a row this version cannot read (written by a newer one) is skipped. */
export function decodeEvent(row: { id: number | string; body: string }): StoredEvent | undefined {
  try {
    const parsed = notifyEventSchema.safeParse(JSON.parse(row.body));
    return parsed.success ? { ...parsed.data, id: Number(row.id) } : undefined;
  } catch {
    return undefined;
  }
}

/** The outbox in the queue's SQLite file. Synchronous: the store calls `add` inside its own transactions. */
export class SqliteOutbox implements Outbox {
  private readonly stmt;

  constructor(private readonly db: Database.Database) {
    this.stmt = {
      add: db.prepare(`INSERT INTO events (kind, at, body) VALUES (?, ?, ?)`),
      after: db.prepare<[number, number], { id: number; body: string }>(`SELECT id, body FROM events WHERE id > ? ORDER BY id LIMIT ?`),
      latest: db.prepare<[], { id: number | null }>(`SELECT max(id) AS id FROM events`),
      claim: db.prepare<[{ destination: string; relay: string; until: number; now: number }], { last_id: number }>(
        `INSERT INTO event_cursors (destination, last_id, relay, lease_until) VALUES (@destination, (SELECT coalesce(max(id), 0) FROM events), @relay, @until)
         ON CONFLICT (destination) DO UPDATE SET relay = excluded.relay, lease_until = excluded.lease_until
           WHERE event_cursors.relay IS excluded.relay OR event_cursors.lease_until IS NULL OR event_cursors.lease_until < @now
         RETURNING last_id`,
      ),
      advance: db.prepare(`UPDATE event_cursors SET last_id = max(last_id, ?) WHERE destination = ? AND relay = ?`),
      prune: db.prepare(`DELETE FROM events WHERE at < ? OR id <= (SELECT max(id) FROM events) - ?`),
    };
  }

  /** Writes events in the caller's transaction (or its own statement). */
  add(events: readonly NotifyEvent[]): void {
    for (const e of events) this.stmt.add.run(e.kind, e.at, encodeEvent(e));
  }

  append(events: readonly NotifyEvent[]): void {
    this.db.transaction(() => this.add(events)).immediate();
  }

  after(id: number, limit: number): StoredEvent[] {
    return this.stmt.after.all(id, limit).map(decodeEvent).filter((e): e is StoredEvent => e !== undefined);
  }

  latestId(): number {
    return this.stmt.latest.get()?.id ?? 0;
  }

  claim(destination: string, relay: string, leaseMs: number, now: number): number | undefined {
    return this.stmt.claim.get({ destination, relay, until: now + leaseMs, now })?.last_id;
  }

  advance(destination: string, relay: string, lastId: number): void {
    this.stmt.advance.run(lastId, destination, relay);
  }

  prune(before: number, maxRows: number): number {
    return this.stmt.prune.run(before, maxRows).changes;
  }
}
