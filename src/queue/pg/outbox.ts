import type pg from 'pg';
import type { NotifyEvent, StoredEvent } from '../../core/events.ts';
import { decodeEvent, encodeEvent, type Outbox } from '../outbox.ts';
import { poolQuery } from './connection.ts';
import type { DbClock } from './clock.ts';

type Db = Pick<pg.ClientBase, 'query'>;

const INSERT = `INSERT INTO events (kind, at, body) SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[])`;
const insertParams = (events: readonly NotifyEvent[]) => [events.map((e) => e.kind), events.map((e) => Math.round(e.at)), events.map(encodeEvent)];

/** Writes events with the caller's transaction (`db`: its connection). */
export async function addEvents(db: Db, events: readonly NotifyEvent[]): Promise<void> {
  if (events.length) await db.query(INSERT, insertParams(events));
}

/**
 * The outbox in the shared queue's database. A destination's turn is a lease in event_cursors, taken and renewed
 * by one statement, so relays sharing the queue send each event once (a relay that dies hands over when its
 * lease runs out; what it was sending may then go twice, never not at all).
 */
export class PgOutbox implements Outbox {
  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    /** Relays compare leases on the database's clock (pg/clock.ts), never their own. */
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

  async claim(destination: string, relay: string, leaseMs: number, local: number): Promise<number | undefined> {
    const now = this.clock.toDb(local);
    const { rows } = await this.q<{ last_id: string }>(
      `INSERT INTO event_cursors (destination, last_id, relay, lease_until) VALUES ($1, (SELECT coalesce(max(id), 0) FROM events), $2, $3)
       ON CONFLICT (destination) DO UPDATE SET relay = EXCLUDED.relay, lease_until = EXCLUDED.lease_until
         WHERE event_cursors.relay IS NOT DISTINCT FROM EXCLUDED.relay OR event_cursors.lease_until IS NULL OR event_cursors.lease_until < $4
       RETURNING last_id`,
      [destination, relay, now + leaseMs, now],
    );
    return rows[0] ? Number(rows[0].last_id) : undefined;
  }

  async advance(destination: string, relay: string, lastId: number): Promise<void> {
    await this.q(`UPDATE event_cursors SET last_id = greatest(last_id, $1) WHERE destination = $2 AND relay = $3`, [lastId, destination, relay]);
  }

  async prune(before: number, maxRows: number): Promise<number> {
    const { rowCount } = await this.q(`DELETE FROM events WHERE at < $1 OR id <= (SELECT max(id) FROM events) - $2`, [before, maxRows]);
    return rowCount ?? 0;
  }
}
