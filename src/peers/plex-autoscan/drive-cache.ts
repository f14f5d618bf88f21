import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { openReadOnly } from '../../db/read-only.ts';
import { UserError } from '../../core/errors.ts';
import type { OAuthToken } from '../../google/oauth.ts';
import { FOLDER_MIME, type CachedItem } from '../../triggers/drive/cache.ts';

/**
 * plex_autoscan's drive state, read from its cache file (default `cache.db`): sqlitedict tables
 * (google/cache.py), each `key TEXT PRIMARY KEY, value BLOB` holding JSON text. `settings` holds the
 * OAuth token (key `token`, a requests-oauthlib token); `drive_root` and `teamdrive_<id>` hold the
 * drive's `page_token` and, per item id, `{name, parents, md5Checksum, paths}` (google/drive.py).
 *
 * scanrelay's own cache uses other table names (items, item_parents, drives), so both can live in the
 * same file: a plex_autoscan cache is recognised by its sqlitedict tables, never by the file name.
 */
export interface PlexAutoscanDrive {
  /** scanrelay's drive key: "root" for drive_root, the shared drive's id for teamdrive_<id>. */
  key: string;
  table: string;
  pageToken: string | undefined;
  items: CachedItem[];
}

export interface PlexAutoscanState {
  file: string;
  token: OAuthToken | undefined;
  drives: PlexAutoscanDrive[];
}

const DRIVE_TABLE = /^(drive_root|teamdrive_(.+))$/;

/** The sqlitedict tables plex_autoscan's cache has in this database (none: not a plex_autoscan cache). */
export function plexAutoscanTables(db: Database.Database): string[] {
  const tables = db.prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table'`).all().map((r) => r.name);
  return tables.filter((name) => {
    if (name !== 'settings' && !DRIVE_TABLE.test(name)) return false;
    const cols = db.prepare<[string], { name: string }>(`SELECT name FROM pragma_table_info(?)`).all(name).map((c) => c.name);
    return cols.length === 2 && cols.includes('key') && cols.includes('value');
  });
}

/**
 * Reads plex_autoscan's drive state; undefined when the file does not exist or holds no plex_autoscan
 * tables. The file is opened read-only and never changed.
 */
export function readPlexAutoscanCache(file: string): PlexAutoscanState | undefined {
  if (!existsSync(file)) return undefined;
  const db = openReadOnly(file, "plex_autoscan's cache");
  try {
    const tables = plexAutoscanTables(db);
    if (!tables.length) return undefined;
    const read = (table: string) => {
      const out = new Map<string, unknown>();
      for (const row of db.prepare<[], { key: string; value: unknown }>(`SELECT key, value FROM "${table.replaceAll('"', '""')}"`).all()) {
        const value = jsonOf(row.value);
        if (value !== undefined) out.set(row.key, value);
      }
      return out;
    };
    const settings = tables.includes('settings') ? read('settings') : new Map<string, unknown>();
    const drives: PlexAutoscanDrive[] = [];
    for (const table of tables) {
      const m = DRIVE_TABLE.exec(table);
      if (!m) continue;
      const values = read(table);
      const pt = values.get('page_token');
      values.delete('page_token');
      drives.push({
        key: m[2] ?? 'root',
        table,
        pageToken: typeof pt === 'string' || typeof pt === 'number' ? String(pt) : undefined,
        items: itemsOf(values),
      });
    }
    // My Drive first, then shared drives by table name: a stable order for logs and tests.
    drives.sort((a, b) => (a.key === 'root' ? -1 : b.key === 'root' ? 1 : a.table.localeCompare(b.table)));
    return { file, token: tokenOf(settings.get('token')), drives };
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`cannot read plex_autoscan's cache ${file}: ${(err as Error).message}`);
  } finally {
    db.close();
  }
}

function jsonOf(value: unknown): unknown {
  const text = typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : undefined;
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Cached items; an item that another one names as its parent is a folder (plex_autoscan kept no MIME type). */
export function itemsOf(values: ReadonlyMap<string, unknown>): CachedItem[] {
  const items: CachedItem[] = [];
  for (const [id, v] of values) {
    if (!v || typeof v !== 'object' || Array.isArray(v)) continue;
    const o = v as Record<string, unknown>;
    if (typeof o.name !== 'string') continue;
    items.push({
      id,
      name: o.name,
      parents: strings(o.parents),
      md5: typeof o.md5Checksum === 'string' ? o.md5Checksum : null,
      mimeType: null,
      paths: strings(o.paths),
    });
  }
  const parents = new Set(items.flatMap((i) => i.parents));
  for (const item of items) if (parents.has(item.id)) item.mimeType = FOLDER_MIME;
  return items;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** requests-oauthlib's token (expires_at in epoch seconds, scope as a list) as scanrelay's token file holds it. */
export function tokenOf(v: unknown): OAuthToken | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const t = v as Record<string, unknown>;
  if (typeof t.access_token !== 'string' || !t.access_token) return undefined;
  const token: OAuthToken = { access_token: t.access_token, token_type: typeof t.token_type === 'string' ? t.token_type : 'Bearer' };
  if (typeof t.refresh_token === 'string') token.refresh_token = t.refresh_token;
  if (typeof t.expires_at === 'number') token.expiry = new Date(t.expires_at * 1000).toISOString();
  if (Array.isArray(t.scope)) token.scope = t.scope.join(' ');
  else if (typeof t.scope === 'string') token.scope = t.scope;
  return token;
}
