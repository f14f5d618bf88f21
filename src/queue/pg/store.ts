import pg from 'pg';
import type { NormalizedScanRequest } from '../../core/scan.ts';
import type { Logger } from '../../core/logger.ts';
import { activateSteps, adoptSteps, cancelSteps, completeSteps, failSteps, failUnknownSteps, pruneSteps, retryNowSteps, retrySteps, routeUnroutedSteps, type LifecycleIO, type Reach } from '../lifecycle.ts';
import { FILE_WAIT_DUE_SQL, type FileWaitCheck, type FileWaitScan } from '../file-wait.ts';
import { runAsync } from '../steps.ts';
import { checkExpected, type Claimed, type MetaExpect, type OnceMarker, type OnceResult, type QueueBackend, type QueueMetaStore, type QueueReads, type SharedQueue } from '../backend.ts';
import { toItem } from '../rows.ts';
import type { DeliveryRow, EnqueueResult, ScanRow, Timing } from '../types.ts';
import { clientConfig, inTransaction, isConnectionError, poolQuery, unavailable } from '../../db/pg/connection.ts';
import { redactUrl } from '../../db/pg/redact.ts';
import { connectAndMigrate, QUEUE_LOCK } from './connection.ts';
import { enqueueInTx } from './enqueue.ts';
import type { NotifyEvent } from '../../core/events.ts';
import { pgLifecycleIO } from './lifecycle.ts';
import { addEvents, PgOutbox } from './outbox.ts';
import { peerTargetsSql, RelayRegistry } from './relays.ts';
import { QueueSession, WAKE_CHANNEL, wakePayload } from './session.ts';
import { DB_NOW, DbClock } from '../../db/pg/clock.ts';
import { TurnLeases } from './turns.ts';
import { filesOf, PgQueueView, type Query } from './view.ts';

export interface PgQueueOptions {
  url: string;
  /** This relay's name, stored with the deliveries it claims (default: host:port). */
  relayId: string;
  /** How long a claim holds before another relay may take it again; renewed while the delivery runs. */
  leaseMs?: number;
  /** The slow safety-net poll. */
  pollMs?: number;
  /** Pooled connections at most (SERVER_QUEUE_POOL), beside the one listening session. */
  poolSize?: number;
  /**
   * This relay's install (queue/instance.ts), held while the store is open: after a kill -9 the restarted relay
   * takes its dead process's turns at once, asking the server first, instead of waiting out their lease.
   */
  instance?: { readonly id: string; release(): void };
  /** A command that only reads (`scanrelay queue`): no tables created or upgraded, no lease renewals. */
  readOnly?: boolean;
  log?: Logger;
  /** The relay's own clock (a test seam: a relay whose clock is off); every time it writes is put on the database's. */
  clock?: () => number;
}

type Db = Pick<pg.ClientBase, 'query'>;

/**
 * The queue in PostgreSQL, shared by every relay with the same SERVER_QUEUE_URL. The same tables and rules as
 * the SQLite store (EnqueueBatch is shared); what differs is how relays stay out of each other's way:
 * - enqueue and activation run under one transaction-level advisory lock (as SQLite's write lock), so a
 *   request merges into the one pending scan of its folder whichever relay took it;
 * - deliveries are claimed with FOR UPDATE SKIP LOCKED; a claim names the relay and holds a lease, renewed
 *   while the delivery runs, so a dead relay's claims are taken again once the lease runs out;
 * - a serial target's turn is a lease row (TurnLeases), kept across a lost connection, taken over from a dead relay;
 * - each change is announced with NOTIFY, and every relay also looks every `pollMs`;
 * - every time relays compare (due times, retry times, claims, leases) is on the database's clock (DbClock).
 * This class wires its parts: the rules' SQL (lifecycle.ts, enqueue.ts), the read views (view.ts), the outbox,
 * the relays (relays.ts), the turns (turns.ts) and the listening session (session.ts).
 */
export class PgQueueStore implements QueueBackend {
  readonly location: string;
  readonly view: QueueReads;
  readonly meta: QueueMetaStore;
  readonly shared: SharedQueue;
  /** Events written with the delivery changes they tell of (notifications, the dashboard's stream). */
  readonly outbox: PgOutbox;
  private readonly pool: pg.Pool;
  private readonly session: QueueSession;
  /** The live relays and their targets: whom a due scan goes to, and which deliveries this relay claims. */
  private readonly relays: RelayRegistry;
  private readonly leaseMs: number;
  private readonly renewTimer: NodeJS.Timeout | undefined;
  private readonly clock: DbClock;
  private readonly turns: TurnLeases;
  private renewing: Promise<void> | undefined;
  /** Since when the database has not answered (undefined: it answers). */
  private down: number | undefined;
  private closed = false;
  /** `q` for the parts that read through it (the read views, the files' samples). */
  private readonly query: Query = this.q.bind(this);

  /** Connects (a clear error when PostgreSQL cannot be reached), migrates, and opens the listening session. */
  static async open(opts: PgQueueOptions): Promise<PgQueueStore> {
    await connectAndMigrate(opts.url, `scanrelay ${opts.relayId}`, { readOnly: opts.readOnly ?? false, log: opts.log });
    const store = new PgQueueStore(opts);
    await store.readClock();
    await store.session.open();
    return store;
  }

  private constructor(private readonly opts: PgQueueOptions) {
    this.location = redactUrl(opts.url);
    this.leaseMs = opts.leaseMs ?? 30_000;
    this.pool = new pg.Pool({ ...clientConfig(opts.url, `scanrelay ${opts.relayId}`), max: opts.poolSize ?? DEFAULT_POOL_SIZE, idleTimeoutMillis: 30_000 });
    // An idle pooled connection that breaks is dropped by the pool; the next query opens a new one.
    this.pool.on('error', (err) => opts.log?.debug({ err: err.message }, 'an idle queue database connection closed'));
    this.session = new QueueSession(opts.url, `scanrelay ${opts.relayId} (session)`, opts.log);
    const session = this.session;
    const relays = (this.relays = new RelayRegistry(this.pool, opts.relayId, this.leaseMs, opts.log));
    const clock = (this.clock = new DbClock(opts.clock));
    this.outbox = new PgOutbox(this.pool, opts.url, clock);
    const turns = (this.turns = new TurnLeases(this.pool, session, opts.relayId, this.leaseMs, opts.instance?.id));
    // Back from a lost connection: the turns this relay still holds are locked and renewed at once.
    session.onConnect(() => {
      if (turns.names.length) void this.renewLeases();
    });
    this.shared = {
      relayId: opts.relayId,
      pollMs: opts.pollMs ?? 5000,
      join: (targets) => relays.join(targets),
      peerTargets: () => relays.peerTargets(),
      relays: () => relays.running(this.pool).catch((err: unknown) => Promise.reject(unavailable(err, opts.url))),
      takeTurn: (t) => turns.take(relays.turnKey(t)),
      releaseTurn: async (t, announce = true) => {
        if ((await turns.release(relays.turnKey(t))) && announce) await this.notify('turn');
      },
      // A wake-up's time is the database's; the timer it sets runs on this relay's clock.
      onWake: (l) => session.onWake((at) => l(at === undefined ? undefined : clock.toLocal(at))),
    };
    this.view = new PgQueueView(this.query, async (entries) => {
      const seen = await relays.seen(this.pool).catch((err: unknown) => {
        throw unavailable(err, opts.url);
      });
      return relays.describe(entries, seen, clock.now());
    });
    this.meta = {
      get: async (key) => (await this.q<{ value: string | null }>(`SELECT value FROM meta WHERE key = $1`, [key])).rows[0]?.value ?? undefined,
      set: async (key, value) => void (await this.q(SET_META, [key, value])),
      list: async (prefix) =>
        (await this.q<{ key: string; value: string }>(`SELECT key, value FROM meta WHERE starts_with(key, $1) AND value IS NOT NULL ORDER BY key COLLATE "C"`, [prefix])).rows.map(
          (r) => [r.key, r.value] as [string, string],
        ),
    };
    // Claims of deliveries still running are renewed well before they run out.
    if (!opts.readOnly) {
      this.renewTimer = setInterval(() => void this.renewLeases(), Math.max(200, Math.floor(this.leaseMs / 3)));
      this.renewTimer.unref?.();
    }
  }

  /** Reads the database's clock (how far this relay's is off) and the other relays' target names (routing's). */
  private async readClock(): Promise<void> {
    const before = this.clock.local();
    const { rows } = await this.q<{ now: string; peers: string[] }>(`SELECT ${DB_NOW} AS now, ${peerTargetsSql('$1')} AS peers`, [this.opts.relayId]);
    this.clock.observe(Number(rows[0]!.now), before, this.clock.local());
    this.relays.notePeers(rows[0]!.peers);
  }

  /** One statement on any pooled connection; a lost database becomes QueueUnavailableError. */
  private q<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>> {
    return this.watched(poolQuery<R>(this.pool, this.opts.url, sql, params));
  }

  /** The first `limit` files of each scan's sample, and how many it holds (queue/pg/view.ts). */
  private filesOf(ids: number[], limit?: number): Promise<Map<number, { files: string[]; size: number }>> {
    return filesOf(this.query, ids, limit);
  }

  /** The lifecycle rules' reads and writes (queue/pg/lifecycle.ts) in one transaction's connection. */
  private io(db: Db): LifecycleIO {
    return pgLifecycleIO(db);
  }

  /**
   * Whether the database answers, as the statements find it: the log says once that it cannot be reached (one
   * line, no stack) and once that it is back ("reconnected"), however many statements failed in between.
   */
  private async watched<T>(statement: Promise<T>): Promise<T> {
    try {
      const out = await statement;
      if (this.down !== undefined) {
        this.opts.log?.info({ queue: this.location, downForMs: Date.now() - this.down }, 'reconnected to the queue database: queued scans are delivered again');
        this.down = undefined;
      }
      return out;
    } catch (err) {
      if (this.down === undefined && !this.closed && isConnectionError(err)) {
        this.down = Date.now();
        const why = ((err as Error).cause as Error | undefined)?.message ?? (err as Error).message;
        this.opts.log?.warn({ queue: this.location, err: why }, 'the queue database cannot be reached: requests are answered 503 and deliveries wait until it is back');
      }
      throw err;
    }
  }

  /**
   * The scheduler's looks (activate, claim, next wake-up). While the database is down, or once the store is
   * closed (a look under way when the relay stops), a look finds nothing: the log already said why (watched),
   * and the scheduler looks again at its next poll, without an error and a stack every few seconds.
   */
  private async look<T>(nothing: T, body: () => Promise<T>): Promise<T> {
    if (this.closed) return nothing;
    try {
      return await body();
    } catch (err) {
      if (this.closed || isConnectionError(err)) return nothing;
      throw err;
    }
  }

  /**
   * A transaction on one connection. `locked`: under the queue's advisory lock (enqueue and activation).
   * `scanRow`: with that scan's row locked first (FOR UPDATE), after the advisory lock when both are asked.
   */
  private tx<T>(body: (db: Db) => Promise<T>, locked = false, scanRow?: number): Promise<T> {
    // One round trip: a query without parameters may hold several statements (the id is a checked integer).
    const row = scanRow !== undefined && Number.isSafeInteger(scanRow) ? `; SELECT 1 FROM scans WHERE id = ${scanRow} FOR UPDATE` : '';
    return this.watched(inTransaction(this.pool, this.opts.url, body, `BEGIN${locked ? `; SELECT pg_advisory_xact_lock(${QUEUE_LOCK})` : ''}${row}`));
  }

  async enqueueMany(
    requests: readonly NormalizedScanRequest[],
    timing: Timing,
    now = this.clock.local(),
    meta: Readonly<Record<string, string | null>> = {},
    expect: MetaExpect = {},
  ): Promise<EnqueueResult[]> {
    const at = this.clock.toDb(now);
    return this.tx(async (db) => {
      // Under the queue's lock, which every meta write through enqueueMany takes: the compare and the set are one step.
      if (Object.keys(expect).length) {
        const { rows } = await db.query<{ key: string; value: string | null }>(`SELECT key, value FROM meta WHERE key = ANY($1::text[])`, [Object.keys(expect)]);
        checkExpected(expect, (key) => rows.find((r) => r.key === key)?.value ?? null);
      }
      return this.enqueueIn(db, requests, timing, at, meta);
    }, true);
  }

  /** The marker is read under the queue's advisory lock, which every relay's enqueue takes: the check cannot race. */
  async enqueueOnce(requests: readonly NormalizedScanRequest[], timing: Timing, now: number, once: OnceMarker): Promise<OnceResult> {
    const at = this.clock.toDb(now);
    return this.tx(async (db) => {
      const prior = (await db.query<{ value: string | null }>(`SELECT value FROM meta WHERE key = $1`, [once.key])).rows[0]?.value ?? undefined;
      if (once.done(prior)) return { prior };
      return { prior, results: await this.enqueueIn(db, requests, timing, at, { [once.key]: once.value(prior) }) };
    }, true);
  }

  private async enqueueIn(db: Db, requests: readonly NormalizedScanRequest[], timing: Timing, now: number, meta: Readonly<Record<string, string | null>>): Promise<EnqueueResult[]> {
    // Delivered at commit, with the earliest due time: each relay sets its timer for it, none looks at once.
    const results = await enqueueInTx(db, requests, timing, now, { channel: WAKE_CHANNEL, payload: (r) => (r.length ? wakePayload(Math.min(...r.map((x) => x.dueAt))) : undefined) });
    for (const [key, value] of Object.entries(meta)) await db.query(SET_META, [key, value]);
    // The caller reads due times on its own clock.
    return results.map((r) => ({ ...r, dueAt: this.clock.toLocal(r.dueAt) }));
  }

  /** Due scans get a delivery for every server a live relay has (RelayRegistry), whichever relay finds them due. */
  async activateDue(names: readonly string[], local = this.clock.local(), limit = 1000, files?: FileWaitCheck): Promise<number> {
    return this.look(0, () => this.activate(names, this.clock.toDb(local), limit, files));
  }

  async dueWaitingForFiles(local = this.clock.local(), limit = 1000): Promise<FileWaitScan[]> {
    return this.look([], async () => {
      const { rows } = await this.q<ScanRow>(FILE_WAIT_DUE_SQL('$1', '$2'), [this.clock.toDb(local), limit]);
      const files = await this.filesOf(rows.map((r) => Number(r.id)));
      return rows.map((r) => ({ id: Number(r.id), lastAt: Number(r.last_at), folder: r.folder, files: files.get(Number(r.id))?.files ?? [], targets: r.targets ?? null, since: r.files_wait_since ?? null }));
    });
  }

  private async activate(names: readonly string[], now: number, limit: number, files?: FileWaitCheck): Promise<number> {
    // Most looks find nothing due: no lock for those.
    const due = await this.q<{ n: number }>(`SELECT count(*) AS n FROM scans WHERE status = 'pending' AND due_at <= $1`, [now]);
    const dueCount = due.rows[0]?.n ?? 0;
    if (!dueCount) return 0;
    return this.tx(async (db) => {
      const targets = await this.relays.activationTargets(db, names);
      if (this.relays.joined) {
        // No relay with a target runs: due scans stay pending (nothing lost) until one does.
        this.relays.noTargets(targets.length ? 0 : dueCount);
        if (!targets.length) return 0;
        await runAsync(adoptSteps(sharedReach(targets, names), now), this.io(db));
      }
      return runAsync(activateSteps(sharedReach(targets, names), now, limit, files), this.io(db));
    }, true);
  }

  async claimDeliveries(limit: number, local = this.clock.local(), target?: string): Promise<Claimed[]> {
    return this.look([], () => this.claim(limit, local, target));
  }

  private async claim(limit: number, local: number, target?: string): Promise<Claimed[]> {
    if (limit <= 0) return [];
    const now = this.clock.toDb(local);
    // This relay's target as the queue names it (its server's, and the name from before relays had ids).
    const keys = target === undefined ? [] : this.relays.claimKeys(target);
    if (target !== undefined && !keys.length) return [];
    if (target === undefined) {
      const out: Claimed[] = [];
      const targets = (await this.q<{ target: string }>(`SELECT DISTINCT target FROM deliveries WHERE status IN ('waiting', 'sending')`)).rows;
      for (const t of targets) out.push(...(await this.claim(limit - out.length, local, t.target)));
      return out;
    }
    // A waiting delivery that is due, or one whose claim ran out (its relay stopped renewing: it died). One
    // statement, so no BEGIN and COMMIT around it: it is a transaction of its own.
    const { rows: claimed } = await this.q<DeliveryRow>(
      `UPDATE deliveries d SET status = 'sending', attempts = d.attempts + 1, relay = $3, lease_until = $4
       FROM (SELECT scan_id, target FROM deliveries
             WHERE target = ANY($1::text[]) AND ((status = 'waiting' AND next_at <= $2) OR (status = 'sending' AND lease_until < $2))
             ORDER BY priority, next_at, scan_id LIMIT $5 FOR UPDATE SKIP LOCKED) c
       WHERE d.scan_id = c.scan_id AND d.target = c.target
       RETURNING d.*`,
      [keys, now, this.opts.relayId, now + this.leaseMs, limit],
    );
    if (!claimed.length) return [];
    const ids = claimed.map((d) => d.scan_id);
    const scans = new Map((await this.q<ScanRow>(`SELECT * FROM scans WHERE id = ANY($1::bigint[])`, [ids])).rows.map((r) => [r.id, r]));
    const files = await this.filesOf(ids);
    return claimed
      .sort((a, b) => a.priority - b.priority || a.next_at - b.next_at || a.scan_id - b.scan_id)
      .filter((d) => scans.has(d.scan_id))
      .map((d) => ({ item: toItem(scans.get(d.scan_id)!, files.get(d.scan_id)?.files ?? [], d.attempts, d.file_checks), target: d.target }));
  }

  /**
   * Keeps this relay's running claims and its turns from running out, on the database's clock, in one statement
   * that also reads that clock (a relay's clock stepped meanwhile is seen here) and the other relays' target names
   * (a relay that joined the queue since: routing sends it its share from now on).
   */
  private renewLeases(): Promise<void> {
    this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private async renew(): Promise<void> {
    const turns = this.turns.names.map((t) => `turn:${t}`);
    const before = this.clock.local();
    try {
      const { rows } = await this.pool.query<{ now: string; turns: string[]; peers: string[] }>(
        `WITH d AS (UPDATE deliveries SET lease_until = ${DB_NOW} + $2 WHERE status = 'sending' AND relay = $1 RETURNING 1),
              t AS (UPDATE leases SET expires_at = ${DB_NOW} + $2 WHERE owner = $3 AND name = ANY($4::text[]) RETURNING name)
         SELECT ${DB_NOW} AS now, ARRAY(SELECT name FROM t) AS turns, ${peerTargetsSql('$1')} AS peers`,
        [this.opts.relayId, this.leaseMs, this.turns.ownerId, turns],
      );
      const row = rows[0]!;
      this.clock.observe(Number(row.now), before, this.clock.local());
      this.relays.notePeers(row.peers);
      const lost = turns.filter((t) => !row.turns.includes(t)).map((t) => t.slice('turn:'.length));
      if (lost.length) {
        await this.turns.lost(lost);
        this.opts.log?.warn({ targets: lost }, 'this relay was away from the queue database for longer than its lease: another relay took over the one-at-a-time turn');
      }
      await this.turns.relock();
    } catch {
      // Down: the next renewal tries again; past the lease another relay may send it again (at least once).
    }
  }

  async completeDelivery(
    scanId: number,
    target: string,
    result: { status: 'done' | 'failed'; error?: string; detail?: string; event?: NotifyEvent },
    local = this.clock.local(),
  ): Promise<{ scanFinished: 'done' | 'failed' | undefined; requeued?: string[] }> {
    const now = this.clock.toDb(local);
    // A delivery done locks only its scan's row (two targets of one scan finish one after the other), not the
    // queue: relays finish deliveries side by side, and beside the intake's commits. A failed one, or a scan that
    // ends failed, takes the queue's lock as well, since its parts are queued again.
    const failed = result.status === 'failed';
    const out = await this.tx((db) => runAsync(completeSteps(scanId, target, result, now, !failed), this.io(db)), failed, scanId);
    if (!('later' in out)) return out;
    return this.tx((db) => runAsync(failSteps(scanId, now), this.io(db)), true, scanId);
  }

  async retryDelivery(scanId: number, target: string, error: string, nextAt: number, countsAsAttempt = true, fileChecks?: number, event?: NotifyEvent): Promise<void> {
    const steps = retrySteps(scanId, target, { error, nextAt: this.clock.toDb(nextAt), refund: countsAsAttempt ? 0 : 1, ...(fileChecks !== undefined ? { fileChecks } : {}), ...(event ? { event } : {}) });
    await this.tx((db) => runAsync(steps, this.io(db)));
    await this.notify(wakePayload(this.clock.toDb(nextAt)));
  }

  /** No wake-up: the turn stays with this relay, which claims the next one itself. */
  async putBack(scanId: number, target: string, error: string): Promise<void> {
    await this.q(
      `UPDATE deliveries SET status = 'waiting', last_error = $3, attempts = attempts - 1, lease_until = NULL WHERE scan_id = $1 AND target = $2 AND status = 'sending'`,
      [scanId, target, error],
    );
  }

  async setDeliveryDetail(scanId: number, target: string, detail: string, event?: NotifyEvent): Promise<void> {
    const update = `UPDATE deliveries SET detail = $3 WHERE scan_id = $1 AND target = $2`;
    if (!event) return void (await this.q(update, [scanId, target, detail]));
    await this.tx(async (db) => {
      await db.query(update, [scanId, target, detail]);
      await addEvents(db, [event]);
    });
  }

  /** This relay's own claims from before a restart are sent again at once; other relays' claims are theirs. */
  async recoverInFlight(): Promise<number> {
    return (await this.q(`UPDATE deliveries SET status = 'waiting', lease_until = NULL WHERE status = 'sending' AND relay = $1`, [this.opts.relayId])).rowCount ?? 0;
  }

  /** See QueueBackend.retryWaitingNow: the deliveries of the servers this relay reaches (their claim keys). */
  async retryWaitingNow(names: readonly string[], now = Date.now()): Promise<number> {
    const keys = names.flatMap((t) => this.relays.claimKeys(t));
    if (!keys.length) return 0;
    const n =
      (await this.q(`UPDATE deliveries SET next_at = $1 WHERE status = 'waiting' AND last_error IS NOT NULL AND next_at > $1 AND target = ANY($2::text[])`, [now, keys]))
        .rowCount ?? 0;
    if (n) await this.notify('retry');
    return n;
  }

  /**
   * See queue/lifecycle.ts failUnknownSteps. Several relays may list different targets: a target this relay lacks
   * is "no longer configured" only when no relay sharing the queue has had it lately (RelayRegistry.activationTargets);
   * until then its deliveries wait for a relay that has it.
   */
  async failUnknownTargets(names: readonly string[], local = this.clock.local()): Promise<number> {
    const now = this.clock.toDb(local);
    return this.tx(async (db) => runAsync(failUnknownSteps(sharedReach(await this.relays.activationTargets(db, names), names), now), this.io(db)), true);
  }

  /** See QueueBackend.routeUnrouted; under the queue's lock, so no relay enqueues or activates meanwhile. */
  async routeUnrouted(routeOf: (scan: { folder: string; files: string[] }) => string[], every: readonly string[]): Promise<number> {
    return this.tx((db) => runAsync(routeUnroutedSteps(routeOf, every), this.io(db)), true);
  }

  async nextWakeAt(targets?: readonly string[]): Promise<number | undefined> {
    return this.look(undefined, () => this.nextWake(targets));
  }

  private async nextWake(targets?: readonly string[]): Promise<number | undefined> {
    const list = targets ? targets.flatMap((t) => this.relays.claimKeys(t)) : null;
    const { rows } = await this.q<{ due: number | null; next: number | null; lease: number | null }>(
      `SELECT (SELECT min(due_at) FROM scans WHERE status = 'pending') AS due,
              (SELECT min(next_at) FROM deliveries WHERE status = 'waiting' AND ($1::text[] IS NULL OR target = ANY($1::text[]))) AS next,
              (SELECT min(lease_until) FROM deliveries WHERE status = 'sending' AND relay IS DISTINCT FROM $2
                 AND ($1::text[] IS NULL OR target = ANY($1::text[]))) AS lease`,
      [list, this.opts.relayId],
    );
    const times = [rows[0]?.due, rows[0]?.next, rows[0]?.lease].filter((t): t is number => typeof t === 'number');
    return times.length ? this.clock.toLocal(Math.min(...times)) : undefined;
  }

  async countOpen(): Promise<number> {
    return (await this.q<{ n: number }>(`SELECT count(*) AS n FROM scans WHERE status IN ('pending', 'active')`)).rows[0]!.n;
  }

  async pruneHistory(keep: number): Promise<number> {
    return this.tx((db) => runAsync(pruneSteps(keep), this.io(db)));
  }

  async cancel(id: number): Promise<boolean> {
    return this.tx((db) => runAsync(cancelSteps(id), this.io(db)), true);
  }

  async retryNow(id: number, local = this.clock.local()): Promise<boolean> {
    const now = this.clock.toDb(local);
    const ok = await this.tx((db) => runAsync(retryNowSteps(id, now), this.io(db)), true);
    if (ok) await this.notify('retry');
    return ok;
  }

  /** The pooled connections and the listening one both answer: a relay deaf to wake-ups is not healthy. */
  async writable(): Promise<boolean> {
    try {
      await this.pool.query('SELECT 1');
    } catch {
      return false;
    }
    return this.session.healthy();
  }

  private async notify(why: string): Promise<void> {
    await this.pool.query(`SELECT pg_notify($1, $2)`, [WAKE_CHANNEL, why]).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewTimer);
    // A clean stop hands its turns on at once (its deliveries and after-steps have ended).
    for (const t of this.turns.names) await this.turns.release(t);
    await this.relays.leave();
    await this.session.close();
    await this.pool.end().catch(() => undefined);
    this.opts.instance?.release();
  }
}

/** SERVER_QUEUE_POOL's default: the statements of a burst, deliveries and the dashboard side by side. */
export const DEFAULT_POOL_SIZE = 6;

const SET_META = `INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;

/**
 * Whom scans go to on a shared queue: `servers`, every server a relay sharing it has had lately (<name>@<id>), and
 * this relay's own target names. A routed name goes to the servers of that target, by the name before the "@"
 * (relays sharing a queue name their targets alike); one of this relay's own targets whose server has not said its
 * id yet gets a delivery by its bare name, which it claims once it knows (RelayRegistry.claimKeys). A name neither
 * has is no longer configured anywhere.
 */
export function sharedReach(servers: readonly string[], own: readonly string[]): Reach {
  return {
    all: servers,
    keysOf: (name) => {
      const mine = servers.filter((s) => s === name || s.startsWith(`${name}@`));
      return mine.length ? mine : own.includes(name) ? [name] : [];
    },
  };
}
