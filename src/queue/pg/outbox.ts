import type pg from 'pg';
import type { NotifyEvent, StoredEvent } from '../../core/events.ts';
import { decodeEvent, encodeEvent, readRows, turn, type Outbox, type OutboxCursor, type OutboxRead, type SendTurn } from '../outbox.ts';
import { poolQuery } from '../../db/pg/connection.ts';
import type { DbClock } from '../../db/pg/clock.ts';

type Db = Pick<pg.ClientBase, 'query'>;

const INSERT = `INSERT INTO events (kind, at, body) SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[])`;
const insertParams = (events: readonly NotifyEvent[]) => [events.map((e) => e.kind), events.map((e) => Math.round(e.at)), events.map(encodeEvent)];

/** Writes events with the caller's transaction (`db`: its connection). */
export async function addEvents(db: Db, events: readonly NotifyEvent[]): Promise<void> {
  if (events.length) await db.query(INSERT, insertParams(events));
}

/** "<xid>:<id>" both ways; a plain id (a cursor from before) is xid 0. */
const cursorOf = (r: { xid: string; id: string | number }): OutboxCursor => `${r.xid}:${r.id}`;
function parseCursor(c: OutboxCursor): [string, string] {
  const [xid, id] = c.includes(':') ? c.split(':') : ['0', c];
  return [xid!, id!];
}

/** Only rows of transactions that ended before the oldest one still running: nothing can commit before them any more. */
const SETTLED = `xid < pg_snapshot_xmin(pg_current_snapshot())`;

/**
 * The outbox in the shared queue's database. A sender reads in (xid, id) order below the oldest running
 * transaction (migrations/008_outbox_order.sql says why), never by id alone. A destination's turn is a lease in event_cursors, taken and renewed
 * by one statement, so relays sharing the queue send each event once (a relay that dies hands over when its
 * lease runs out; what it was sending may then go twice, never not at all).
 */
export class PgOutbox implements Outbox {
  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    /** Relays compare leases on the database's clock (db/pg/clock.ts), never their own. */
    private readonly clock: DbClock,
  ) {}

  private q<R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    return poolQuery<R>(this.pool, this.url, sql, params);
  }

  async append(events: readonly NotifyEvent[]): Promise<void> {
    if (events.length) await this.q(INSERT, insertParams(events));
  }

  async after(id: number, limit: number): Promise<StoredEvent[]> {
    const { rows } = await this.q<{ id: string; body: string }>(`SELECT id, body FROM events WHERE id > $1 ORDER BY id LIMIT $2`, [id, limit]);
    return rows.map(decodeEvent).filter((e): e is StoredEvent => e !== undefined);
  }

  async latestId(): Promise<number> {
    const { rows } = await this.q<{ id: string | null }>(`SELECT max(id) AS id FROM events`, []);
    return Number(rows[0]?.id ?? 0);
  }

  async read(cursor: OutboxCursor, limit: number): Promise<OutboxRead> {
    const [xid, id] = parseCursor(cursor);
    const { rows } = await this.q<{ xid: string; id: string; body: string }>(
      `SELECT xid::text AS xid, id, body FROM events WHERE (xid, id) > ($1::xid8, $2::bigint) AND ${SETTLED} ORDER BY xid, id LIMIT $3`,
      [xid, id, limit],
    );
    return readRows(rows, cursorOf, cursor, limit);
  }

  async head(): Promise<OutboxCursor> {
    const { rows } = await this.q<{ xid: string }>(`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xid`, []);
    return `${rows[0]!.xid}:0`;
  }

  async claim(destination: string, relay: string, leaseMs: number, local: number): Promise<SendTurn | undefined> {
    const now = this.clock.toDb(local);
    // A new destination starts at the oldest running transaction: what it writes is still to come.
    const { rows } = await this.q<{ xid: string; id: string; batch: string | null; sent_at: string | null }>(
      `INSERT INTO event_cursors (destination, last_xid, last_id, relay, lease_until) VALUES ($1, pg_snapshot_xmin(pg_current_snapshot()), 0, $2, $3)
       ON CONFLICT (destination) DO UPDATE SET relay = EXCLUDED.relay, lease_until = EXCLUDED.lease_until
         WHERE event_cursors.relay IS NOT DISTINCT FROM EXCLUDED.relay OR event_cursors.lease_until IS NULL OR event_cursors.lease_until < $4
       RETURNING last_xid::text AS xid, last_id AS id, batch, sent_at`,
      [destination, relay, now + leaseMs, now],
    );
    const row = rows[0];
    if (!row) return undefined;
    const place = row.xid === '0' && row.id !== '0' ? ((await this.fromIdCursor(destination, relay, row.id)) ?? row) : row;
    return turn(cursorOf(place), row.batch, row.sent_at);
  }

  /**
   * A cursor that is an id alone (xid 0): written before migration 008, or by a relay of an older release still
   * running beside this one during an upgrade, which moves last_id only. "Every id up to `id` is handled" becomes
   * the (xid, id) place before the first event after it (an event committed late below it may go twice, none is
   * skipped), and is written back. Undefined: the id cursor is right as it is (events from before 008 still wait).
   */
  private async fromIdCursor(destination: string, relay: string, id: string): Promise<{ xid: string; id: string } | undefined> {
    const { rows } = await this.q<{ xid: string | null; id: string }>(
      `SELECT CASE WHEN EXISTS (SELECT 1 FROM events WHERE xid = '0' AND id > $1) THEN NULL
                   ELSE coalesce((SELECT min(xid) FROM events WHERE id > $1), (SELECT max(xid) FROM events))::text END AS xid,
              CASE WHEN EXISTS (SELECT 1 FROM events WHERE id > $1) THEN 0 ELSE $1 END AS id`,
      [id],
    );
    const r = rows[0];
    if (!r?.xid || r.xid === '0') return undefined;
    await this.q(`UPDATE event_cursors SET last_xid = $1::xid8, last_id = $2 WHERE destination = $3 AND relay = $4 AND last_xid = '0'`, [r.xid, r.id, destination, relay]);
    return { xid: r.xid, id: String(r.id) };
  }

  async advance(destination: string, relay: string, cursor: OutboxCursor, sentAt?: number): Promise<void> {
    const [xid, id] = parseCursor(cursor);
    await this.q(
      `UPDATE event_cursors SET last_xid = $1::xid8, last_id = $2::bigint, batch = NULL, sent_at = coalesce($3, sent_at)
       WHERE destination = $4 AND relay = $5 AND (last_xid, last_id) <= ($1::xid8, $2::bigint)`,
      [xid, id, sentAt ?? null, destination, relay],
    );
  }

  async keepBatch(destination: string, relay: string, batch: string, sentAt: number): Promise<void> {
    await this.q(`UPDATE event_cursors SET batch = $1, sent_at = $2 WHERE destination = $3 AND relay = $4`, [batch, sentAt, destination, relay]);
  }

  async prune(before: number, maxRows: number): Promise<number> {
    const { rowCount } = await this.q(`DELETE FROM events WHERE at < $1 OR id <= (SELECT max(id) FROM events) - $2`, [before, maxRows]);
    return rowCount ?? 0;
  }
}
