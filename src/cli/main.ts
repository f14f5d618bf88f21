import { Command } from 'commander';
import { registerAuthorize } from './authorize.ts';
import { registerBuildCaches } from './build-caches.ts';
import { registerMap } from './map.ts';
import { registerRemote } from './remote.ts';
import { registerScan } from './scan.ts';
import { registerSections } from './sections.ts';
import { registerServer } from './server.ts';
import { registerUpdateConfig } from './update-config.ts';

export function buildProgram(): Command {
  const program = new Command('scanrelay')
    .description('Scan relay for Plex, Jellyfin and Emby: scans exactly the folder that changed')
    .option('--config <file>', 'config file (env SCANRELAY_CONFIG, PLEX_AUTOSCAN_CONFIG; default ./config/config.json)')
    .option('--logfile <file>', 'also write logs to this file (env SCANRELAY_LOGFILE, PLEX_AUTOSCAN_LOGFILE)')
    .option('--loglevel <level>', 'WARN, INFO, DEBUG, ERROR or TRACE (env SCANRELAY_LOGLEVEL, PLEX_AUTOSCAN_LOGLEVEL; default INFO)')
    .option('--queuefile <file>', 'queue database (env SCANRELAY_QUEUEFILE, PLEX_AUTOSCAN_QUEUEFILE; default queue.db next to the config)')
    .option('--cachefile <file>', 'drive cache database (env SCANRELAY_CACHEFILE, PLEX_AUTOSCAN_CACHEFILE; default cache.db next to the config)')
    .option('--tokenfile <file>', 'drive OAuth token file (env SCANRELAY_TOKENFILE; default token.json next to the config)')
    .showHelpAfterError();
  registerServer(program);
  registerMap(program);
  registerUpdateConfig(program);
  registerScan(program);
  registerSections(program);
  registerAuthorize(program);
  registerBuildCaches(program);
  registerRemote(program);
  return program;
}

await buildProgram().parseAsync(process.argv);
