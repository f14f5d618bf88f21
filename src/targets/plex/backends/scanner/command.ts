import type { PlexSettings } from '../../settings.ts';

/**
 * The Plex Media Scanner command line, built as plex_autoscan's plex.py builds it. The admin's keys
 * (PLEX_LD_LIBRARY_PATH, PLEX_SUPPORT_DIR, PLEX_SCANNER) are shell text and go in verbatim, so
 * escaped forms such as `/usr/lib/plexmediaserver/Plex\ Media\ Scanner` keep working; values that come
 * from requests (folder, section id, item ids) are single-quoted so each arrives as one literal argument.
 */
export type ScannerSettings = Pick<
  PlexSettings,
  'SCANNER' | 'LD_LIBRARY_PATH' | 'SUPPORT_DIR' | 'USER' | 'USE_SUDO' | 'USE_DOCKER' | 'DOCKER_NAME'
>;

/** A process to spawn: a program and its argument array (never an outer shell). */
export interface ScannerCommand {
  file: string;
  args: string[];
}

/** POSIX single quoting, as Python's shlex.quote: safe words stay bare, anything else is quoted. */
export function shellQuote(value: string): string {
  if (value === '') return "''";
  if (!/[^\w@%+=:,./-]/.test(value)) return value;
  return `'${value.replace(/'/g, `'"'"'`)}'`;
}

/** The scanner arguments of a partial scan of one folder. */
export function scanArgs(sectionId: string | number, folder: string): string {
  return `--scan --refresh --section ${shellQuote(String(sectionId))} --directory ${shellQuote(folder)}`;
}

/** The scanner arguments of an analysis of metadata items (PLEX_ANALYZE_TYPE basic or deep). */
export function analyzeArgs(metadataIds: readonly number[], deep: boolean): string {
  return `${deep ? '--analyze-deeply' : '--analyze'} --item ${shellQuote(metadataIds.map((id) => String(Math.trunc(id))).join(','))}`;
}

export const LIST_ARGS = '--list';

/**
 * The shell text run inside the wrapper: library path, then (only outside docker, where the container
 * already sets it) the support folder, then the scanner with its arguments.
 */
export function innerCommand(settings: ScannerSettings, scannerArgs: string): string {
  let cmd = `export LD_LIBRARY_PATH=${settings.LD_LIBRARY_PATH};`;
  if (!settings.USE_DOCKER) cmd += `export PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR=${settings.SUPPORT_DIR};`;
  return `${cmd}${settings.SCANNER} ${scannerArgs}`;
}

/** How the inner command runs: docker exec into the container, sudo as the Plex user, or plain bash. */
export function wrap(settings: ScannerSettings, inner: string): ScannerCommand {
  if (settings.USE_DOCKER) {
    return { file: 'docker', args: ['exec', '-u', settings.USER, '-i', settings.DOCKER_NAME, 'bash', '-c', inner] };
  }
  if (settings.USE_SUDO) return { file: 'sudo', args: ['-u', settings.USER, 'bash', '-c', inner] };
  return { file: 'bash', args: ['-c', inner] };
}

export function scannerCommand(settings: ScannerSettings, scannerArgs: string): ScannerCommand {
  return wrap(settings, innerCommand(settings, scannerArgs));
}

/** The command as one shell line, each argument quoted: what a user would paste to run it by hand. */
export function displayCommand(cmd: ScannerCommand): string {
  return [cmd.file, ...cmd.args].map(shellQuote).join(' ');
}
