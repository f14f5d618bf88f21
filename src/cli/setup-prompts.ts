import { confirm, input, password, select } from '@inquirer/prompts';
import type { Config } from '../config/schema.ts';
import type { SetupIO } from '../setup/run.ts';
import { configuredServers } from '../setup/servers.ts';

/** `scanrelay setup`'s flags (commander's names). */
export interface SetupFlags {
  yes?: boolean;
  plex?: string;
  plexToken?: string;
  jellyfin?: string;
  jellyfinKey?: string;
  sonarr: string[];
  sonarrKey: string[];
  radarr: string[];
  radarrKey: string[];
  lidarr: string[];
  lidarrKey: string[];
  readarr: string[];
  readarrKey: string[];
  relayUrl?: string;
  disableArrLibraryUpdate?: boolean;
  dryRun?: boolean;
}

/** Questions in the terminal with @inquirer/prompts, as `scanrelay remote` asks them. */
export const terminalSetupIO: SetupIO = {
  say(line) {
    process.stdout.write(`${line}\n`);
  },
  async choose(question, choices) {
    return select({ message: question, choices: choices.map((name, value) => ({ name, value })) });
  },
  async confirm(question, defaultYes) {
    return confirm({ message: question, default: defaultYes });
  },
};

const isUrl = (v: string) => {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:' ? true : 'an http:// or https:// URL';
  } catch {
    return 'a URL such as http://host:port';
  }
};
const optionalUrl = (v: string) => (v.trim() === '' ? true : isUrl(v.trim()));

/** Asks for what the flags left out: the relay's URL, the media server, the *arrs. */
export async function askSetup(flags: SetupFlags, config: Config): Promise<SetupFlags> {
  const copy = (list: string[]) => [...list];
  const f: SetupFlags = { ...flags, sonarr: copy(flags.sonarr), sonarrKey: copy(flags.sonarrKey), radarr: copy(flags.radarr), radarrKey: copy(flags.radarrKey), lidarr: copy(flags.lidarr), lidarrKey: copy(flags.lidarrKey), readarr: copy(flags.readarr), readarrKey: copy(flags.readarrKey) };
  if (!f.relayUrl) {
    f.relayUrl = (await input({ message: 'How do the *arrs reach the relay (URL)?', default: `http://scanrelay:${config.SERVER_PORT || 3468}`, validate: isUrl })).trim();
  }
  // A Plex with a token or a Jellyfin with a URL the config has already (the targets plex and jellyfin).
  const known = configuredServers(config).filter((s) => s.name !== 'emby');
  if (!f.plex && !f.jellyfin && known.length === 0) {
    const entry = config.targets.get('plex');
    const plexUrl = entry?.TYPE === 'plex' ? entry.URL : undefined;
    const plex = (await input({ message: 'Plex URL (blank: no Plex)?', ...(plexUrl ? { default: plexUrl } : {}), validate: optionalUrl })).trim();
    if (plex) {
      f.plex = plex;
      f.plexToken = (await password({ message: 'Plex token?', mask: '*', validate: (v) => (v.trim() ? true : 'the token is needed to read the libraries') })).trim();
    } else {
      const jellyfin = (await input({ message: 'Jellyfin URL (blank: none)?', validate: optionalUrl })).trim();
      if (jellyfin) {
        f.jellyfin = jellyfin;
        f.jellyfinKey = (await password({ message: 'Jellyfin API key?', mask: '*' })).trim();
      }
    }
  }
  const none = f.sonarr.length + f.radarr.length + f.lidarr.length + f.readarr.length === 0;
  if (none) {
    for (const [kind, label] of [['sonarr', 'Sonarr'], ['radarr', 'Radarr'], ['lidarr', 'Lidarr'], ['readarr', 'Readarr']] as const) {
      const url = (await input({ message: `${label} URL (blank: none)?`, validate: optionalUrl })).trim();
      if (!url) continue;
      const key = (await password({ message: `${label} API key (Settings > General)?`, mask: '*', validate: (v) => (v.trim() ? true : 'the API key is needed') })).trim();
      f[kind].push(url);
      f[`${kind}Key`].push(key);
    }
  }
  if (!f.disableArrLibraryUpdate) f.disableArrLibraryUpdate = false;
  return f;
}
