import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { autopulseTitle, autopulseTriggerName } from './names.ts';
import type { AutopulseTrigger } from '../../config/schema.ts';
import { triggerSelection } from '../../config/targets.ts';
import type { ScanPath, ScanIntent } from '../../intake/intent.ts';
import { PathProblem } from '../../intake/resolve.ts';
import { submitIntent } from '../../intake/submit.ts';
import { compilePattern, leftOutByPatterns } from '../../paths/pattern.ts';
import { rewritePath } from '../../paths/rewrite.ts';
import { EVENT_SORT_COLUMNS, processStatusOf, type EventSort } from './event-list.ts';
import type { QueueEntry } from '../../queue/types.ts';
import type { LibraryPlace } from '../../paths/library.ts';
import { invalidRequestPath } from '../../paths/validate.ts';
import { invalidInputText, invalidText } from '../../core/text.ts';
import { HashHolds, REQUEST_HASH_WAIT_MS, TooManyHolds, type Hold } from './holds.ts';
import { scanDiskPath, scanPlaces } from '../../server/library-places.ts';
import { hashFor, hashIds } from '../../core/file-hash.ts';
import { configTemplateRoute } from './config-template.ts';
import { collapseSlashes, failedTimes, fileEventId, foundStatusOf, indexBody, openHolds, pageWithHolds, parseFileEventId, pathOfTag, readHolds } from './events.ts';
import { AutopulseParseError, autopulseWebhookPaths, type AutopulsePath, type AutopulseWebhookType } from './webhook-paths.ts';
import { QUEUES_WORK } from '../../server/browser.ts';
import type { PluginDeps } from '../../server/deps.ts';
import type { Hook } from '../../server/guard.ts';

/**
 * autopulse's HTTP surface (crates/server/src/routes/triggers.rs), so an autopulse user changes only host and
 * port: POST and GET /triggers/<name> for each SERVER_AUTOPULSE_TRIGGERS entry, with autopulse's answers (an
 * array of scan events for a webhook, one event for a manual or autoscan-style GET) and its status codes
 * (401 "Authentication required", 404 "Trigger not found", 400 on a bad query or body, 500 "Unable to parse
 * request" for a body its trigger cannot read). Served only with SERVER_AUTH_USER and SERVER_AUTH_PASS set.
 */
export async function autopulseRoutes(app: FastifyInstance, deps: PluginDeps, guard: Hook): Promise<void> {
  const { config } = deps;
  const triggers = config.SERVER_AUTOPULSE_TRIGGERS;
  app.get('/health', { config: { rateLimit: false } }, async () => ({ status: 'ok' }));
  // routes/index.rs:10-17: the version, with no credentials.
  app.get('/', async () => indexBody());
  // routes/stats.rs: the counts, with no credentials, and how long reading them took (ms). Each scan counts once,
  // in the process status /list and /status give it (peers/autopulse/event-list.ts): autopulse's get_stats counts its
  // events' process_status the same way, and total is every event (manager.rs:163-175).
  // It needs no credentials, so anyone may call it in a loop: the counts are read at most once a second, and
  // the calls in between (and those while a read runs) share that answer, `speed` included.
  let stats: { at: number; answer: Promise<unknown> } | undefined;
  app.get('/stats', async () => {
    const now = Date.now();
    if (stats && now - stats.at < STATS_MAX_AGE_MS) return stats.answer;
    const answer = readStats(deps.store);
    stats = { at: now, answer };
    // A failed read is not kept: the next call reads again.
    answer.catch(() => {
      if (stats?.answer === answer) stats = undefined;
    });
    return answer;
  });

  if (!config.SERVER_AUTH_USER || !config.SERVER_AUTH_PASS) {
    const off = async (_req: FastifyRequest, reply: FastifyReply) =>
      reply.code(404).type('text/plain; charset=utf-8').send("autopulse's /triggers/, /list, /status/ and /api/config-template routes are off: they carry no secret, so they need SERVER_AUTH_USER and SERVER_AUTH_PASS set");
    app.all('/triggers/*', off);
    app.get('/list', off);
    app.get('/status/*', off);
    app.get('/api/config-template', off);
    return;
  }

  // Bazarr's "Generate Autopulse Configuration" (routes/config.rs).
  configTemplateRoute(app, guard);

  // Requests held for their hash, in the queue (holds.ts), checked again after a restart.
  const holds = new HashHolds(deps, deps.log);
  app.addHook('onReady', () => holds.start());
  app.addHook('onClose', async () => holds.close());

  // routes/list.rs and manager.rs:218-284: a page of every scan, newest first, as autopulse's scan events.
  app.get<{ Querystring: Record<string, string | string[]> }>('/list', { onRequest: guard }, async (req, reply) => {
    const q = listQueryOf(req.query);
    if (typeof q === 'string') return text(reply, 400, `Query deserialize error: ${q}`);
    if (q.sort === undefined) return text(reply, 500, 'invalid sort field');
    // Requests held for their hash are rows of autopulse's list too (pending, not found).
    const rows = await pageWithHolds(q.sort, await readHolds(deps.store), async (page) => deps.store.view.listEvents(page), (e) => processStatusOf(e.status, e.deliveries));
    const scans = rows.flatMap((r) => ('hold' in r ? [] : [r.scan]));
    const found = await withFound(scans.map(eventOfScan), scans);
    return reply.send(rows.map((r) => ('hold' in r ? eventOfHold(r.hold) : found[scans.indexOf(r.scan)])));
  });

  // routes/status.rs: one event by its id. A scan's id is the relay's scan number; a held request's is its uuid.
  app.get<{ Params: { id: string } }>('/status/:id', { onRequest: guard }, async (req, reply) => {
    const id = req.params.id;
    // A held request's id is a uuid: an id PostgreSQL cannot even compare (a NUL) is no event (it was a 500).
    if (invalidText(id)) return text(reply, 404, 'Event not found');
    const file = parseFileEventId(id);
    if (file) {
      // One file of a scan, by the id a trigger's answer gave it (events.ts fileEventId).
      const entry = await deps.store.view.get(file.scanId);
      const path = entry && (pathOfTag(entry, file.tag) ?? (entry.fileCount > entry.files.length ? entry.folder : undefined));
      if (entry && path !== undefined) return reply.send((await withFound([{ ...eventOfScan(entry), id, file_path: path, file_hash: hashFor(entry, path) ?? null }], [entry]))[0]);
    } else if (/^[1-9]\d{0,15}$/.test(id)) {
      const entry = await deps.store.view.get(Number(id));
      if (entry) return reply.send((await withFound([eventOfScan(entry)], [entry]))[0]);
    } else {
      const hold = await holds.get(id);
      if (hold) {
        // The scan it became, if that scan is still the one for its path (`scanrelay move-queue` renumbers scans).
        const scan = hold.scanId === undefined ? undefined : await deps.store.view.get(hold.scanId);
        const entry = scan && hold.scanFolder !== undefined && isWithin(hold.scanFolder, scan.folder) ? scan : undefined;
        return reply.send(entry ? { ...eventOfScan(entry), id: hold.id, file_path: hold.path, file_hash: hold.hash } : eventOfHold(hold));
      }
    }
    return text(reply, 404, 'Event not found');
  });

  // autopulse's excludes name targets (runner.rs:258-262): every named target (TARGETS and the top-level PLEX_*,
  // JELLYFIN, EMBY), as the take-over of its queue reads them.
  const targetNames = [...config.targets.keys()];
  const compiled = new Map(Object.entries(triggers).map(([name, t]) => [name, { include: t.INCLUDE.map(compilePattern), exclude: t.EXCLUDE.map(compilePattern) }]));
  /** path_filter.rs:15-17: included (or no include list) and not excluded, on the rewritten path. */
  const allows = (name: string, path: string) => {
    const f = compiled.get(name)!;
    return leftOutByPatterns(f.include, f.exclude, path) === undefined;
  };
  // rewrite.rs:76-85: every rule in turn, each replacing all its matches; a "//" it leaves is one separator.
  const rewrite = (t: AutopulseTrigger, path: string) => collapseSlashes(t.REWRITE.length ? rewritePath(t.REWRITE, path).path : path);
  /** An event's found_status as autopulse's file check would have it by now (events.ts foundStatusOf). */
  // The disk is looked at only inside a library the scan's targets know, as for ?hash= (paths/library.ts); the
  // folders are read once per answer, for each set of targets.
  const withFound = async (events: Array<Record<string, unknown>>, scans: readonly QueueEntry[]) => {
    const placesOf = new Map<string, Promise<LibraryPlace[]>>();
    const lookFor = (scan: QueueEntry) => {
      if (!config.SERVER_FILE_CHECKS_ENABLED) return undefined;
      const targets = [...new Set(scan.deliveries.map((d) => d.target))].sort();
      const key = targets.join('\0');
      return async (path: string) => {
        let places = placesOf.get(key);
        if (!places) placesOf.set(key, (places = scanPlaces(config, deps.libraries, targets.length ? targets : undefined, { ms: REQUEST_HASH_WAIT_MS })));
        return scanDiskPath(path, await places, config);
      };
    };
    return Promise.all(events.map(async (ev, i) => ({ ...ev, found_status: await foundStatusOf(String(ev.file_path), scans[i]!.status, lookFor(scans[i]!)) })));
  };

  await app.register(async (sub) => {
    // autopulse reads the raw body whatever its content type, and an empty one means "read the query" (triggers.rs:34-41).
    sub.removeAllContentTypeParsers();
    sub.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

    sub.post<{ Params: { name: string }; Querystring: Record<string, string | string[]> }>('/triggers/:name', { onRequest: guard }, async (req, reply) => {
      const name = req.params.name;
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (raw.length === 0) {
        const query = queryOf(req.query);
        if (!query) return text(reply, 400, QUERY_ERROR);
        return getInner(req, reply, name, query);
      }
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch (err) {
        return text(reply, 400, `Json deserialize error: ${(err as Error).message}`);
      }
      const t = own(triggers, name);
      if (!t) return text(reply, 404, 'Trigger not found');
      if (t.TYPE === 'manual') return text(reply, 400, 'Invalid request');
      let event: string;
      let paths: AutopulsePath[];
      try {
        // bazarr and autoscan have no webhook paths: autopulse fails the same way (triggers/mod.rs:339-341).
        if (t.TYPE === 'bazarr' || t.TYPE === 'autoscan') throw new AutopulseParseError('Manual trigger does not have paths');
        ({ event, paths } = autopulseWebhookPaths(t.TYPE as AutopulseWebhookType, body));
      } catch (err) {
        if (!(err instanceof AutopulseParseError)) throw err;
        req.log.warn({ trigger: name, err: err.message }, 'failed to decode request');
        return text(reply, 500, 'Unable to parse request');
      }
      const wanted = paths.map((p) => ({ ...p, path: rewrite(t, p.path) })).filter((p) => allows(name, p.path));
      const delay = waitOf(t, event);
      if (!wanted.length) return reply.send([]);
      const scans: ScanPath[] = wanted.map((p) => ({ path: p.path, kind: p.search ? 'guess' : 'gone' }));
      const intent = intentOf(t, name, event, scans, delay, targetNames);
      const result = await submit(intent, req, reply, deps);
      if (!result) return reply;
      return reply.send(
        wanted.flatMap((p, i) => {
          const s = result.scans[i];
          return s && s.status !== 'ignored' ? [{ ...scanEvent(name, p.path, p.search ? 'not_found' : 'found', s.id, s.due), id: fileEventId(s.id, s.path) }] : [];
        }),
      );
    });

    // GET queues a scan as autopulse's does, so it is refused across sites like a POST (browser.ts); HEAD
    // (which fastify would otherwise run through this handler) never queues one.
    sub.get<{ Params: { name: string }; Querystring: Record<string, string | string[]> }>('/triggers/:name', { onRequest: guard, exposeHeadRoute: false, config: QUEUES_WORK }, async (req, reply) => {
      const query = queryOf(req.query);
      if (!query) return text(reply, 400, QUERY_ERROR);
      return getInner(req, reply, req.params.name, query);
    });
    sub.head('/triggers/:name', { onRequest: guard }, async (_req, reply) => reply.code(405).header('allow', 'GET, POST').send());
  });

  /** triggers.rs:127-248: a manual (or bazarr) trigger takes ?path=&hash=, an autoscan one ?dir=. */
  async function getInner(req: FastifyRequest, reply: FastifyReply, name: string, query: Query): Promise<FastifyReply> {
    const t = own(triggers, name);
    if (!t) return text(reply, 404, 'Trigger not found');
    if (t.TYPE === 'manual' || t.TYPE === 'bazarr' || t.TYPE === 'autoscan') {
      const wantsManual = t.TYPE !== 'autoscan';
      if (wantsManual !== (query.kind === 'manual')) return text(reply, 400, 'Invalid query parameters');
      // A control character (a newline, a NUL) or a ".." is a 400 before the path or its hash is looked at
      // (issue 47 items 1 and 2), naming the field as the query does.
      const field = query.kind === 'manual' ? 'path' : 'dir';
      const bad = invalidRequestPath(query.path)?.replace(/^filepath/, field) ?? (query.kind === 'manual' && query.hash !== undefined ? hashProblem(query.hash) : undefined);
      if (bad) return text(reply, 400, bad);
      const path = rewrite(t, query.path);
      // A filtered path is answered 204 with nothing queued (triggers.rs:145-148, 200-203).
      if (!allows(name, path)) return reply.code(204).send();
      let found: 'found' | 'not_found' | 'hash_mismatch' = 'not_found';
      const scans: ScanPath[] = [{ path, kind: t.TYPE === 'autoscan' ? 'folder' : 'guess' }];
      if (query.kind === 'manual' && query.hash !== undefined && config.SERVER_FILE_CHECKS_ENABLED) {
        // autopulse checks the file's sha256 before it is scanned (runner.rs:53-100): until it matches (the file
        // is missing, or still being written), nothing is sent, and the file is checked again. Only a regular file
        // inside a library the trigger's targets know is read; anything else, and a file not hashed within a
        // couple of seconds, is held as not found (holds.ts).
        const intent = manualIntent(t, name, scans, query, targetNames);
        const actual = await holds.sha256(path, intent.targets, { waitMs: REQUEST_HASH_WAIT_MS, first: true });
        if (actual !== query.hash) {
          found = actual === undefined ? 'not_found' : 'hash_mismatch';
          let hold: Hold;
          try {
            hold = await holds.hold(name, path, query.hash, found, intent);
          } catch (err) {
            if (err instanceof TooManyHolds) return text(reply, 503, err.message);
            throw err;
          }
          req.log.warn({ trigger: name, path, expected: query.hash, actual, hold: hold.id }, found === 'hash_mismatch' ? 'hash mismatch: held until the file matches' : 'file not found: held until it exists and matches its hash');
          return reply.send(eventOfHold(hold));
        }
        found = 'found';
      }
      const result = await submit(manualIntent(t, name, scans, query, targetNames), req, reply, deps);
      if (!result) return reply;
      const s = result.scans[0];
      if (!s || s.status === 'ignored') return text(reply, 500, s && 'reason' in s ? s.reason : 'the path was not queued');
      return reply.send({ ...scanEvent(name, path, found, s.id, s.due, query.kind === 'manual' ? query.hash : undefined), id: fileEventId(s.id, s.path) });
    }
    // A webhook trigger called with GET (triggers.rs:246).
    return reply.code(200).type('text/plain; charset=utf-8').send('Not implemented');
  }
}

/** How old a /stats answer may be. */
export const STATS_MAX_AGE_MS = 1000;

async function readStats(store: PluginDeps['store']) {
  const start = performance.now();
  const c = await store.view.eventCounts();
  // A request held for its file or hash is autopulse's pending row (runner.rs:37-107): counted as pending.
  const held = openHolds(await readHolds(store)).length;
  const stats = { total: c.pending + held + c.retry + c.complete + c.failed, processed: c.complete, retrying: c.retry, failed: c.failed, pending: c.pending + held };
  return { stats, speed: Math.round((performance.now() - start) * 1000) / 1000 };
}

type Query = { kind: 'manual'; path: string; hash?: string } | { kind: 'autoscan'; path: string };

/** A manual (bazarr, autoscan) trigger's intent; a `hash` goes with it for the forward target (core/file-hash.ts). */
function manualIntent(t: AutopulseTrigger, name: string, scans: ScanPath[], query: Query, targetNames: readonly string[]): ScanIntent {
  const intent = intentOf(t, name, 'Manual', scans, t.DELAY, targetNames);
  return query.kind === 'manual' && query.hash !== undefined && scans.length === 1 ? { ...intent, ids: hashIds(scans[0]!.path, query.hash) } : intent;
}

/** A hash is kept with its held request: it must be text the queue can store. */
function hashProblem(hash: string): string | undefined {
  const problem = invalidInputText(hash);
  return problem ? `hash ${problem}` : undefined;
}

/** serde's untagged TriggerQueryParams (triggers.rs:17-22): `path` (and `hash`) first, else `dir`. */
function queryOf(q: Record<string, string | string[]> | undefined): Query | undefined {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : v);
  const path = one(q?.path);
  if (path !== undefined) {
    const hash = one(q?.hash);
    return { kind: 'manual', path, ...(hash !== undefined ? { hash } : {}) };
  }
  const dir = one(q?.dir);
  return dir !== undefined ? { kind: 'autoscan', path: dir } : undefined;
}
const QUERY_ERROR = 'Query deserialize error: data did not match any variant of untagged enum TriggerQueryParams';

const own = <T>(map: Record<string, T>, key: string): T | undefined => (Object.hasOwn(map, key) ? map[key] : undefined);

/** autopulse's refusals (middleware/auth.rs:48-51): 401 with the JSON string "Authentication required". */
export function autopulseSend(_req: FastifyRequest, reply: FastifyReply, status: number, message: string): FastifyReply {
  if (status === 401) return reply.code(401).type('application/json').send(JSON.stringify('Authentication required'));
  return text(reply, status, message);
}

function text(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('text/plain; charset=utf-8').send(message);
}

/**
 * timer.rs:11-20 and triggers/mod.rs:315-328: the trigger's wait plus the event's, either alone when the other
 * is absent; undefined = opts.default_timer_wait (SERVER_SCAN_DELAY).
 */
export function waitOf(t: Pick<AutopulseTrigger, 'DELAY' | 'EVENT_DELAYS'>, event: string): number | undefined {
  const extra = own(t.EVENT_DELAYS, event.toLowerCase());
  if (t.DELAY !== undefined && extra !== undefined) return t.DELAY + extra;
  return t.DELAY ?? extra;
}

const SOURCES = { sonarr: 'Sonarr', sportarr: 'Sonarr', radarr: 'Radarr', lidarr: 'Lidarr', readarr: 'Readarr', manual: 'Manual', bazarr: 'Manual', autoscan: 'Manual' } as const;

export function intentOf(t: AutopulseTrigger, name: string, event: string, paths: ScanPath[], delay: number | undefined, targetNames: readonly string[]): ScanIntent {
  const targets = triggerSelection(t, targetNames);
  return {
    kind: 'scan',
    source: SOURCES[t.TYPE],
    event,
    title: autopulseTitle(name),
    updateType: paths.every((p) => p.kind === 'gone') ? 'Deleted' : 'Modified',
    paths,
    ...(delay !== undefined ? { delay } : {}),
    ...(targets ? { targets } : {}),
  };
}

async function submit(intent: ScanIntent, req: FastifyRequest, reply: FastifyReply, deps: PluginDeps) {
  try {
    return await submitIntent(intent, deps, req.log, req.ip);
  } catch (err) {
    if (!(err instanceof PathProblem)) throw err;
    deps.metrics?.request(intent.source, 'rejected');
    text(reply, 400, err.message);
    return undefined;
  }
}

/** autopulse's NaiveDateTime in JSON: ISO without a zone. */
const naive = (ms: number) => new Date(ms).toISOString().replace('Z', '');

/** One scan event as autopulse answers it (database/src/models.rs:77-119), its id the relay's scan id. */
export function scanEvent(source: string, path: string, found: string, id: number | undefined, due: string | undefined, hash?: string): Record<string, unknown> {
  const now = naive(Date.now());
  return {
    id: id === undefined ? '' : String(id),
    event_source: source,
    event_timestamp: now,
    file_path: path,
    file_hash: hash ?? null,
    process_status: 'pending',
    found_status: found,
    failed_times: 0,
    next_retry_at: null,
    targets_hit: '',
    found_at: null,
    processed_at: null,
    created_at: now,
    updated_at: now,
    can_process: due ? naive(Date.parse(due)) : now,
  };
}

/** autopulse's list query (routes/list.rs:8-33): limit a u8 (10), page a u64 (1), sort, status, search. */
function listQueryOf(q: Record<string, string | string[]> | undefined): string | { sort: Parameters<PluginDeps['store']['view']['listEvents']>[0] | undefined } {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : v);
  const int = (key: string, max: bigint, def: bigint): bigint | string => {
    const v = one(q?.[key]);
    if (v === undefined) return def;
    if (!/^\+?\d+$/.test(v)) return `${key}: invalid digit found in string`;
    const n = BigInt(v);
    return n > max ? `${key}: number too large to fit in target type` : n;
  };
  const limit = int('limit', 255n, 10n);
  if (typeof limit === 'string') return limit;
  const page = int('page', 18446744073709551615n, 1n);
  if (typeof page === 'string') return page;
  // manager.rs:226-235: at most 100 a page, page 0 read as 1.
  const size = limit > 100n ? 100n : limit;
  const offset = ((page < 1n ? 1n : page) - 1n) * size;
  const rawSort = one(q?.sort);
  const status = one(q?.status);
  const search = one(q?.search);
  // PostgreSQL refuses a NUL in text (a 500 it was); no stored path holds one, on either store.
  for (const [key, value] of [['status', status], ['search', search]] as const) {
    const problem = value === undefined ? undefined : invalidText(value);
    if (problem) return `${key}: ${problem}`;
  }
  let sort: EventSort = 'created_at';
  let asc = false;
  if (rawSort !== undefined) {
    // manager.rs:237-268: "-field" is ascending, a bare field descending; any other field is an error (500).
    const field = rawSort.startsWith('-') ? rawSort.slice(1) : rawSort;
    if (!Object.hasOwn(EVENT_SORT_COLUMNS, field)) return { sort: undefined };
    sort = field as EventSort;
    asc = rawSort.startsWith('-');
  }
  // An offset past any queue the relay keeps answers an empty page, as autopulse's would.
  const safeOffset = offset > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(offset);
  return { sort: { sort, asc, limit: Number(size), offset: safeOffset, ...(status !== undefined ? { status } : {}), ...(search !== undefined ? { search } : {}) } };
}

/** `folder` is `root` or below it (a scan merged into one of its parents keeps standing for it). */
const isWithin = (folder: string, root: string) => folder === root || folder.startsWith(root.endsWith('/') ? root : `${root}/`);

/** The trigger a scan came from: its autopulse trigger's name (intentOf's title), else its source. */
function sourceOf(e: Pick<QueueEntry, 'title' | 'source'>): string {
  return autopulseTriggerName(e.title, e.source);
}

/**
 * A queued scan as autopulse's ScanEvent (database/src/models.rs:77-119). One scan stands for every request for
 * its folder (they are merged), so file_path is its one file, or its folder when it has several or none;
 * targets_hit the targets it reached; failed_times the most failed attempts of a target; found_status "found", since a
 * request held for its hash is queued only once it matched (the routes look again: withFound); file_hash the hash a
 * manual request gave for its file (core/file-hash.ts).
 */
export function eventOfScan(e: QueueEntry): Record<string, unknown> {
  const waiting = e.deliveries.filter((d) => d.status === 'waiting' && d.attempts > 0);
  const updated = e.finishedAt ?? e.lastAt;
  return {
    id: String(e.id),
    event_source: sourceOf(e),
    event_timestamp: naive(e.firstAt),
    file_path: e.fileCount === 1 && e.files.length === 1 ? e.files[0] : e.folder,
    file_hash: e.fileCount === 1 && e.files.length === 1 ? (hashFor(e, e.files[0]!) ?? null) : null,
    process_status: processStatusOf(e.status, e.deliveries),
    found_status: 'found',
    failed_times: failedTimes(e.deliveries),
    next_retry_at: waiting.length ? naive(Math.min(...waiting.map((d) => d.next_at))) : null,
    targets_hit: e.deliveries
      .filter((d) => d.status === 'done')
      .map((d) => d.target)
      .sort()
      .join(','),
    found_at: null,
    processed_at: e.status === 'done' && e.finishedAt !== null ? naive(e.finishedAt) : null,
    created_at: naive(e.firstAt),
    updated_at: naive(updated),
    can_process: naive(e.dueAt),
  };
}

/** A request held for its hash as autopulse's pending, not yet found event. */
export function eventOfHold(h: Hold): Record<string, unknown> {
  return {
    id: h.id,
    event_source: h.trigger,
    event_timestamp: naive(h.createdAt),
    file_path: h.path,
    file_hash: h.hash,
    process_status: 'pending',
    found_status: h.found,
    failed_times: 0,
    next_retry_at: null,
    targets_hit: '',
    found_at: h.foundAt === null ? null : naive(h.foundAt),
    processed_at: null,
    created_at: naive(h.createdAt),
    updated_at: naive(h.updatedAt),
    can_process: naive(h.createdAt),
  };
}
