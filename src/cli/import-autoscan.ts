import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { UserError } from '../config/errors.ts';
import { configExists, writeConfigFile } from '../config/load.ts';
import { action, settingsOf } from './context.ts';

export function registerImportAutoscan(program: Command): void {
  program
    .command('import-autoscan')
    .description("write a scanrelay config.json from an autoscan config.yml (to --config) and print what could not be carried over")
    .argument('<config.yml>', "autoscan's config file")
    .option('--force', 'overwrite an existing config file')
    .action(
      action(async (file: string, opts: { force?: boolean }, cmd: Command) => {
        const settings = settingsOf(cmd);
        let text: string;
        try {
          text = readFileSync(file, 'utf8');
        } catch (err) {
          throw new UserError(`cannot read ${file}: ${(err as Error).message}`);
        }
        // Loaded here, not at start: the YAML parser is for this command only, never the relay's memory.
        const { importAutoscan } = await import('../config/autoscan-import.ts');
        const { config, notCarried } = importAutoscan(text, file);
        if (configExists(settings.config) && !opts.force) {
          throw new UserError(`${settings.config} exists and was left as it is: pass --force to overwrite it, or --config <file> to write elsewhere`);
        }
        writeConfigFile(settings.config, config);
        const lines = [`wrote ${settings.config} from ${file}`];
        if (notCarried.length) lines.push('not carried over:', ...notCarried.map((n) => `  - ${n}`));
        else lines.push('everything was carried over');
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );
}
