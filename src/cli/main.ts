import { Command } from 'commander';
import { versionText } from '../core/version.ts';

type Register = (program: Command) => void;

/**
 * Each command's module is loaded only when that command runs (every one for help or an unknown word), so
 * the server never loads the remote wizard's prompts, the OAuth flow or the scanner tools it does not use.
 */
const COMMANDS: Array<{ names: string[]; load: () => Promise<Register> }> = [
  { names: ['server', 'serve'], load: async () => (await import('./server.ts')).registerServer },
  { names: ['map'], load: async () => (await import('./map.ts')).registerMap },
  { names: ['update_config'], load: async () => (await import('./update-config.ts')).registerUpdateConfig },
  { names: ['scan'], load: async () => (await import('./scan.ts')).registerScan },
  { names: ['sections', 'sections+'], load: async () => (await import('./sections.ts')).registerSections },
  { names: ['authorize'], load: async () => (await import('./authorize.ts')).registerAuthorize },
  { names: ['build_caches'], load: async () => (await import('./build-caches.ts')).registerBuildCaches },
  { names: ['setup'], load: async () => (await import('./setup.ts')).registerSetup },
  { names: ['remote'], load: async () => (await import('./remote.ts')).registerRemote },
  { names: ['import-autopulse'], load: async () => (await import('../peers/autopulse/command.ts')).registerImportAutopulse },
  { names: ['import-autoscan'], load: async () => (await import('../peers/autoscan/command.ts')).registerImportAutoscan },
  { names: ['import-plex-autoscan', 'import'], load: async () => (await import('../peers/plex-autoscan/command.ts')).registerImport },
  { names: ['health'], load: async () => (await import('./health.ts')).registerHealth },
  { names: ['queue'], load: async () => (await import('./queue.ts')).registerQueue },
  { names: ['move-queue'], load: async () => (await import('./move-queue.ts')).registerMoveQueue },
  { names: ['notify-test'], load: async () => (await import('./notify-test.ts')).registerNotifyTest },
];

/** Global options that take a value (the word after them is not the command). */
const VALUE_OPTIONS = new Set(['--config', '--logfile', '--loglevel', '--queuefile', '--cachefile', '--tokenfile']);

/** The command word in the arguments (after the global options), if there is one. */
export function commandWord(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1];
    if (VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

export async function buildProgram(args: readonly string[] = process.argv.slice(2)): Promise<Command> {
  const program = new Command('scanrelay')
    .description('Scan relay for Plex, Jellyfin and Emby: scans exactly the folder that changed')
    .option('--config <file>', 'config file (env SCANRELAY_CONFIG, PLEX_AUTOSCAN_CONFIG; default ./config/config.json)')
    .option('--logfile <file>', 'also write logs to this file (env SCANRELAY_LOGFILE, PLEX_AUTOSCAN_LOGFILE)')
    .option('--loglevel <level>', 'WARN, INFO, DEBUG, ERROR or TRACE (env SCANRELAY_LOGLEVEL, PLEX_AUTOSCAN_LOGLEVEL; default INFO)')
    .option('--queuefile <file>', 'queue database (env SCANRELAY_QUEUEFILE, PLEX_AUTOSCAN_QUEUEFILE; default queue.db next to the config)')
    .option('--cachefile <file>', 'drive cache database (env SCANRELAY_CACHEFILE, PLEX_AUTOSCAN_CACHEFILE; default cache.db next to the config)')
    .option('--tokenfile <file>', 'drive OAuth token file (env SCANRELAY_TOKENFILE; default token.json next to the config)')
    // autoscan's `--version` prints the version and exits 0 (cmd/autoscan/main.go:94-106); so does this.
    .version(versionText(), '-V, --version', 'print the version and exit')
    // A command's own --help lists the global options too (--config and the files): they go before the command.
    // Descriptions wrap beside the widest command (40 columns) instead of running past an 80-column terminal.
    .configureHelp({ showGlobalOptions: true, minWidthToWrap: 24 })
    .showHelpAfterError();
  const word = commandWord(args);
  const chosen = COMMANDS.filter((c) => word !== undefined && c.names.includes(word));
  for (const c of chosen.length ? chosen : COMMANDS) (await c.load())(program);
  return program;
}

await (await buildProgram()).parseAsync(process.argv);
