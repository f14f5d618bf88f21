import type { JsonObject } from '../../config/load.ts';
import { filterOf, rewriteOf, type ImportNotes } from './import-common.ts';
import { safeName } from './names.ts';
import type { AutopulseTarget } from './settings.ts';

/** Each target as a named entry of TARGETS; returns autopulse's names with the relay's (the triggers' excludes). */
export function importTargets(targets: Record<string, AutopulseTarget>, config: JsonObject, out: ImportNotes): Map<string, string> {
  const { carried, notes } = out;
  const TARGETS: JsonObject = {};
  const targetNames = new Map<string, string>();
  for (const [name, t] of Object.entries(targets)) {
    const where = `targets.${name}`;
    const tname = safeName(name);
    if (tname !== name) notes.push(`${where}: named ${JSON.stringify(tname)} in TARGETS (a target name is letters, digits, ".", "_" and "-")`);
    targetNames.set(name, tname);
    TARGETS[tname] = { TYPE: t.type === 'autopulse' ? 'relay' : t.type, ...rewriteOf(t.rewrite), ...filterOf(t.filter), ...kindKeys(t, where, out) };
  }
  if (Object.keys(TARGETS).length) {
    config.TARGETS = TARGETS;
    carried.push(`targets -> TARGETS: ${Object.entries(TARGETS).map(([n, e]) => `${n} (${String((e as JsonObject).TYPE)})`).join(', ')}`);
  } else {
    notes.push('targets: none; add TARGETS entries (docs/targets.md) or nothing is scanned');
  }
  return targetNames;
}

/** The keys of one kind's entry. */
function kindKeys(t: AutopulseTarget, where: string, { carried, notes }: ImportNotes): JsonObject {
  const request = 'request' in t ? { REQUEST: { TIMEOUT: t.request.timeout, VERIFY_SSL: t.request.insecure !== true, HEADERS: (t.request.headers as JsonObject | undefined) ?? {} } } : {};
  switch (t.type) {
    case 'plex':
      // autopulse scans the file's folder and neither analyzes nor refreshes unless asked (plex.rs:20-24).
      if (t.analyze !== true) notes.push(`${where}: analyze is off, as autopulse's default (ANALYZE_TYPE "off"; scanrelay's own default is "basic")`);
      return { ...request, URL: t.url, TOKEN: t.token, SCAN_METHOD: 'api', ANALYZE_TYPE: t.analyze === true ? 'basic' : 'off', REFRESH_METADATA: t.refresh === true, EMPTY_TRASH: false };
    case 'jellyfin':
    case 'emby': {
      for (const k of ['metadata_refresh_mode', 'refresh_metadata'] as const) {
        if (t[k] !== undefined) notes.push(`${where}.${k}: not carried; scanrelay asks ${t.type} to scan the folder and leaves the refresh mode to the library's settings`);
      }
      // emby.rs:44-58, 167-170: how library locations are compared with paths, not how items are refreshed.
      if (t.path_match === undefined) return { ...request, URL: t.url, API_KEY: t.token };
      carried.push(`${where}.path_match -> PATH_MATCH "${t.path_match}" (library folders are compared with paths ${t.path_match === 'case_insensitive' ? 'ignoring ASCII case' : 'as written'})`);
      return { ...request, URL: t.url, API_KEY: t.token, PATH_MATCH: t.path_match };
    }
    case 'sonarr':
    case 'radarr':
      return { ...request, URL: t.url, API_KEY: t.token };
    case 'tdarr':
      return { ...request, URL: t.url, DB_ID: t.db_id };
    case 'fileflows':
      return { ...request, URL: t.url };
    case 'audiobookshelf':
      return { ...request, URL: t.url, TOKEN: t.token };
    case 'autopulse':
      return {
        ...request,
        URL: t.url,
        PEER: 'autopulse',
        TRIGGER: t.trigger,
        ...(t.auth.enabled !== false ? { USERNAME: t.auth.username, PASSWORD: t.auth.password } : {}),
      };
    case 'command': {
      // command.rs:44-49, 63-68: autopulse runs it once per file, the file as the argument (path) or FILE_PATH (raw).
      notes.push(
        t.raw !== undefined
          ? `${where}.raw: runs once per file with FILE_PATH set to it, as in autopulse; a scan that named no file, or more than 1000, gives its folder instead`
          : `${where}.path: gets the scan's files (not its folder) as arguments, all in one run, where autopulse runs it once per file; a script that reads only its first argument should loop over "$@". A scan that named no file, or more than 1000, gives its folder instead`,
      );
      // autopulse runs `sh -c raw` with FILE_PATH set (command.rs:65-68); the relay appends the paths as
      // arguments, so a small loop sets FILE_PATH to each in turn.
      const COMMAND = t.path !== undefined ? [t.path] : ['sh', '-c', `for FILE_PATH do export FILE_PATH\n${t.raw!}\ndone`, 'sh'];
      return { COMMAND, TIMEOUT: t.timeout };
    }
  }
}
