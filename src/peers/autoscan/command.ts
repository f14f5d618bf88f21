import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../../core/errors.ts';
import { configExists, loadConfigFile, writeConfigFile } from '../../config/load.ts';
import { action, readNamedFile, settingsOf } from '../../cli/context.ts';

export function registerImportAutoscan(program: Command): void {
  program
    .command('import-autoscan')
    .description("write a scanrelay config.json from an autoscan config.yml (to --config), take over autoscan's pending scans, and print what differs")
    .argument('[config.yml]', "autoscan's config file (default: env AUTOSCAN_CONFIG, as autoscan reads it)")
    .option('--database <autoscan.db>', "autoscan's database: its pending scans are queued here (default: env AUTOSCAN_DATABASE, as autoscan reads it)")
    .option('--force', 'overwrite an existing config file')
    .option('--replace', 'queue pending scans taken over before again')
    .action(
      action(async (arg: string | undefined, opts: { database?: string; force?: boolean; replace?: boolean }, cmd: Command) => {
        const settings = settingsOf(cmd);
        const file = arg ?? process.env.AUTOSCAN_CONFIG;
        if (!file) throw new UserError("give autoscan's config.yml: scanrelay import-autoscan <config.yml> (or set AUTOSCAN_CONFIG)");
        const text = readNamedFile(file);
        // Loaded here, not at start: the YAML parser is for this command only, never the relay's memory.
        const { importAutoscan, scanrelayPriority } = await import('./import.ts');
        const { config, notCarried } = importAutoscan(text, file);
        if (configExists(settings.config) && !opts.force) {
          throw new UserError(`${settings.config} exists and was left as it is: pass --force to overwrite it, or --config <file> to write elsewhere`);
        }
        // autoscan has no shared queue: the file this one replaces keeps the relay on its shared queue.
        const kept = configExists(settings.config) ? keepSharedQueue(settings.config, config) : [];
        writeConfigFile(settings.config, config);
        const lines = [`wrote ${settings.config} from ${file}${kept.length ? ` (kept ${kept.join(', ')} from the file it replaces)` : ''}`];
        if (process.env.SERVER_QUEUE_URL && !kept.includes('SERVER_QUEUE_URL')) {
          lines.push('SERVER_QUEUE_URL comes from the environment, not the written file: start the relay with the same environment');
        }
        const database = opts.database ?? process.env.AUTOSCAN_DATABASE;
        if (database) lines.push(await takeOverQueue(resolve(database), settings, scanrelayPriority, opts.replace));
        else lines.push("autoscan's pending scans: not taken over (give autoscan.db with --database, or AUTOSCAN_DATABASE)");
        // Never "everything was carried over" while anything changed meaning: every difference is listed.
        if (notCarried.length) lines.push('what differs from autoscan (read each line):', ...notCarried.map((n) => `  - ${n}`));
        else lines.push('every setting was carried over with its meaning (behaviour that differs on purpose: docs/autoscan.md)');
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );
}

/** The shared-queue keys (docs/postgres.md) of the config being replaced, copied into the new one; their names. */
function keepSharedQueue(file: string, into: Record<string, unknown>): string[] {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return []; // a file that cannot be read is being replaced: nothing to keep
  }
  if (!raw || typeof raw !== 'object') return [];
  const keys = ['SERVER_QUEUE_URL', 'SERVER_QUEUE_LEASE', 'SERVER_RELAY_ID'].filter((k) => raw[k] !== undefined && raw[k] !== '' && into[k] === undefined);
  for (const k of keys) into[k] = raw[k];
  return keys;
}

/** Into the queue the relay will use: the file, or the shared queue when SERVER_QUEUE_URL is in the environment. */
async function takeOverQueue(file: string, settings: ReturnType<typeof settingsOf>, priorityOf: (p: number) => number, replace?: boolean): Promise<string> {
  const [{ configIntake }, { importAutoscanQueue, describeAutoscanQueueImport, autoscanQueueWait }, { openCommandQueue }] = await Promise.all([
    import('../../queue/door.ts'),
    import('./queue-db.ts'),
    import('../../cli/queue-open.ts'),
  ]);
  const { config } = loadConfigFile(settings.config);
  const store = await openCommandQueue(settings, config, 'import-autoscan');
  try {
    const intake = configIntake(store, config);
    const result = await importAutoscanQueue({ file, config, intake, priorityOf, replace });
    const said = describeAutoscanQueueImport(result);
    const wait = autoscanQueueWait(result, config.SERVER_SCAN_DELAY);
    return `${store.shared ? `${said} (into the shared queue ${store.location})` : said}${wait ? `\n${wait}` : ''}`;
  } finally {
    await store.close();
  }
}
