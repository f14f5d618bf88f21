import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AutopulseTrigger } from '../config/schema.ts';
import type { Intent, ScanPath } from '../intake/intent.ts';
import { PathProblem } from '../intake/resolve.ts';
import { submitIntent } from '../intake/submit.ts';
import { compilePattern, matchesAnywhere } from '../paths/pattern.ts';
import { rewritePath } from '../paths/rewrite.ts';
import { AutopulseParseError, autopulseWebhookPaths, type AutopulsePath, type AutopulseWebhookType } from '../triggers/autopulse/paths.ts';
import type { PluginDeps } from './deps.ts';
import type { Hook } from './guard.ts';

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
  // routes/stats.rs: the counts, with no credentials, and how long reading them took (ms). A scan waiting or being
  // sent is pending; done is processed. The relay has no separate retry state here: retrying is 0.
  app.get('/stats', async () => {
    const start = performance.now();
    const c = await deps.store.view.counts();
    const pending = (c.pending ?? 0) + (c.active ?? 0);
    const stats = { total: pending + (c.done ?? 0) + (c.failed ?? 0), processed: c.done ?? 0, retrying: 0, failed: c.failed ?? 0, pending };
    return { stats, speed: Math.round((performance.now() - start) * 1000) / 1000 };
  });

  if (!config.SERVER_AUTH_USER || !config.SERVER_AUTH_PASS) {
    app.all('/triggers/*', async (_req, reply) =>
      reply.code(404).type('text/plain; charset=utf-8').send("autopulse's /triggers/ routes are off: they carry no secret, so they need SERVER_AUTH_USER and SERVER_AUTH_PASS set"),
    );
    return;
  }

  // autopulse's excludes name targets (runner.rs:258-262); the named targets are TARGETS' keys.
  const targetNames = Object.keys((config as { TARGETS?: Record<string, unknown> }).TARGETS ?? {});
  const compiled = new Map(Object.entries(triggers).map(([name, t]) => [name, { include: t.INCLUDE.map(compilePattern), exclude: t.EXCLUDE.map(compilePattern) }]));
  /** path_filter.rs:15-17: included (or no include list) and not excluded, on the rewritten path. */
  const allows = (name: string, path: string) => {
    const f = compiled.get(name)!;
    return (f.include.length === 0 || f.include.some((re) => matchesAnywhere(re, path))) && !f.exclude.some((re) => matchesAnywhere(re, path));
  };
  // rewrite.rs:76-85: every rule in turn, each replacing all its matches.
  const rewrite = (t: AutopulseTrigger, path: string) => (t.REWRITE.length ? rewritePath(t.REWRITE, path).path : path);

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
          return s && s.status !== 'ignored' ? [scanEvent(name, p.path, p.search ? 'not_found' : 'found', s.id, s.due)] : [];
        }),
      );
    });

    sub.get<{ Params: { name: string }; Querystring: Record<string, string | string[]> }>('/triggers/:name', { onRequest: guard }, async (req, reply) => {
      const query = queryOf(req.query);
      if (!query) return text(reply, 400, QUERY_ERROR);
      return getInner(req, reply, req.params.name, query);
    });
  });

  // Requests held for their hash: checked every SERVER_FILE_CHECK_DELAY, at most SERVER_MAX_FILE_CHECKS times.
  const held = new Set<NodeJS.Timeout>();
  app.addHook('onClose', async () => {
    for (const timer of held) clearTimeout(timer);
    held.clear();
  });
  function holdForHash(name: string, path: string, hash: string, intent: Extract<Intent, { kind: 'scan' }>, checks: number): void {
    const timer = setTimeout(() => {
      held.delete(timer);
      void (async () => {
        const actual = await sha256(path);
        if (actual === hash) {
          await submitIntent(intent, deps, app.log, 'hash check');
          return;
        }
        if (checks + 1 <= config.SERVER_MAX_FILE_CHECKS) return holdForHash(name, path, hash, intent, checks + 1);
        app.log.warn({ trigger: name, path, expected: hash, actual, checks }, 'hash never matched: the file was not scanned');
      })().catch((err: unknown) => app.log.error({ err, trigger: name, path }, 'a held request could not be queued'));
    }, config.SERVER_FILE_CHECK_DELAY * 1000);
    held.add(timer);
  }

  /** triggers.rs:127-248: a manual (or bazarr) trigger takes ?path=&hash=, an autoscan one ?dir=. */
  async function getInner(req: FastifyRequest, reply: FastifyReply, name: string, query: Query): Promise<FastifyReply> {
    const t = own(triggers, name);
    if (!t) return text(reply, 404, 'Trigger not found');
    if (t.TYPE === 'manual' || t.TYPE === 'bazarr' || t.TYPE === 'autoscan') {
      const wantsManual = t.TYPE !== 'autoscan';
      if (wantsManual !== (query.kind === 'manual')) return text(reply, 400, 'Invalid query parameters');
      const path = rewrite(t, query.path);
      // A filtered path is answered 204 with nothing queued (triggers.rs:145-148, 200-203).
      if (!allows(name, path)) return reply.code(204).send();
      let found: 'found' | 'not_found' | 'hash_mismatch' = 'not_found';
      const scans: ScanPath[] = [{ path, kind: t.TYPE === 'autoscan' ? 'folder' : 'guess' }];
      if (query.kind === 'manual' && query.hash !== undefined && config.SERVER_FILE_CHECKS_ENABLED) {
        // autopulse checks the file's sha256 before it is scanned (runner.rs:53-100): until it matches (the file
        // is missing, or still being written), nothing is sent, and the file is checked again.
        const actual = await sha256(path);
        if (actual !== query.hash) {
          found = actual === undefined ? 'not_found' : 'hash_mismatch';
          req.log.warn({ trigger: name, path, expected: query.hash, actual }, found === 'hash_mismatch' ? 'hash mismatch: held until the file matches' : 'file not found: held until it exists and matches its hash');
          holdForHash(name, path, query.hash, intentOf(t, name, 'Manual', scans, t.DELAY, targetNames), 1);
          return reply.send(scanEvent(name, path, found, undefined, undefined, query.hash));
        }
        found = 'found';
      }
      const result = await submit(intentOf(t, name, 'Manual', scans, t.DELAY, targetNames), req, reply, deps);
      if (!result) return reply;
      const s = result.scans[0];
      if (!s || s.status === 'ignored') return text(reply, 500, s && 'reason' in s ? s.reason : 'the path was not queued');
      return reply.send(scanEvent(name, path, found, s.id, s.due, query.kind === 'manual' ? query.hash : undefined));
    }
    // A webhook trigger called with GET (triggers.rs:246).
    return reply.code(200).type('text/plain; charset=utf-8').send('Not implemented');
  }
}

type Query = { kind: 'manual'; path: string; hash?: string } | { kind: 'autoscan'; path: string };

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

export function intentOf(t: AutopulseTrigger, name: string, event: string, paths: ScanPath[], delay: number | undefined, targetNames: readonly string[]): Extract<Intent, { kind: 'scan' }> {
  return {
    kind: 'scan',
    source: SOURCES[t.TYPE],
    event,
    title: `autopulse trigger ${name}`,
    updateType: paths.every((p) => p.kind === 'gone') ? 'Deleted' : 'Modified',
    paths,
    ...(delay !== undefined ? { delay } : {}),
    ...(t.TARGETS ? { targets: [...t.TARGETS] } : t.EXCLUDE_TARGETS && targetNames.length ? { targets: targetNames.filter((n) => !t.EXCLUDE_TARGETS!.includes(n)) } : {}),
  };
}

async function submit(intent: Extract<Intent, { kind: 'scan' }>, req: FastifyRequest, reply: FastifyReply, deps: PluginDeps) {
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

/** utils/src/checksum.rs: the file's sha256 in lower-case hex; undefined when it cannot be read (not there yet). */
function sha256(path: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('error', () => resolve(undefined))
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')));
  });
}
