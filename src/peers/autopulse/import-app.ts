import { duration } from '../../config/durations.ts';
import type { JsonObject } from '../../config/load.ts';
import { isDefaultCredentials } from './default-auth.ts';
import type { ImportNotes } from './import-common.ts';
import type { AutopulseSettings } from './settings.ts';

/** SERVER_WAIT_FOR_FILES as written for check_path: autopulse looks every second (manager.rs:288); here from 1 s, backing off to 60 s. */
const FILE_WAIT_FIRST = 1;
const FILE_WAIT_MAX = 60;

/** What the later sections need from app and opts. */
export interface AppImport {
  /** autopulse's database URL (app.database_url, or its default), for the pending scans. */
  databaseUrl: string;
  /** opts.default_timer_wait: a trigger without its own timer waits this long. */
  defaultWait: number;
  /** opts.webhook_interval: the notifications' batch. */
  batchSeconds: number;
}

/** app, auth, opts and anchors: the server, its Basic auth, the queue's timing and the anchor files. */
export function importApp(settings: AutopulseSettings, config: JsonObject, out: ImportNotes): AppImport {
  const { carried, notes, warnings } = out;
  const { app, auth, opts, anchors } = settings;

  // --- app
  config.SERVER_IP = app.hostname;
  config.SERVER_PORT = app.port;
  carried.push(`app.hostname, app.port -> SERVER_IP ${app.hostname}, SERVER_PORT ${String(app.port)}`);
  const databaseUrl = app.database_url;
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    config.SERVER_QUEUE_URL = databaseUrl;
    carried.push('app.database_url (PostgreSQL) -> SERVER_QUEUE_URL: the queue lives in the same database, in its own tables');
  } else {
    notes.push(`app.database_url: ${databaseUrl} is autopulse's SQLite file; scanrelay keeps its own queue (queue.db beside the config). Give this file with --database to take its pending scans over`);
  }
  if (app.log_level !== undefined) notes.push(`app.log_level: not carried; start scanrelay with --loglevel ${String(app.log_level).toUpperCase()}`);
  if (app.api_logging) notes.push('app.api_logging: not carried; --loglevel DEBUG logs each request');
  // server/src/lib.rs:42-59: base_path mounts only the web UI; /triggers/, /list, /status/, /stats stay at the root.
  if (app.base_path) notes.push(`app.base_path: ${JSON.stringify(app.base_path)} moved only autopulse's web UI; its API (/triggers/, /list, /status/, /stats) was at the root, as scanrelay's is, so senders change only host and port. scanrelay's dashboard is at /<SERVER_PASS>, not under ${JSON.stringify(app.base_path)}`);
  if (app.secure_cookies !== undefined) notes.push("app.secure_cookies: not carried (scanrelay's dashboard has no session cookie)");
  if (Array.isArray(app.trusted_proxies) && app.trusted_proxies.length) {
    config.SERVER_TRUST_PROXY = app.trusted_proxies as string[];
    carried.push('app.trusted_proxies -> SERVER_TRUST_PROXY');
  }

  // --- auth
  if (auth.enabled === false) {
    config.SERVER_AUTH_USER = '';
    config.SERVER_AUTH_PASS = '';
    notes.push(
      "auth.enabled: false: autopulse served its routes to anyone; scanrelay serves /triggers/ only with SERVER_AUTH_USER and SERVER_AUTH_PASS set (they carry no secret). Set both, and the same in Sonarr's/Radarr's webhook, or your routes answer 404",
    );
  } else {
    config.SERVER_AUTH_USER = auth.username;
    config.SERVER_AUTH_PASS = auth.password;
    carried.push('auth.username, auth.password -> SERVER_AUTH_USER, SERVER_AUTH_PASS (Basic auth on /triggers/)');
    if (isDefaultCredentials(auth.username, auth.password)) {
      warnings.push(
        "!!! auth: autopulse's DEFAULT username and password (admin / password) were carried over, so your webhooks on this machine and your home network keep working; the relay refuses them (401) from any other address and warns at every start. Run import-autopulse again with --new-password (and --force) to write a strong password and print what to change in each *arr, or set SERVER_AUTH_USER and SERVER_AUTH_PASS yourself, then the same in every webhook !!!",
      );
    }
  }

  // --- opts
  const defaultWait = opts.default_timer_wait;
  config.SERVER_SCAN_DELAY = defaultWait;
  carried.push(`opts.default_timer_wait -> SERVER_SCAN_DELAY ${defaultWait} s`);
  const checkPath = opts.check_path === true;
  config.SERVER_FILE_CHECKS_ENABLED = checkPath;
  if (checkPath) {
    // runner.rs:37-48, 159-167: with check_path no target gets a row before its file was found. Here every target
    // waits alike (SERVER_WAIT_FOR_FILES); autopulse never gives up but deletes rows still not found after
    // cleanup_days (runner.rs:332-347), so that is the bound, told when it is reached.
    const days = opts.cleanup_days ?? 10;
    const giveUp = Math.max(60, Math.round(days * 86_400));
    config.SERVER_WAIT_FOR_FILES = { ENABLED: true, FIRST_CHECK_DELAY: FILE_WAIT_FIRST, MAX_CHECK_DELAY: FILE_WAIT_MAX, GIVE_UP_AFTER: giveUp };
    carried.push('opts.check_path -> SERVER_FILE_CHECKS_ENABLED (the hash and found_status checks)');
    carried.push(
      `opts.check_path -> SERVER_WAIT_FOR_FILES: no target (Plex, Jellyfin, Emby, commands, Tdarr, the forward target ...) gets a scan before its files are on this machine's disk; looked for again after ${FILE_WAIT_FIRST} s, then backing off (2, 4, 8 ... s) to once every ${FILE_WAIT_MAX} s; a scan none of whose files appeared within ${duration(giveUp * 1000)} (GIVE_UP_AFTER ${giveUp}, from opts.cleanup_days ${days}) fails, told as a failed scan`,
    );
    notes.push(
      `opts.check_path: autopulse looks every second and never gives up (it deletes rows still not found after cleanup_days, runner.rs:332-347, manager.rs:288); here the looks back off to once every ${FILE_WAIT_MAX} s, and a scan whose files never appear fails after SERVER_WAIT_FOR_FILES.GIVE_UP_AFTER (${duration(giveUp * 1000)}): raise it if uploads to a cloud mount take longer`,
      "opts.check_path: files are looked for on this machine where SERVER_FILE_EXIST_PATH_MAPPINGS says it sees the servers' paths, and only inside a library folder a target knows (Plex's sections, Jellyfin's and Emby's folders) or a mapping's key; with command, Tdarr or forward targets alone, add your media folders to SERVER_FILE_EXIST_PATH_MAPPINGS (a folder mapped to itself will do), or their scans wait and fail",
    );
  } else notes.push("opts.check_path is off (autopulse's default): SERVER_FILE_CHECKS_ENABLED is false, so scans are not held until the file exists (scanrelay's own default is true; turn it on if your paths are visible to the relay)");
  if (opts.max_retries !== undefined) notes.push(`opts.max_retries (${String(opts.max_retries)}): not carried; scanrelay retries a target that cannot scan yet with its own backoff (docs/scanning.md)`);
  if (opts.cleanup_days !== undefined) {
    // runner.rs:332-347: rows not found (or failed) are deleted after cleanup_days; here it bounds a request held for
    // its hash. Finished scans are history, pruned by count.
    config.SERVER_AUTOPULSE_CLEANUP_DAYS = opts.cleanup_days ?? 10;
    carried.push(`opts.cleanup_days -> SERVER_AUTOPULSE_CLEANUP_DAYS ${String(config.SERVER_AUTOPULSE_CLEANUP_DAYS)} (a request held for its hash waits that long at most)`);
    notes.push('opts.cleanup_days: finished and failed scans are not deleted by age; scanrelay keeps the last 10,000 as history');
  }
  for (const k of ['log_file', 'log_file_rollover', 'log_file_max_files'] as const) {
    if (opts[k] !== undefined) notes.push(`opts.${k}: not carried; use --logfile (rotation: your log rotator)`);
  }
  for (const k of ['webhook_retries', 'webhook_timeout'] as const) {
    if (opts[k] !== undefined) notes.push(`opts.${k}: not carried; notifications are retried until NOTIFICATIONS.<name>.GIVE_UP_AFTER`);
  }

  // --- anchors
  if (anchors?.length) {
    config.SERVER_ANCHOR_FILES = anchors;
    carried.push('anchors -> SERVER_ANCHOR_FILES');
  }
  return { databaseUrl, defaultWait, batchSeconds: opts.webhook_interval };
}
