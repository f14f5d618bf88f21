import type { Command } from 'commander';
import { buildInfo } from '../core/version.ts';
import type { QueueBackend } from '../queue/backend.ts';
import { startRelay } from '../server/run.ts';
import { action, loadOrCreateConfig, loggerFor, settingsOf } from './context.ts';

export function registerServer(program: Command): void {
  program
    .command('server')
    .alias('serve')
    .description('start the relay (writes a starter config first when there is none)')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const settings = settingsOf(cmd);
        // The first line says which release runs (CHANGELOG.md), so a log read later tells upgrades apart.
        const { version, commit } = buildInfo();
        const log = await loggerFor(settings, { first: { scanrelay: version, ...(commit ? { commit } : {}) } });
        const { config, created } = loadOrCreateConfig(settings, log);
        if (settings.layout) log.info({ queuefile: settings.queuefile, cachefile: settings.cachefile }, settings.layout);
        const relay = await startRelay({
          config,
          log,
          queuefile: settings.queuefile,
          cachefile: settings.cachefile,
          tokenfile: settings.tokenfile,
          configPath: settings.config,
          firstStart: created,
        });
        let stopping = false;
        const stop = async (signal: string) => {
          if (stopping) return;
          stopping = true;
          log.info({ signal }, stopMessage(relay.store));
          await relay.close();
          process.exit(0);
        };
        process.on('SIGINT', () => void stop('SIGINT'));
        process.on('SIGTERM', () => void stop('SIGTERM'));
      }),
    );
}

/** Where the queued scans wait while this relay is stopped: its file, or the queue it shares with other relays. */
export function stopMessage(store: Pick<QueueBackend, 'shared' | 'location'>): string {
  return store.shared
    ? `stopping: queued scans stay in the shared queue (${store.location}); the other relays deliver them, and this one resumes on its next start`
    : 'stopping: queued scans stay in the queue file and resume on the next start';
}
