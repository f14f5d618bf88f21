import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import { redactUrl } from '../db/pg/redact.ts';
import { openQueue } from '../queue/open.ts';
import { moveQueue } from '../queue/move.ts';
import { RelayLock, relayLockFile } from '../queue/file-lock.ts';
import { QueueStore } from '../queue/store.ts';
import { action, loadExistingConfig, settingsOf } from './context.ts';
import { hostname } from 'node:os';
import { existsSync } from 'node:fs';

export function registerMoveQueue(program: Command): void {
  program
    .command('move-queue')
    .description('move the SQLite queue file (--queuefile) into PostgreSQL: its open scans and page tokens; stop the relay first')
    .option('--to <url>', 'postgres://user:password@host:port/database (default: SERVER_QUEUE_URL of the config)')
    .option('--force', 'move even though a queue file was moved into this database before, or a relay seems to use the file')
    .action(
      action(async (opts: { to?: string; force?: boolean }, cmd: Command) => {
        const settings = settingsOf(cmd);
        const url = opts.to ?? loadExistingConfig(settings).config.SERVER_QUEUE_URL;
        if (!url) throw new UserError('no PostgreSQL URL: pass --to postgres://... or set SERVER_QUEUE_URL in the config');
        if (!/^postgres(ql)?:\/\//.test(url)) throw new UserError(`--to must be a postgres:// URL, got ${redactUrl(url)}`);
        if (!existsSync(settings.queuefile)) throw new UserError(`no queue file at ${settings.queuefile} (--queuefile)`);
        // A running relay would go on delivering (and queueing into) the file while its scans are moved away.
        if (!opts.force && RelayLock.held(settings.queuefile)) {
          throw new UserError(`${settings.queuefile} is in use by a running relay (it holds ${relayLockFile(settings.queuefile)}): stop it first, or pass --force`);
        }
        const from = new QueueStore(settings.queuefile);
        try {
          if (!from.writable()) throw new UserError(`${settings.queuefile} is in use by a running relay: stop it first`);
          const to = await openQueue({ SERVER_QUEUE_URL: url }, settings.queuefile, { relayId: `${hostname()}:move-queue` });
          try {
            const moved = await moveQueue(from, to, { file: settings.queuefile, force: opts.force }).catch((err: Error) => {
              throw new UserError(err.message);
            });
            if (moved.nothingLeft) {
              const went = moved.nothingLeft.to ? ` (its scans went to ${redactUrl(moved.nothingLeft.to)}${moved.nothingLeft.at ? ` on ${moved.nothingLeft.at}` : ''})` : '';
              process.stdout.write(`nothing left to move: ${settings.queuefile} has no open scans${went}\n`);
              return;
            }
            process.stdout.write(
              `moved ${moved.scans} open scan(s) (${moved.files} file(s)) and ${moved.meta} saved value(s) from ${settings.queuefile} into ${redactUrl(url)}; ` +
                `they are gone from the file. Set SERVER_QUEUE_URL in each relay's config and start them.\n`,
            );
          } finally {
            await to.close();
          }
        } finally {
          from.close();
        }
      }),
    );
}
