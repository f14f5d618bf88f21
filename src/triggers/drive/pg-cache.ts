import pg from 'pg';
import type { QueueMetaStore } from '../../queue/backend.ts';
import { migrateSharedQueue } from '../../queue/open.ts';
import { clientConfig, inTransaction, poolQuery, unavailable } from '../../db/pg/connection.ts';
import { PgLease } from '../../db/pg/lease.ts';
import { redactUrl } from '../../db/pg/redact.ts';
import type { Logger } from '../../core/logger.ts';
import type { CachedItem, CacheOp, DriveCacheStore } from './cache.ts';

interface ItemRow {
  id: string;
  name: string;
  parents: string[];
  md5: string | null;
  mime: string | null;
  paths: string[];
}

type Db = Pick<pg.ClientBase, 'query'>;

/** Rows per INSERT when a whole cache is written at once (build_caches, plex_autoscan's cache). */
const CHUNK = 2000;

/**
 * The drive cache in the shared queue's database (migration 003), for relays with SERVER_QUEUE_URL: whichever
 * relay holds the drive lease reads what the one before it cached. The same items as the SQLite cache file.
 */
export class PgDriveCache implements DriveCacheStore {
  readonly location: string;
  private readonly pool: pg.Pool;

  /** Connects (a clear error when PostgreSQL cannot be reached) and runs the migrations, as the queue does. */
  static async open(url: string, application: string, log?: Logger): Promise<PgDriveCache> {
    await migrateSharedQueue(url, application, log);
    return new PgDriveCache(url, application, log);
  }

  private constructor(
    private readonly url: string,
    application: string,
    log?: Logger,
  ) {
    this.location = redactUrl(url);
    this.pool = new pg.Pool({ ...clientConfig(url, application), max: 3, idleTimeoutMillis: 30_000 });
    this.pool.on('error', (err) => log?.debug({ err: err.message }, 'an idle drive cache database connection closed'));
  }

  /** A lease on this database (the drive poller's), sharing the cache's connections. */
  lease(name: string, holder: string, ms: number): PgLease {
    return new PgLease({ query: (sql: string, params?: unknown[]) => this.q(sql, params) } as Pick<pg.Pool, 'query'>, name, holder, ms);
  }

  private q<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
    return poolQuery<R>(this.pool, this.url, sql, params);
  }

  private tx<T>(body: (db: Db) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, this.url, body);
  }

  async get(id: string): Promise<CachedItem | undefined> {
    return (await this.getMany([id]))[0];
  }

  async getMany(ids: readonly string[]): Promise<CachedItem[]> {
    const { rows } = await this.q<ItemRow>(`SELECT id, name, parents, md5, mime, paths FROM drive_items WHERE id = ANY($1::text[])`, [ids]);
    return rows.map((row) => ({ id: row.id, name: row.name, parents: row.parents, md5: row.md5, mimeType: row.mime, paths: row.paths }));
  }

  async put(item: CachedItem): Promise<void> {
    try {
      await writeItems(this.pool, [item]);
    } catch (err) {
      throw unavailable(err, this.url);
    }
  }

  async remove(id: string): Promise<boolean> {
    return ((await this.q(`DELETE FROM drive_items WHERE id = $1`, [id])).rowCount ?? 0) > 0;
  }

  async children(parentId: string): Promise<string[]> {
    return (await this.q<{ id: string }>(`SELECT id FROM drive_items WHERE parents @> ARRAY[$1]::text[]`, [parentId])).rows.map((r) => r.id);
  }

  async apply(ops: readonly CacheOp[]): Promise<void> {
    await this.tx((db) => applyOps(db, ops));
  }

  /**
   * The check, the writes and the clearing of the key in one transaction on the same database as the queue: a
   * relay that paused after its commit cannot apply its writes after another relay replayed (or replaced) them.
   */
  async applyPending(key: string, value: string, _meta: QueueMetaStore): Promise<boolean> {
    return this.tx(async (db) => {
      const found = (await db.query<{ value: string | null }>(`SELECT value FROM meta WHERE key = $1 FOR UPDATE`, [key])).rows[0]?.value;
      if (found !== value) return false;
      await applyOps(db, JSON.parse(value) as CacheOp[]);
      await db.query(`UPDATE meta SET value = NULL WHERE key = $1`, [key]);
      return true;
    });
  }

  async count(): Promise<number> {
    return (await this.q<{ n: number }>(`SELECT count(*) AS n FROM drive_items`)).rows[0]!.n;
  }

  async driveName(id: string): Promise<string | undefined> {
    return (await this.q<{ name: string }>(`SELECT name FROM drive_names WHERE id = $1`, [id])).rows[0]?.name;
  }

  async setDriveName(id: string, name: string): Promise<void> {
    await this.q(`INSERT INTO drive_names (id, name) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET name = excluded.name`, [id, name]);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

/** Staged writes in order; the last one for an id wins, as when they are applied one by one. */
async function applyOps(db: Db, ops: readonly CacheOp[]): Promise<void> {
  const last = new Map<string, CacheOp>();
  for (const o of ops) {
    const id = o.op === 'put' ? o.item.id : o.id;
    last.delete(id);
    last.set(id, o);
  }
  const removed = [...last.values()].flatMap((o) => (o.op === 'remove' ? [o.id] : []));
  if (removed.length) await db.query(`DELETE FROM drive_items WHERE id = ANY($1::text[])`, [removed]);
  await writeItems(db, [...last.values()].flatMap((o) => (o.op === 'put' ? [o.item] : [])));
}

/** Upserts items, a chunk to a statement (each item's lists travel as JSON arrays). */
async function writeItems(db: Db, items: readonly CachedItem[]): Promise<void> {
  for (let i = 0; i < items.length; i += CHUNK) {
    const chunk = items.slice(i, i + CHUNK).map((it) => ({ id: it.id, name: it.name, parents: it.parents, md5: it.md5, mime: it.mimeType, paths: it.paths }));
    await db.query(
      `INSERT INTO drive_items (id, name, parents, md5, mime, paths)
       SELECT id, name, parents, md5, mime, paths FROM jsonb_to_recordset($1::jsonb) AS x(id text, name text, parents text[], md5 text, mime text, paths text[])
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, parents = excluded.parents, md5 = excluded.md5, mime = excluded.mime, paths = excluded.paths`,
      [JSON.stringify(chunk)],
    );
  }
}
