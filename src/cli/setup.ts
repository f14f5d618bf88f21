import type { Command } from 'commander';
import { starterConfig } from '../config/defaults.ts';
import { UserError } from '../core/errors.ts';
import { configExists, loadConfigFile, parseConfig, parseJsonText, type JsonObject } from '../config/load.ts';
import { writeSetupConfig } from '../setup/config-edit.ts';
import type { Config } from '../config/schema.ts';
import { readFileSync } from 'node:fs';
import { ArrClient, type ArrKind } from '../setup/arr.ts';
import { runSetup } from '../setup/flow.ts';
import { baseUrl } from '../setup/http.ts';
import type { ArrEntry, SetupIO } from '../setup/run.ts';
import { configuredServers, mediaBrowserServer, plexServer, type MediaServer } from '../setup/servers.ts';
import { action, settingsOf } from './context.ts';
import { askSetup, terminalSetupIO, type SetupFlags } from './setup-prompts.ts';

export type { SetupFlags };


const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** The *arrs from the flags, URL and key paired in order; trigger names sonarr, sonarr-2, ... */
export function arrsFromFlags(f: SetupFlags): ArrEntry[] {
  const out: ArrEntry[] = [];
  for (const kind of ['sonarr', 'radarr', 'lidarr', 'readarr'] as const) {
    const urls = f[kind];
    const keys = f[`${kind}Key`];
    if (urls.length !== keys.length) throw new UserError(`--${kind} was given ${urls.length} time(s) and --${kind}-key ${keys.length}: give one key per URL, in the same order`);
    urls.forEach((url, i) => out.push({ client: new ArrClient(kind as ArrKind, url, keys[i]!), trigger: i === 0 ? kind : `${kind}-${i + 1}` }));
  }
  return out;
}

/** The media servers: the flags, else the ones the config already has. */
export function serversFrom(f: SetupFlags, config: Config): MediaServer[] {
  const out: MediaServer[] = [];
  const plex = f.plex !== undefined || f.plexToken !== undefined;
  const jellyfin = f.jellyfin !== undefined || f.jellyfinKey !== undefined;
  if (plex) {
    if (!f.plex || !f.plexToken) throw new UserError('give both --plex URL and --plex-token TOKEN');
    out.push(plexServer(f.plex, f.plexToken));
  }
  if (jellyfin) {
    if (!f.jellyfin || !f.jellyfinKey) throw new UserError('give both --jellyfin URL and --jellyfin-key KEY');
    out.push(mediaBrowserServer('jellyfin', f.jellyfin, f.jellyfinKey));
  }
  return [...out, ...configuredServers(config, { plex, jellyfin })];
}

/** The config file's JSON and its validated form; a starter config when there is none yet. */
function readConfig(path: string): { raw: JsonObject; config: Config; exists: boolean } {
  if (!configExists(path)) {
    const raw = starterConfig();
    return { raw, config: parseConfig(raw).config, exists: false };
  }
  const loaded = loadConfigFile(path);
  return { raw: parseJsonText(readFileSync(path, 'utf8'), path), config: loaded.config, exists: true };
}

export function registerSetup(program: Command): void {
  program
    .command('setup')
    .description('pair the *arrs\' root folders with the media server\'s libraries, write the rewrites, and register one Webhook connection in each *arr (interactive; --yes for scripts)')
    .option('-y, --yes', 'ask nothing: use the flags (an ambiguous root is reported and skipped)')
    .option('--plex <url>', 'Plex URL, e.g. http://plex:32400')
    .option('--plex-token <token>', 'Plex token')
    .option('--jellyfin <url>', 'Jellyfin URL, e.g. http://jellyfin:8096')
    .option('--jellyfin-key <key>', 'Jellyfin API key')
    .option('--sonarr <url>', 'Sonarr URL (repeatable, paired in order with --sonarr-key)', collect)
    .option('--sonarr-key <key>', 'Sonarr API key', collect)
    .option('--radarr <url>', 'Radarr URL (repeatable)', collect)
    .option('--radarr-key <key>', 'Radarr API key', collect)
    .option('--lidarr <url>', 'Lidarr URL (repeatable; API v1)', collect)
    .option('--lidarr-key <key>', 'Lidarr API key', collect)
    .option('--readarr <url>', 'Readarr URL (repeatable; API v1)', collect)
    .option('--readarr-key <key>', 'Readarr API key', collect)
    .option('--relay-url <url>', 'how the *arrs reach the relay, e.g. http://scanrelay:3468 in Compose')
    .option('--disable-arr-library-update', "turn off \"Update Library\" on the *arrs' own Plex/Emby/Jellyfin connections (else each import is scanned twice)")
    .option('--dry-run', 'print the plan; write nothing and change no *arr (only GET requests)')
    .action(
      action(async (given: Partial<SetupFlags>, cmd: Command) => {
        // A repeatable flag never given is absent (no default, so --help shows none).
        const list = (l: string[] | undefined) => l ?? [];
        const flags: SetupFlags = {
          ...given,
          sonarr: list(given.sonarr), sonarrKey: list(given.sonarrKey), radarr: list(given.radarr), radarrKey: list(given.radarrKey),
          lidarr: list(given.lidarr), lidarrKey: list(given.lidarrKey), readarr: list(given.readarr), readarrKey: list(given.readarrKey),
        };
        const settings = settingsOf(cmd);
        const { raw, config } = readConfig(settings.config);
        let f = flags;
        let io: SetupIO;
        if (flags.yes) {
          io = { say: (line) => process.stdout.write(`${line}\n`) };
          if (!f.relayUrl) throw new UserError('--yes needs --relay-url: how the *arrs reach the relay (e.g. http://scanrelay:3468)');
        } else {
          if (!process.stdin.isTTY) throw new UserError('"scanrelay setup" asks questions and needs a terminal; for scripts add --yes and the flags (scanrelay setup --help)');
          io = terminalSetupIO;
          try {
            f = await askSetup(flags, config);
          } catch (err) {
            cancelled(err);
          }
        }
        const servers = serversFrom(f, config);
        const arrs = arrsFromFlags(f);
        const relayUrl = baseUrl(f.relayUrl!, 'the relay (--relay-url)');
        try {
          await runSetup({
            configPath: settings.config,
            raw,
            config,
            servers,
            arrs,
            relayUrl,
            ...(f.plex && f.plexToken ? { plex: { url: f.plex, token: f.plexToken } } : {}),
            ...(f.jellyfin && f.jellyfinKey ? { jellyfin: { url: f.jellyfin, key: f.jellyfinKey } } : {}),
            disableLibraryUpdate: Boolean(f.disableArrLibraryUpdate),
            dryRun: Boolean(f.dryRun),
            io,
            write: (next) => writeSetupConfig(settings.config, next),
            ...(flags.yes ? {} : { confirmApply: () => io.confirm!('Apply these changes (write the config, register the connections)?', true) }),
          });
        } catch (err) {
          cancelled(err);
        }
      }),
    );
}

/** Ctrl-C at a question: a line, exit 130, as `scanrelay remote` does. */
function cancelled(err: unknown): never {
  if ((err as Error).name === 'ExitPromptError') {
    process.stdout.write('\ncancelled\n');
    process.exit(130);
  }
  throw err;
}
