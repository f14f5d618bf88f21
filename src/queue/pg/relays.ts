import type pg from 'pg';
import type { Target } from '../../core/scan.ts';
import type { Logger } from '../../core/logger.ts';
import type { RunningRelay } from '../backend.ts';
import type { QueueEntry } from '../types.ts';
import { WAKE_CHANNEL } from './session.ts';
import { DB_NOW } from '../../db/pg/clock.ts';
import { serverTurnKey } from '../server-turns.ts';

type Db = Pick<pg.ClientBase, 'query'>;

/** The database's clock in ms: liveness is judged by one clock, whatever the relays' clocks say. */

/** How long a relay's start waits for its servers to say who they are (they are asked on after that). */
const START_WAIT_MS = 3000;

/**
 * How long a server keeps getting deliveries after its last relay stopped. A relay restarting (an update, a
 * reboot) must not make its server miss the scans that became due meanwhile: they wait for it. A relay that
 * stays away longer is taken as gone for good, and new scans stop going to its servers.
 */
export const SERVER_KEPT_MS = 24 * 60 * 60 * 1000;

/** Whether relay `r` was seen lately: it runs, or stopped less than `window` (SQL for SERVER_KEPT_MS) ago. */
function seenLately(window: string): string {
  return `r.live_until > ${DB_NOW} - ${window}::bigint`;
}

/**
 * The target names (`plex` of `plex@<id>`) of the relays other than `relay` seen lately, as an SQL array in name
 * order: what routing adds to a relay's own targets (RelayRegistry.peerTargets). `relay`: a parameter; the window is
 * SERVER_KEPT_MS, as activationTargets'. Read inside statements the store sends anyway (its open, its renewals).
 */
export function peerTargetsSql(relay: string): string {
  return `ARRAY(SELECT DISTINCT split_part(rt.target, '@', 1) FROM relay_targets rt JOIN relays r USING (relay)
    WHERE r.relay <> ${relay} AND ${seenLately(String(SERVER_KEPT_MS))} ORDER BY 1)`;
}

/** A delivery's name on a shared queue: the kind and the server's own id (plex@<machineIdentifier>). */
export function deliveryKey(kind: string, id: string): string {
  return `${kind}@${id}`;
}

/** A delivery's name as people read it: "plex (Living Room)"; a name from before ids ('plex') as it is. */
export function deliveryLabel(kind: string, label: string | null, key: string): string {
  if (!key.startsWith(`${kind}@`)) return key;
  return `${kind} (${label || key.slice(kind.length + 1, kind.length + 13)})`;
}

interface LocalTarget {
  target: Target;
  /** Its delivery name on the queue, once the server said who it is. */
  key?: string;
  /** The server's own id, once it said it. */
  id?: string;
  label?: string;
  /** The last reason its id is unknown, logged once per reason. */
  told?: string;
  /** The question being asked now (one at a time; the server's own timeout ends it). */
  asking?: Promise<void>;
}

/** How the view reads the registry: each server's name, and whether a running relay has it. */
export interface TargetsSeen {
  label(key: string): string | undefined;
  /** A running relay has this target (a name from before ids: a running relay has a target of that kind). */
  served(key: string): boolean;
  /** Some running relay has some target. */
  any: boolean;
  /** Relays of this queue record themselves (a scheduler runs here, or some relay ever recorded its servers). */
  used: boolean;
}

/**
 * The registry of live relays and their targets, in PostgreSQL. A relay records itself at start and renews its
 * record every third of its lease; it is live while the record is fresh, and a clean stop removes it. Each
 * target is recorded once its server said who it is (Target.identity), so two relays beside one Plex name it
 * alike and two Plex servers never share a name: until then this relay claims none of that target's deliveries.
 *
 * Until join() (a store used without a scheduler), target names pass through unchanged, as before relays had ids.
 */
export class RelayRegistry {
  private readonly local = new Map<string, LocalTarget>();
  private isJoined = false;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  /** The targets last written, to announce a change. */
  private written: string | undefined;
  /** Scans told to wait for a relay with a target (logged once until one is there). */
  private toldWaiting = false;
  /** The other relays' target names, as last read (peerTargets). */
  private peers: readonly string[] = [];

  constructor(
    private readonly pool: pg.Pool,
    private readonly relayId: string,
    private readonly leaseMs: number,
    private readonly log?: Logger,
  ) {}

  /** Whether this relay recorded itself (a scheduler runs it); until then target names pass through. */
  get joined(): boolean {
    return this.isJoined;
  }

  /** Records this relay and its targets, then keeps the record fresh. */
  async join(targets: readonly Target[]): Promise<void> {
    this.isJoined = true;
    for (const target of targets) this.local.set(target.name, { target });
    // A server slow to answer holds the start a little, never the renewals: those must stay within the lease.
    const asked = Promise.all([...this.local.values()].map((t) => this.learn(t)));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([asked, new Promise((r) => (timer = setTimeout(r, START_WAIT_MS)))]);
    clearTimeout(timer);
    await this.beat();
    this.timer = setInterval(() => void this.beat(), Math.max(200, Math.floor(this.leaseMs / 3)));
    this.timer.unref?.();
  }

  /**
   * A clean stop: this relay stops counting as running at once (its deliveries wait for another relay with the
   * same server). Its record stays, so its servers keep getting the scans that become due while it is away.
   */
  async leave(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (!this.joined) return;
    this.isJoined = false;
    await this.beating?.catch(() => undefined);
    await this.pool.query(`UPDATE relays SET live_until = ${DB_NOW} WHERE relay = $1`, [this.relayId]).catch(() => undefined);
  }

  private beat(): Promise<void> {
    this.beating ??= this.renew().finally(() => (this.beating = undefined));
    return this.beating;
  }

  /** Writes this relay's record (and asks again the servers whose id is still unknown). */
  private async renew(): Promise<void> {
    for (const t of this.local.values()) if (!t.key) void this.learn(t);
    const keys = this.keys();
    try {
      await this.pool.query(
        `INSERT INTO relays (relay, started_at, live_until) VALUES ($1, ${DB_NOW}, ${DB_NOW} + $2)
         ON CONFLICT (relay) DO UPDATE SET live_until = excluded.live_until`,
        [this.relayId, this.leaseMs],
      );
      const known = [...this.local.values()].filter((t) => t.key);
      await this.pool.query(
        `INSERT INTO targets (target, kind, label) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
         ON CONFLICT (target) DO UPDATE SET label = coalesce(excluded.label, targets.label)`,
        [known.map((t) => t.key), known.map((t) => t.target.name), known.map((t) => t.label ?? null)],
      );
      await this.pool.query(`INSERT INTO relay_targets (relay, target) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`, [this.relayId, keys]);
      // A target dropped from the config goes; one whose server has not said who it is yet keeps what it had
      // (a Plex down at start must not miss the scans that become due meanwhile).
      const unknownKinds = [...this.local.values()].filter((t) => !t.key).map((t) => t.target.name);
      await this.pool.query(
        `DELETE FROM relay_targets WHERE relay = $1 AND target <> ALL($2::text[]) AND split_part(target, '@', 1) <> ALL($3::text[])`,
        [this.relayId, keys, unknownKinds],
      );
      // A server just known: relays with scans waiting for it look now.
      if (keys.join('\n') !== this.written) await this.pool.query(`SELECT pg_notify($1, 'relay')`, [WAKE_CHANNEL]);
      this.written = keys.join('\n');
    } catch (err) {
      // The database is down: the next beat writes it; past the lease the others see this relay as gone until then.
      this.log?.debug({ err: (err as Error).message }, 'could not renew this relay in the registry');
    }
  }

  /** Asks a target's server who it is (once at a time); a target that cannot say is known by its name alone. */
  private learn(t: LocalTarget): Promise<void> {
    t.asking ??= this.ask(t).finally(() => (t.asking = undefined));
    return t.asking;
  }

  private async ask(t: LocalTarget): Promise<void> {
    if (!t.target.identity) {
      t.key = t.target.name;
      return;
    }
    try {
      const who = await t.target.identity();
      if (!who) {
        // Every relay names such a server by its kind alone, as before servers had ids: relays beside it share
        // its deliveries, and two such servers of one kind would too (the warning says so).
        t.key = t.target.name;
        this.log?.warn(
          { target: t.target.name },
          `the ${t.target.name} server answers but does not say its id: on this shared queue it is known as '${t.target.name}', and every relay's ${t.target.name} server without an id counts as the same one`,
        );
        if (this.timer) void this.beat();
        return;
      }
      t.key = deliveryKey(t.target.name, who.id);
      t.id = who.id;
      t.label = who.name || undefined;
      if (t.told) this.log?.info({ target: t.target.name, server: t.key }, 'server id known: this relay now takes its share of the deliveries');
      // Known after the start: recorded now rather than at the next renewal.
      if (this.timer) void this.beat();
    } catch (err) {
      const why = (err as Error).message;
      if (t.told !== why) {
        this.log?.warn(
          { target: t.target.name, err: why },
          'waiting for the server id: on a shared queue this relay takes none of this target\'s deliveries until its server answers',
        );
      }
      t.told = why;
    }
  }

  /**
   * The target names the other relays sharing the queue have had lately (the window of activationTargets), as read
   * at the store's open and with each renewal of its leases (PgQueueStore): no statement of its own. Routing sends
   * them every path (queue/route.ts withPeerTargets). The same array until the list changes.
   */
  peerTargets(): readonly string[] {
    return this.peers;
  }

  /** Keeps a fresh read of the other relays' target names (peerTargetsSql). */
  notePeers(names: readonly string[]): void {
    if (names.join('\n') !== this.peers.join('\n')) this.peers = [...names];
  }

  private keys(): string[] {
    return [...this.local.values()].flatMap((t) => (t.key ? [t.key] : []));
  }

  /**
   * The delivery names this relay claims for its target `name`: the server's, and the bare name of deliveries
   * created before relays had ids. None while its server's id is unknown. A name that is not one of this
   * relay's targets passes through.
   */
  claimKeys(name: string): string[] {
    const t = this.local.get(name);
    if (!t) return [name];
    if (!t.key) return [];
    return t.key === name ? [name] : [t.key, name];
  }

  /**
   * The one-at-a-time turn is the server's, shared by every relay beside it and by every name it has here (the
   * scheduler's rule, queue/server-turns.ts: `plex@<id>` whatever the target is called).
   */
  turnKey(name: string): string {
    const t = this.local.get(name);
    if (!t) return name;
    return t.id !== undefined ? serverTurnKey(t.target, t.id) : (t.key ?? name);
  }

  /**
   * Whom a scan that becomes due is delivered to: every server a relay has that runs or stopped less than
   * SERVER_KEPT_MS ago (this one's included), or the given names before join(). Empty: no relay with a target
   * ran lately, and due scans wait for one.
   */
  async activationTargets(db: Db, names: readonly string[]): Promise<string[]> {
    if (!this.joined) return [...names];
    const { rows } = await db.query<{ target: string }>(
      `SELECT DISTINCT rt.target FROM relay_targets rt JOIN relays r USING (relay) WHERE ${seenLately('$1')}`,
      [SERVER_KEPT_MS],
    );
    return [...new Set([...rows.map((r) => r.target), ...this.keys()])].sort();
  }

  /** The running relays, each with its servers by name. */
  async running(db: Db): Promise<RunningRelay[]> {
    const { rows } = await db.query<{ relay: string; target: string | null; kind: string | null; label: string | null }>(
      `SELECT r.relay, rt.target, t.kind, t.label FROM relays r
       LEFT JOIN relay_targets rt USING (relay) LEFT JOIN targets t ON t.target = rt.target
       WHERE r.live_until > ${DB_NOW} ORDER BY r.relay, rt.target`,
    );
    const out = new Map<string, string[]>();
    for (const r of rows) {
      const list = out.get(r.relay) ?? [];
      out.set(r.relay, list);
      if (r.target) list.push(deliveryLabel(r.kind ?? r.target, r.label, r.target));
    }
    return [...out].map(([relay, targets]) => ({ relay, targets }));
  }

  /** Says once that `waiting` due scans wait for a relay with a target; again only after one was there. */
  noTargets(waiting: number): void {
    if (!waiting) {
      this.toldWaiting = false;
      return;
    }
    if (this.toldWaiting) return;
    this.toldWaiting = true;
    this.log?.warn({ scans: waiting }, `no relay with a target is running; ${waiting} scan${waiting === 1 ? '' : 's'} wait${waiting === 1 ? 's' : ''}`);
  }

  /** Each server's name and whether a running relay has it, for the queue view. */
  async seen(db: Db): Promise<TargetsSeen> {
    const { rows } = await db.query<{ target: string; kind: string; label: string | null; live: boolean }>(
      `SELECT t.target, t.kind, t.label, EXISTS (
         SELECT 1 FROM relay_targets rt JOIN relays r USING (relay) WHERE rt.target = t.target AND r.live_until > ${DB_NOW}) AS live
       FROM targets t`,
    );
    const relays = (await db.query<{ n: boolean }>(`SELECT EXISTS (SELECT 1 FROM relays) AS n`)).rows[0]?.n === true;
    const byKey = new Map(rows.map((r) => [r.target, r]));
    const liveKinds = new Set(rows.filter((r) => r.live).map((r) => r.kind));
    return {
      label: (key) => {
        const r = byKey.get(key);
        return r ? deliveryLabel(r.kind, r.label, key) : undefined;
      },
      served: (key) => byKey.get(key)?.live === true || liveKinds.has(key),
      any: liveKinds.size > 0,
      used: this.joined || relays || rows.length > 0,
    };
  }

  /**
   * The queue as people read it on a shared queue: each delivery with its server's name, a waiting one that no
   * running relay can send marked `unserved`, and a due scan that waits for a relay with a target says so.
   */
  describe(entries: QueueEntry[], seen: TargetsSeen, now = Date.now()): QueueEntry[] {
    for (const e of entries) {
      for (const d of e.deliveries) {
        const label = seen.label(d.target);
        if (label) d.label = label;
        // A claim whose relay died (its lease ran out) waits like any other delivery.
        const waits = d.status === 'waiting' || (d.status === 'sending' && (d.lease_until ?? Infinity) < now);
        if (seen.used) d.unserved = waits && !seen.served(d.target);
      }
      if (seen.used && e.status === 'pending' && e.dueAt <= now && !seen.any) e.waiting = NO_TARGET;
    }
    return entries;
  }
}

/** Why a due scan still waits on a shared queue. */
export const NO_TARGET = 'no relay with a target is running';
