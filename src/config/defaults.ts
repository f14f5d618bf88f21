import { configSchema, PLEX_AUTOSCAN_KEYS } from './schema.ts';
import { newServerPass, type JsonObject } from './load.ts';

/**
 * Keys scanrelay added to the GOOGLE section. plex_autoscan's base_config has none of them, so
 * update_config and the starter file leave them out (the endpoint URLs exist for tests' fakes).
 */
export const SCANRELAY_DRIVE_KEYS = ['SERVICE_ACCOUNT_FILE', 'RCLONE_REMOTE', 'SCAN_REMOVED', 'OAUTH_AUTH_URL', 'OAUTH_TOKEN_URL', 'DRIVE_API_URL'] as const;

/** plex_autoscan's base_config, derived from the schema's defaults so it is written once. */
export function plexAutoscanDefaults(): JsonObject {
  const all = configSchema.parse({}) as JsonObject;
  const out: JsonObject = {};
  for (const key of PLEX_AUTOSCAN_KEYS) out[key] = key === 'SERVER_PASS' ? newServerPass() : all[key];
  // The schema reads the priorities into a list of entries; the file holds them as an object.
  out.SERVER_SCAN_PRIORITIES = {};
  const google = { ...(out.GOOGLE as JsonObject) };
  for (const key of SCANRELAY_DRIVE_KEYS) delete google[key];
  out.GOOGLE = google;
  return out;
}

/**
 * The file written on first start. plex_autoscan exits here; scanrelay keeps running, so the file
 * holds what a newcomer needs to use it at once: the manual page on, the documented port, a short delay.
 */
export function starterConfig(): JsonObject {
  const base = plexAutoscanDefaults();
  const google = base.GOOGLE as JsonObject;
  return {
    ...base,
    SERVER_IP: '0.0.0.0',
    SERVER_PORT: 3468,
    SERVER_PASS: newServerPass(),
    SERVER_ALLOW_MANUAL_SCAN: true,
    SERVER_USE_SQLITE: true,
    // A fresh relay usually cannot see the media files; waiting for them would fail every scan.
    SERVER_FILE_CHECKS_ENABLED: false,
    SERVER_SCAN_DELAY: 10,
    SERVER_PATH_MAPPINGS: {
      '/data/Movies/': ['/movies/', '/mnt/unionfs/Media/Movies/', 'My Drive/Media/Movies/'],
      '/data/TV/': ['/tv/', '/mnt/unionfs/Media/TV/', 'My Drive/Media/TV/'],
    },
    SERVER_IGNORE_LIST: ['/.grab/', '.DS_Store', 'Thumbs.db'],
    // plex_autoscan's example; lower numbers go first, so movies, then TV, then music (unmatched paths are 0).
    SERVER_SCAN_PRIORITIES: { '0': ['/Movies/'], '1': ['/TV/'], '2': ['/Music/'] },
    PLEX_EMPTY_TRASH_CONTROL_FILES: ['/mnt/unionfs/mounted.bin'],
    PLEX_SCAN_METHOD: 'auto',
    GOOGLE: {
      ...google,
      ALLOWED: {
        FILE_PATHS: ['My Drive/Media/Movies/', 'My Drive/Media/TV/'],
        FILE_EXTENSIONS: true,
        FILE_EXTENSIONS_LIST: ['webm', 'mkv', 'flv', 'vob', 'ogv', 'ogg', 'avi', 'mov', 'wmv', 'mp4', 'm4v', 'mpg', 'mpeg', 'm2v', 'mp3', 'flac', 'ts'],
        MIME_TYPES: true,
        MIME_TYPES_LIST: ['video'],
      },
    },
  };
}

/**
 * plex_autoscan's update_config: add every missing key with its default, recursively, and keep
 * everything else (unknown keys too). The drive section is added as GOOGLE only when neither
 * GOOGLE nor CLOUD is present.
 */
export function addMissingKeys(raw: JsonObject): { merged: JsonObject; added: string[] } {
  const added: string[] = [];
  const defaults = plexAutoscanDefaults();
  if ('CLOUD' in raw) delete defaults.GOOGLE;
  const merged = mergeMissing(raw, defaults, '', added);
  return { merged, added };
}

function mergeMissing(current: JsonObject, defaults: JsonObject, prefix: string, added: string[]): JsonObject {
  const out: JsonObject = { ...current };
  for (const [key, def] of Object.entries(defaults)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (!(key in current)) {
      out[key] = def;
      added.push(name);
    } else if (isObject(def) && isObject(current[key])) {
      out[key] = mergeMissing(current[key] as JsonObject, def, name, added);
    }
  }
  return out;
}

function isObject(v: unknown): v is JsonObject {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}
