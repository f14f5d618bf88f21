import type { Command } from 'commander';
import { chmodSync, copyFileSync, readFileSync, statSync } from 'node:fs';
import { addMissingKeys } from '../config/defaults.ts';
import { UserError } from '../core/errors.ts';
import { configExists, parseJsonText, writeConfigFile, type JsonObject } from '../config/load.ts';
import { action, settingsOf } from './context.ts';

/** The keys added, one `+ KEY: value` line each (dotted for nested keys), as a diff reads. */
export function addedKeysDiff(merged: JsonObject, added: string[]): string {
  return added
    .map((name) => {
      const value = name.split('.').reduce<unknown>((v, k) => (v as JsonObject)[k], merged);
      return `+ ${name}: ${JSON.stringify(value)}`;
    })
    .join('\n');
}

export function registerUpdateConfig(program: Command): void {
  program
    .command('update_config')
    .description("add plex_autoscan's missing keys with their defaults and write the file back (sorted keys, 2-space indent; the old file is kept as config.json.bak)")
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const settings = settingsOf(cmd);
        const path = settings.config;
        let raw: JsonObject = {};
        let mode: number | undefined;
        if (configExists(path)) {
          raw = parseJsonText(readFileSync(path, 'utf8'), path);
          if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new UserError(`config file ${path} must hold a JSON object`);
          mode = statSync(path).mode & 0o7777;
        }
        const { merged, added } = addMissingKeys(raw);
        if (added.length === 0) {
          process.stdout.write(`${path}: no missing keys; file left as it was\n`);
          return;
        }
        if (mode !== undefined) {
          // The user's own bytes, before anything is rewritten; same permissions, as it holds secrets.
          copyFileSync(path, `${path}.bak`);
          chmodSync(`${path}.bak`, mode);
        }
        writeConfigFile(path, merged, mode);
        process.stdout.write(
          `added ${added.length} key(s) to ${path}${mode !== undefined ? ` (previous file: ${path}.bak)` : ''}:\n${addedKeysDiff(merged, added)}\n`,
        );
      }),
    );
}
