import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import { DriveApiError } from '../google/drive-client.ts';
import { OAuthError } from '../google/oauth.ts';
import { openDrive, openDriveCache } from '../triggers/drive/index.ts';
import { action, loadExistingConfig, loggerFor, settingsOf } from './context.ts';

export function registerBuildCaches(program: Command): void {
  program
    .command('build_caches')
    .alias('build-caches')
    .description('fill the drive cache (--cachefile, or the shared database with SERVER_QUEUE_URL) from the whole drive history, so the first changes are recognised')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const settings = settingsOf(cmd);
        const log = (await loggerFor(settings)).child({ component: 'drive' });
        const { config } = loadExistingConfig(settings);
        // Into the cache the relays use: the shared database with SERVER_QUEUE_URL, else the --cachefile.
        const { cache: opened } = await openDriveCache(config, settings.cachefile, log);
        const { watcher, cache, auth } = openDrive(config, settings, log, undefined, undefined, opened);
        try {
          // A missing or unusable token fails here, before anything claims to be building.
          await auth.accessToken();
          log.info({ cache: cache.location }, 'Building caches');
          for (const drive of await watcher.drives()) {
            log.info({ drive: drive.name }, `Building cache for drive: ${drive.name}`);
            // A drive's history can be many pages of 1,000 changes: one line per page shows it is moving.
            let pages = 0;
            const changes = await watcher.rebuild(drive, async (so) => {
              pages++;
              const items = await cache.count();
              log.info({ drive: drive.name, page: pages, changes: so, items }, `drive ${drive.name}: page ${pages} read, ${so} change(s) so far, ${items} item(s) in the cache`);
            });
            log.info({ drive: drive.name, changes }, `Finished building cache for drive: ${drive.name}`);
          }
          const items = await cache.count();
          log.info({ items }, `Finished building all caches: ${items} item(s) in ${cache.location}`);
        } catch (err) {
          if (err instanceof DriveApiError || err instanceof OAuthError) throw new UserError(`build_caches failed: ${err.message}`, 1);
          throw err;
        } finally {
          await cache.close();
        }
      }),
    );
}
