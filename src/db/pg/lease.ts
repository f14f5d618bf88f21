import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { DB_NOW } from './clock.ts';

/** What a lease look-up found: whether this process holds it, and who does. */
export interface LeaseState {
  held: boolean;
  /** The relay holding it (this one when `held`); undefined when nobody does. */
  holder: string | undefined;
  /** When the holder took it (the database's clock, ms): a new value means a new holding. */
  since: number | undefined;
}

type Queryable = Pick<pg.Pool, 'query'>;

/**
 * A named lease in the shared database (table `leases`, made by the queue's migrations): one process at a time
 * holds it, for `ms` after its last renewal. Taking and renewing are one statement: a row held by another process
 * is taken only once it has run out, on the database's clock (DB_NOW), so that relays whose clocks differ agree on
 * when. The holder renews it while it works; when it dies, the lease runs out and another takes it.
 * A lease alone does not fence a paused holder: what it guards must also be committed with a compare and set.
 */
export class PgLease {
  /** This process, as distinct from another process under the same relay name. */
  private readonly owner = randomUUID();

  constructor(
    private readonly db: Queryable,
    readonly name: string,
    readonly holder: string,
    readonly ms: number,
  ) {}

  /** Takes the lease, or renews it when this process holds it; otherwise says who does. */
  async take(): Promise<LeaseState> {
    const { rows } = await this.db.query<{ since: number }>(
      `INSERT INTO leases (name, holder, owner, expires_at, since) VALUES ($1, $2, $3, ${DB_NOW} + $4, ${DB_NOW})
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, owner = excluded.owner, expires_at = excluded.expires_at,
         since = CASE WHEN leases.owner = excluded.owner THEN leases.since ELSE excluded.since END
       WHERE leases.owner = excluded.owner OR leases.expires_at <= excluded.since
       RETURNING since`,
      [this.name, this.holder, this.owner, this.ms],
    );
    if (rows[0]) return { held: true, holder: this.holder, since: Number(rows[0].since) };
    const other = await this.db.query<{ holder: string; since: number }>(`SELECT holder, since FROM leases WHERE name = $1`, [this.name]);
    return { held: false, holder: other.rows[0]?.holder, since: other.rows[0] ? Number(other.rows[0].since) : undefined };
  }

  /** Gives the lease up (a clean stop), so that another process takes it at its next try instead of after it runs out. */
  async release(): Promise<void> {
    await this.db.query(`DELETE FROM leases WHERE name = $1 AND owner = $2`, [this.name, this.owner]);
  }
}
