import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError } from '../../core/errors.ts';
import { openDriveCache } from '../../triggers/drive/index.ts';
import { readPlexAutoscanCache } from './drive-cache.ts';
import { configIntake } from '../../queue/door.ts';
import { describeDriveImport, importDriveState } from '../../triggers/drive/import.ts';
import { describeQueueImport, importPlexAutoscanQueue } from './takeover.ts';
import { action, loadExistingConfig, loggerFor, settingsOf } from '../../cli/context.ts';
import { openCommandQueue } from '../../cli/queue-open.ts';

export function registerImport(program: Command): void {
  program
    .command('import-plex-autoscan')
    .alias('import')
    .description("take over plex_autoscan's state: drive token, page tokens and cache (cache.db) and pending scans (queue.db)")
    .option('--from-cache <file>', "plex_autoscan's cache file (default: --cachefile)")
    .option('--from-queue <file>', "plex_autoscan's queue file (default: --queuefile)")
    .option('--replace', "also take what scanrelay already has (token file, page tokens, a non-empty drive cache, queue rows taken over before)")
    .action(
      action(async (opts: { fromCache?: string; fromQueue?: string; replace?: boolean }, cmd: Command) => {
        const settings = settingsOf(cmd);
        const { config } = loadExistingConfig(settings);
        const cacheFrom = resolve(opts.fromCache ?? settings.cachefile);
        const queueFrom = resolve(opts.fromQueue ?? settings.queuefile);
        // A file named on the command line must be there: opening it would create an empty database instead.
        for (const [option, given, file] of [['--from-cache', opts.fromCache, cacheFrom], ['--from-queue', opts.fromQueue, queueFrom]] as const) {
          if (given !== undefined && !existsSync(file)) throw new UserError(`${option} ${file}: the file does not exist`);
        }
        // The queue the relay uses: the file, or the shared queue (SERVER_QUEUE_URL) every relay reads.
        const store = await openCommandQueue(settings, config, 'import-plex-autoscan');
        const intake = configIntake(store, config);
        const lines: string[] = [];
        try {
          const state = readPlexAutoscanCache(cacheFrom);
          if (state) {
            // Into the drive cache the relays use: the shared database with SERVER_QUEUE_URL, else the --cachefile.
            const { cache } = await openDriveCache(config, settings.cachefile, await loggerFor(settings));
            try {
              const r = await importDriveState({ state, config, tokenfile: settings.tokenfile, cache, store, intake, replace: opts.replace });
              lines.push(describeDriveImport(r, settings.tokenfile));
            } finally {
              await cache.close();
            }
          }
          const queue = await importPlexAutoscanQueue({ file: queueFrom, config, intake, replace: opts.replace });
          if (queue) lines.push(`${describeQueueImport(queue)}${store.shared ? ` (into the shared queue ${store.location})` : ''}`);
          if (!state && !queue) {
            throw new UserError(`no plex_autoscan state found: ${cacheFrom} has no sqlitedict drive tables and ${queueFrom} has no queueitemmodel table (use --from-cache / --from-queue)`, 1);
          }
        } finally {
          await store.close();
        }
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );
}
