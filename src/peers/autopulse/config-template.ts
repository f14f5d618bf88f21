import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createRequire } from 'node:module';
import { packageVersion } from '../../core/version.ts';
import { invalidInputText } from '../../core/text.ts';
import type { Hook } from '../../server/guard.ts';

/*
 * autopulse's GET /api/config-template (crates/server/src/routes/config.rs:41-207 at dan-online/autopulse 55124fd).
 * Bazarr's "Generate Autopulse Configuration" asks it for a config with a bazarr trigger and shows the answer; then
 * it sends GET /triggers/bazarr?path=<folder> and tests the connection with /stats. Served with autopulse's query
 * and answer shape `{config, version}`, so Bazarr is pointed at scanrelay unchanged. The config is autopulse's
 * template: a file `scanrelay import-autopulse` reads like any autopulse config.
 */

/** TriggerType and TargetType (settings/triggers/mod.rs:269-281, settings/targets/mod.rs:264-277), lower-case. */
const TRIGGER_TYPES = ['manual', 'autoscan', 'radarr', 'bazarr', 'sonarr', 'sportarr', 'lidarr', 'readarr', 'notify'] as const;
const TARGET_TYPES = ['plex', 'jellyfin', 'emby', 'tdarr', 'sonarr', 'radarr', 'command', 'fileflows', 'autopulse', 'audiobookshelf'] as const;

/** DatabaseType::default_url (database/src/conn.rs:36-43). */
const DATABASE_URLS = { sqlite: 'sqlite://data/autopulse.db', postgres: 'postgres://autopulse:autopulse@localhost:5432/autopulse' } as const;

/** Each target's template (config.rs:161-195): placeholders a consuming application replaces. */
const TARGET_TEMPLATES: Record<(typeof TARGET_TYPES)[number], Record<string, unknown>> = {
  plex: { url: '{url}', token: '{token}' },
  jellyfin: { url: '{url}', token: '{token}' },
  emby: { url: '{url}', token: '{token}' },
  tdarr: { url: '{url}', db_id: '{library_id}' },
  sonarr: { url: '{url}', token: '{token}' },
  radarr: { url: '{url}', token: '{token}' },
  command: { raw: "echo 'Processing $FILE_PATH'" },
  fileflows: { url: '{url}' },
  autopulse: { url: '{url}', auth: { username: '{username}', password: '{password}' } },
  audiobookshelf: { url: '{url}', token: '{token}' },
};

export interface TemplateQuery {
  database: keyof typeof DATABASE_URLS;
  triggers: Array<(typeof TRIGGER_TYPES)[number]>;
  targets: Array<(typeof TARGET_TYPES)[number]>;
  output: 'json' | 'toml';
}

export class TemplateQueryError extends Error {}

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : v);

/** A comma-separated list of one enum's names, each trimmed (config.rs:53-79); empty or absent: none. */
function typeList<T extends string>(raw: string | undefined, allowed: readonly T[], what: string): T[] {
  if (raw === undefined || raw === '') return [];
  return raw.split(',').map((s) => {
    const name = s.trim();
    if (!(allowed as readonly string[]).includes(name)) throw new TemplateQueryError(`Invalid ${what} types: unknown variant \`${name}\`, expected one of ${allowed.map((a) => `\`${a}\``).join(', ')}`);
    return name as T;
  });
}

/** TemplateQuery (config.rs:15-26): database (sqlite), triggers, targets, output (toml). */
export function templateQueryOf(q: Record<string, string | string[]> | undefined): TemplateQuery {
  // A control character (a newline, a NUL) is refused by name before anything is matched, as every route does
  // (paths/validate.ts), so no answer echoes one back.
  for (const key of ['database', 'triggers', 'targets', 'output']) {
    const value = one(q?.[key]);
    const problem = value === undefined ? undefined : invalidInputText(value);
    if (problem) throw new TemplateQueryError(`Query deserialize error: ${key} ${problem}`);
  }
  const database = one(q?.database) ?? 'sqlite';
  if (!Object.hasOwn(DATABASE_URLS, database)) throw new TemplateQueryError(`Query deserialize error: database: unknown variant \`${database}\`, expected \`sqlite\` or \`postgres\``);
  const output = one(q?.output) ?? 'toml';
  if (output !== 'json' && output !== 'toml') throw new TemplateQueryError(`Query deserialize error: output: unknown variant \`${output}\`, expected \`json\` or \`toml\``);
  return {
    database: database as TemplateQuery['database'],
    triggers: typeList(one(q?.triggers), TRIGGER_TYPES, 'trigger'),
    targets: typeList(one(q?.targets), TARGET_TYPES, 'target'),
    output,
  };
}

/** A key not yet in `map`: the name, else name_1, name_2... (config.rs:121-130). */
function freeKey(map: Record<string, unknown>, name: string): string {
  let key = name;
  for (let n = 1; Object.hasOwn(map, key); n++) key = `${name}_${n}`;
  return key;
}

/**
 * The TOML writer is loaded on the first template asked for in TOML: a relay nobody asks never holds its code
 * (bench/README.md, "Memory").
 */
function toToml(): typeof import('smol-toml').stringify {
  return (createRequire(import.meta.url)('smol-toml') as typeof import('smol-toml')).stringify;
}

/**
 * generate_config_template (config.rs:104-207): autopulse's default settings (App, Auth, Opts defaults and its
 * default `manual` trigger, settings/mod.rs:99-113 and 207-219) with the database's URL and the asked triggers and
 * targets added.
 */
export function configTemplate(q: TemplateQuery): { config: string; version: string } {
  const triggers: Record<string, Record<string, unknown>> = { manual: { type: 'manual' } };
  for (const t of q.triggers) triggers[freeKey(triggers, t)] = t === 'notify' ? { type: t, paths: ['/media'] } : { type: t };
  const targets: Record<string, Record<string, unknown>> = {};
  for (const t of q.targets) targets[freeKey(targets, t)] = { type: t, ...TARGET_TEMPLATES[t] };
  const settings = {
    app: { hostname: '0.0.0.0', port: 2875, database_url: DATABASE_URLS[q.database], log_level: 'info', api_logging: false, base_path: '', secure_cookies: false, trusted_proxies: [] },
    auth: { username: 'admin', password: 'password' },
    opts: { check_path: false, max_retries: 5, default_timer_wait: 60, cleanup_days: 10, log_file_rollover: 'never', log_file_max_files: 30, webhook_retries: 3, webhook_timeout: 10, webhook_interval: 10 },
    triggers,
    targets,
    webhooks: {},
    anchors: [],
  };
  return { config: q.output === 'json' ? JSON.stringify(settings, null, 2) : toToml()(settings), version: packageVersion() };
}

/** The route, behind autopulse's credentials (config.rs:49: AuthenticatedUser). */
export function configTemplateRoute(app: FastifyInstance, guard: Hook): void {
  app.get<{ Querystring: Record<string, string | string[]> }>('/api/config-template', { onRequest: guard }, async (req: FastifyRequest<{ Querystring: Record<string, string | string[]> }>, reply: FastifyReply) => {
    try {
      return reply.send(configTemplate(templateQueryOf(req.query)));
    } catch (err) {
      if (!(err instanceof TemplateQueryError)) throw err;
      return reply.code(400).type('text/plain; charset=utf-8').send(err.message);
    }
  });
}
