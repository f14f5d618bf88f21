import type { JsonObject } from '../config/load.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { isRuleFor } from '../paths/pairing.ts';
import type { RewriteRule } from '../paths/rewrite.ts';

/** What setup changes in the config file; every other key stays as it was. */
export interface ConfigChanges {
  /** Per trigger name: its manager's root folders (their old rules go) and the rules written now. */
  triggers: Array<{ name: string; roots: string[]; rules: RewriteRule[] }>;
  /** Set when the file has no SERVER_AUTH_USER/SERVER_AUTH_PASS yet (the /triggers/ routes need both). */
  auth?: { user: string; pass: string };
  plex?: { url: string; token: string };
  jellyfin?: { url: string; key: string };
}

/** The triggers a file without SERVER_AUTOSCAN_TRIGGERS has (schema.ts's default), so writing one keeps the others. */
const DEFAULT_TRIGGERS = ['sonarr', 'radarr', 'lidarr', 'readarr'];

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** The edited copy of the file's JSON, and the top-level keys whose value changed. */
export function editConfig(raw: JsonObject, changes: ConfigChanges): { raw: JsonObject; changed: string[] } {
  const out: JsonObject = structuredClone(raw);
  const before = JSON.stringify(raw);
  const triggers: JsonObject = isObject(out.SERVER_AUTOSCAN_TRIGGERS)
    ? out.SERVER_AUTOSCAN_TRIGGERS
    : Object.fromEntries(DEFAULT_TRIGGERS.map((n) => [n, { PRIORITY: 0, REWRITE: [] }]));
  for (const t of changes.triggers) {
    const old = triggers[t.name];
    // A number is the trigger's PRIORITY alone (schema.ts autoscanTriggerSchema).
    const entry: JsonObject = typeof old === 'number' ? { PRIORITY: old } : isObject(old) ? { ...old } : { PRIORITY: 0 };
    const kept = (Array.isArray(entry.REWRITE) ? (entry.REWRITE as unknown as RewriteRule[]) : []).filter((r) => !t.roots.some((root) => isRuleFor(r, root)));
    entry.REWRITE = [...t.rules, ...kept];
    triggers[t.name] = entry;
  }
  out.SERVER_AUTOSCAN_TRIGGERS = triggers;
  if (changes.auth) {
    out.SERVER_AUTH_USER = changes.auth.user;
    out.SERVER_AUTH_PASS = changes.auth.pass;
  }
  if (changes.plex) {
    out.PLEX_LOCAL_URL = changes.plex.url;
    out.PLEX_TOKEN = changes.plex.token;
    if (out.PLEX_ENABLED === false) out.PLEX_ENABLED = true; // absent is already on
  }
  if (changes.jellyfin) {
    const j = isObject(out.JELLYFIN) ? { ...out.JELLYFIN } : {};
    out.JELLYFIN = { ...j, ENABLED: true, URL: changes.jellyfin.url, API_KEY: changes.jellyfin.key };
  }
  const changed = Object.keys(out).filter((k) => JSON.stringify(out[k]) !== JSON.stringify(raw[k]));
  return { raw: JSON.stringify(out) === before ? raw : out, changed };
}

/**
 * Writes the edited file atomically with mode 0600 (it holds keys). The keys stay in the file's own order (not
 * sorted): SERVER_SCAN_PRIORITIES is read in the text's order, and the user's diff stays small.
 */
export function writeSetupConfig(path: string, raw: JsonObject): void {
  writeFileAtomic(path, `${JSON.stringify(raw, null, 2)}\n`, { mode: 0o600 });
}
