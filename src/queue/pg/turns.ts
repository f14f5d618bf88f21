import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { DB_NOW } from './clock.ts';

/**
 * What taking a turn found: true (free, or already this relay's), false (another live relay holds it), or
 * 'taken over' (the relay that held it stopped renewing it: it died or lost the database for a whole lease, and
 * the server may still be running the scan it sent).
 */
export type TurnTaken = boolean | 'taken over';

/**
 * The serial targets' one-at-a-time turns across relays: a row in `leases` per turn (name `turn:<server>`), on the
 * database's clock. A connection blip or a PostgreSQL restart does not free a turn: the row stays, and the holder
 * renews it once it is back (its process is the row's owner). A relay killed while holding a turn stops renewing;
 * another takes the turn once the lease ran out, and learns that it took it over ('taken over'). A clean release
 * deletes the row, and the others take it at once.
 */
export class TurnLeases {
  /** This process: a relay restarted under the same name is another owner. */
  private readonly owner = randomUUID();
  private readonly held = new Set<string>();

  constructor(
    private readonly pool: Pick<pg.Pool, 'query'>,
    private readonly relayId: string,
    private readonly leaseMs: number,
  ) {}

  /** The turns this process holds (renewed with its claims). */
  get names(): string[] {
    return [...this.held];
  }

  get ownerId(): string {
    return this.owner;
  }

  /** One statement: the row is taken when it is absent, this process's, or ran out; the one before says who held it. */
  async take(target: string): Promise<TurnTaken> {
    const name = `turn:${target}`;
    try {
      const { rows } = await this.pool.query<{ before: string | null }>(
        `WITH before AS (SELECT owner FROM leases WHERE name = $1)
         INSERT INTO leases (name, holder, owner, expires_at, since) VALUES ($1, $2, $3, ${DB_NOW} + $4, ${DB_NOW})
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, owner = excluded.owner, expires_at = excluded.expires_at,
           since = CASE WHEN leases.owner = excluded.owner THEN leases.since ELSE excluded.since END
         WHERE leases.owner = excluded.owner OR leases.expires_at <= excluded.since
         RETURNING (SELECT owner FROM before) AS before`,
        [name, this.relayId, this.owner, this.leaseMs],
      );
      const row = rows[0];
      if (!row) {
        this.held.delete(target);
        return false;
      }
      this.held.add(target);
      return row.before !== null && row.before !== this.owner ? 'taken over' : true;
    } catch {
      // The database is down: nobody takes a turn; the holder keeps its row and renews it once back.
      return false;
    }
  }

  /** Deletes this process's row; false when it did not hold the turn (anymore). */
  async release(target: string): Promise<boolean> {
    if (!this.held.delete(target)) return false;
    try {
      const { rowCount } = await this.pool.query(`DELETE FROM leases WHERE name = $1 AND owner = $2`, [`turn:${target}`, this.owner]);
      return (rowCount ?? 0) > 0;
    } catch {
      // Down: the row runs out after its lease, and whoever takes it then asks the server first.
      return false;
    }
  }

  /** Forgets a turn another relay took over meanwhile (this one was away for longer than the lease). */
  lost(targets: readonly string[]): void {
    for (const t of targets) this.held.delete(t);
  }
}
