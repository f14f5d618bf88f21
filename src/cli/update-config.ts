import type { Command } from 'commander';
import { addMissingKeys } from '../config/defaults.ts';
import { UserError } from '../config/errors.ts';
import { configExists, writeConfigFile, type JsonObject } from '../config/load.ts';
import { readFileSync } from 'node:fs';
import { action, settingsOf } from './context.ts';

export function registerUpdateConfig(program: Command): void {
  program
    .command('update_config')
    .description("add missing keys with plex_autoscan's defaults and write the file back (sorted keys, 2-space indent)")
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const settings = settingsOf(cmd);
        let raw: JsonObject = {};
        if (configExists(settings.config)) {
          try {
            raw = JSON.parse(readFileSync(settings.config, 'utf8'));
          } catch (err) {
            throw new UserError(`config file ${settings.config} is not valid JSON: ${(err as Error).message}`);
          }
          if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new UserError(`config file ${settings.config} must hold a JSON object`);
        }
        const { merged, added } = addMissingKeys(raw);
        writeConfigFile(settings.config, merged);
        process.stdout.write(
          added.length ? `added ${added.length} key(s) to ${settings.config}: ${added.join(', ')}\n` : `${settings.config}: no missing keys\n`,
        );
      }),
    );
}
