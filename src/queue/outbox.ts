import type Database from 'better-sqlite3';
import { notifyEventSchema, type NotifyEvent, type StoredEvent } from '../core/events.ts';

type Awaitable<T> = T | Promise<T>;

/**
 * A destination's place in the outbox: every event before it is handled. Opaque to the sender, compared only by the
 * outbox: SQLite's is the id (one writer at a time, so ids commit in order); PostgreSQL's is "<xid>:<id>", as
 * transactions on different connections commit out of id order (queue/pg/outbox.ts).
 */
export type OutboxCursor = string;

/** Events after a cursor, each with the cursor just past it; `end`: past the last row read (rows this version cannot read included). */
export interface OutboxRead {
  events: Array<{ event: StoredEvent; cursor: OutboxCursor }>;
  end: OutboxCursor;
  /** As many rows as asked for were read: more may wait. */
  full: boolean;
}

/** A destination's turn, as `claim` gives it. */
export interface SendTurn {
  cursor: OutboxCursor;
  /** A batch the service took part of, as the sender recorded it (keepBatch), to go on from; its format is the sender's. */
  batch?: string;
  /** When the service last took a message (ms), by whichever relay sent it. */
  sentAt?: number;
}

/**
 * The queue's outbox: events written with the delivery state changes they tell of (the stores write them in the
 * same transaction), read in order by the notification sender (one cursor per destination) and the dashboard's
 * event stream. Nothing here sends anything.
 */
export interface Outbox {
  /** Adds events on their own (a hold that begins or ends; a test); delivery events go with their state change. */
  append(events: readonly NotifyEvent[]): Awaitable<void>;
  /** Events after `id`, by id, at most `limit` (the dashboard's stream: a live view, not a delivery). */
  after(id: number, limit: number): Awaitable<StoredEvent[]>;
  /** The newest event's id (0: none yet). */
  latestId(): Awaitable<number>;
  /**
   * The events a sender at `cursor` has not handled, oldest first, at most `limit`. Only events no transaction still
   * in progress can come before: one that commits later never lands behind a cursor that moved on.
   */
  read(cursor: OutboxCursor, limit: number): Awaitable<OutboxRead>;
  /** The cursor a reader starts at to get what is written from now on (the dashboard's stream). */
  head(): Awaitable<OutboxCursor>;
  /**
   * Takes (or renews) `relay`'s turn to send `destination`'s events until now + leaseMs; undefined while another
   * relay's turn holds. A destination seen for the first time starts after the newest event (it is not sent what
   * happened before it was configured).
   */
  claim(destination: string, relay: string, leaseMs: number, now: number): Awaitable<SendTurn | undefined>;
  /**
   * Records that `destination`'s events up to `cursor` are handled (only while `relay` holds the turn, and only
   * forward), and forgets its kept batch. `sentAt`: the service took a message then.
   */
  advance(destination: string, relay: string, cursor: OutboxCursor, sentAt?: number): Awaitable<void>;
  /** Records the batch being sent (`batch`: the sender's text) after the service took part of it, so a restart goes on from there. */
  keepBatch(destination: string, relay: string, batch: string, sentAt: number): Awaitable<void>;
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

/**
 * The outbox in the queue's SQLite file. Synchronous: the store calls `add` inside its own transactions. A cursor is
 * an id: SQLite lets one write transaction run at a time on the file (any connection, any process), and an id is
 * handed out inside it, so ids become visible in order and a later commit never has a lower id.
 */
export class SqliteOutbox implements Outbox {
  private readonly stmt;

  constructor(private readonly db: Database.Database) {
    this.stmt = {
      add: db.prepare(`INSERT INTO events (kind, at, body) VALUES (?, ?, ?)`),
      after: db.prepare<[number, number], { id: number; body: string }>(`SELECT id, body FROM events WHERE id > ? ORDER BY id LIMIT ?`),
      latest: db.prepare<[], { id: number | null }>(`SELECT max(id) AS id FROM events`),
      claim: db.prepare<[{ destination: string; relay: string; until: number; now: number }], { last_id: number; batch: string | null; sent_at: number | null }>(
        `INSERT INTO event_cursors (destination, last_id, relay, lease_until) VALUES (@destination, (SELECT coalesce(max(id), 0) FROM events), @relay, @until)
         ON CONFLICT (destination) DO UPDATE SET relay = excluded.relay, lease_until = excluded.lease_until
           WHERE event_cursors.relay IS excluded.relay OR event_cursors.lease_until IS NULL OR event_cursors.lease_until < @now
         RETURNING last_id, batch, sent_at`,
      ),
      advance: db.prepare(`UPDATE event_cursors SET last_id = ?, batch = NULL, sent_at = coalesce(?, sent_at) WHERE destination = ? AND relay = ? AND last_id <= ?`),
      keep: db.prepare(`UPDATE event_cursors SET batch = ?, sent_at = ? WHERE destination = ? AND relay = ?`),
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

  read(cursor: OutboxCursor, limit: number): OutboxRead {
    const rows = this.stmt.after.all(Number(cursor), limit);
    return readRows(rows, (r) => String(r.id), cursor, limit);
  }

  head(): OutboxCursor {
    return String(this.latestId());
  }

  claim(destination: string, relay: string, leaseMs: number, now: number): SendTurn | undefined {
    const row = this.stmt.claim.get({ destination, relay, until: now + leaseMs, now });
    return row && turn(String(row.last_id), row.batch, row.sent_at);
  }

  advance(destination: string, relay: string, cursor: OutboxCursor, sentAt?: number): void {
    this.stmt.advance.run(Number(cursor), sentAt ?? null, destination, relay, Number(cursor));
  }

  keepBatch(destination: string, relay: string, batch: string, sentAt: number): void {
    this.stmt.keep.run(batch, sentAt, destination, relay);
  }

  prune(before: number, maxRows: number): number {
    return this.stmt.prune.run(before, maxRows).changes;
  }
}

/** Rows read after `cursor` as an OutboxRead (both stores). */
export function readRows<R extends { id: number | string; body: string }>(rows: readonly R[], cursorOf: (r: R) => OutboxCursor, cursor: OutboxCursor, limit: number): OutboxRead {
  const events = rows.flatMap((r) => {
    const event = decodeEvent(r);
    return event ? [{ event, cursor: cursorOf(r) }] : [];
  });
  return { events, end: rows.length ? cursorOf(rows.at(-1)!) : cursor, full: rows.length >= limit };
}

/** A claimed cursor row as a SendTurn (both stores). */
export function turn(cursor: OutboxCursor, batch: string | null, sentAt: number | string | null): SendTurn {
  return { cursor, ...(batch ? { batch } : {}), ...(sentAt !== null ? { sentAt: Number(sentAt) } : {}) };
}
