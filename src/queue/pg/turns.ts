import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { DB_NOW } from '../../db/pg/clock.ts';
import type { QueueSession } from './session.ts';

/**
 * What taking a turn found: true (free, or already this relay's), false (another live relay holds it), or
 * 'taken over' (the relay that held it stopped renewing it: it died or lost the database for a whole lease, and
 * the server may still be running the scan it sent).
 */
export type TurnTaken = boolean | 'taken over';

/**
 * The serial targets' one-at-a-time turns across relays. A turn is two things, and a relay must get both:
 * - an advisory lock on the relay's listening connection (QueueSession): held while that connection lives, so a
 *   relay that is alive but stalled (a busy machine, a long pause) keeps its turn whatever its renewals do;
 * - a row in `leases` (name `turn:<server>`, the database's clock), renewed with the relay's claims: it outlives a
 *   connection blip or a PostgreSQL restart, so the lock that went with the connection is not the turn. The
 *   holder takes its lock again when it is back; another relay that got the lock meanwhile finds the row held and
 *   lets the lock go.
 * A relay killed while holding a turn loses its lock at once and stops renewing the row; another relay takes the
 * turn once the row ran out, and learns that it took it over ('taken over'). A clean release deletes the row and
 * unlocks, and the others take it at once.
 */
export class TurnLeases {
  /**
   * This process (`<instance>/<boot>`): a relay restarted under the same name is another owner. Its instance is the
   * relay's install (queue/instance.ts): a row of this instance and another boot was left by a dead process of this
   * relay, which this one takes at once (as 'taken over': it asks the server first) instead of waiting out its lease.
   */
  private readonly owner: string;
  private readonly held = new Set<string>();

  constructor(
    private readonly pool: Pick<pg.Pool, 'query'>,
    private readonly session: QueueSession,
    private readonly relayId: string,
    private readonly leaseMs: number,
    private readonly instance = '',
  ) {
    this.owner = instance ? `${instance}/${randomUUID()}` : randomUUID();
  }

  /** Back from a lost connection (or a lock another relay held a moment): the locks of the turns still held. */
  async relock(): Promise<void> {
    for (const t of this.held) if (!this.session.holds(t)) await this.session.lock(t);
  }

  /** The turns this process holds (renewed with its claims). */
  get names(): string[] {
    return [...this.held];
  }

  get ownerId(): string {
    return this.owner;
  }

  /**
   * One statement: the row is taken when it is absent, this process's, a dead process's of this instance, or ran
   * out; the one before says who held it.
   */
  async take(target: string): Promise<TurnTaken> {
    const name = `turn:${target}`;
    if (!(await this.session.lock(target))) return false;
    try {
      const { rows } = await this.pool.query<{ before: string | null }>(
        `WITH before AS (SELECT owner FROM leases WHERE name = $1)
         INSERT INTO leases (name, holder, owner, expires_at, since) VALUES ($1, $2, $3, ${DB_NOW} + $4, ${DB_NOW})
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, owner = excluded.owner, expires_at = excluded.expires_at,
           since = CASE WHEN leases.owner = excluded.owner THEN leases.since ELSE excluded.since END
         WHERE leases.owner = excluded.owner OR leases.expires_at <= excluded.since
           OR ($5 <> '' AND split_part(leases.owner, '/', 1) = $5)
         RETURNING (SELECT owner FROM before) AS before`,
        [name, this.relayId, this.owner, this.leaseMs, this.instance],
      );
      const row = rows[0];
      if (!row) {
        // Another relay's row: it holds the turn, and only its lock went with a lost connection.
        this.held.delete(target);
        await this.session.unlock(target);
        return false;
      }
      this.held.add(target);
      return row.before !== null && row.before !== this.owner ? 'taken over' : true;
    } catch {
      // The database is down: nobody takes a turn; the holder keeps its row and renews it once back.
      if (!this.held.has(target)) await this.session.unlock(target);
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
    } finally {
      await this.session.unlock(target);
    }
  }

  /** Forgets a turn another relay took over meanwhile (this one was away for longer than the lease). */
  async lost(targets: readonly string[]): Promise<void> {
    for (const t of targets) {
      this.held.delete(t);
      await this.session.unlock(t);
    }
  }
}
