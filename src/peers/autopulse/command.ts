import { randomBytes } from 'node:crypto';
import { renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Command } from 'commander';
import { UserError } from '../../core/errors.ts';
import { configExists, writeConfigFile } from '../../config/load.ts';
import { isDefaultCredentials } from './default-auth.ts';
import { redactUrl } from '../../db/pg/redact.ts';
import { action, readNamedFile, settingsOf } from '../../cli/context.ts';

export function registerImportAutopulse(program: Command): void {
  program
    .command('import-autopulse')
    .description("write a scanrelay config.json from an autopulse config (.toml, .yaml, .yml, .json, with its AUTOPULSE__ environment), take over its pending scans, and print what differs")
    .argument('<config>', "autopulse's config file (config.toml, config.yaml, config.yml or config.json)")
    .option('--database <path or URL>', "autopulse's database (its SQLite file, or a postgres:// URL): its pending scans are queued here (default: app.database_url)")
    .option('--force', 'overwrite an existing config file')
    .option('--new-password', "write a new random SERVER_AUTH_PASS (instead of autopulse's password) and print what to change in each *arr")
    .option('--replace', 'queue pending scans taken over before again')
    .action(
      action(async (file: string, opts: { database?: string; force?: boolean; replace?: boolean; newPassword?: boolean }, cmd: Command) => {
        const settings = settingsOf(cmd);
        const text = readNamedFile(file);
        // Loaded here, not at start: the TOML and YAML parsers are for this command only.
        const { importAutopulse, withNewPassword } = await import('./import.ts');
        const result = importAutopulse(text, file, process.env);
        let passwordSteps: string[] = [];
        if (opts.newPassword) {
          if (!result.config.SERVER_AUTH_USER) throw new UserError("--new-password: autopulse's auth is off (auth.enabled: false), so there is no password to replace; set SERVER_AUTH_USER and SERVER_AUTH_PASS yourself");
          passwordSteps = withNewPassword(result.config, randomBytes(18).toString('base64url'));
          // The warning about the default pair no longer holds.
          result.warnings = result.warnings.filter((w) => !w.startsWith("!!! auth: autopulse's DEFAULT"));
        }
        if (configExists(settings.config) && !opts.force) {
          throw new UserError(`${settings.config} exists and was left as it is: pass --force to overwrite it, or --config <file> to write elsewhere`);
        }
        // All or nothing: the config is written beside its place and moved there only once the pending scans are
        // queued, so an error (a database that cannot be read) leaves neither, and a rerun needs no --force.
        const staged = join(dirname(settings.config), `.${basename(settings.config)}.import-${process.pid}.tmp`);
        writeConfigFile(staged, result.config);
        let tookOver: string | undefined;
        try {
          if (opts.database !== undefined) {
            const { takeOverAutopulse } = await import('./command-takeover.ts');
            tookOver = await takeOverAutopulse(opts.database ?? result.databaseUrl, { ...settings, config: staged }, opts.replace);
          }
          renameSync(staged, settings.config);
        } catch (err) {
          rmSync(staged, { force: true });
          throw err;
        }
        const lines = [`wrote ${settings.config} from ${file}`];
        lines.push(...result.warnings);
        lines.push('carried over:', ...result.carried.map((c) => `  - ${c}`));
        lines.push(...passwordSteps);
        if (!opts.newPassword && isDefaultCredentials(result.config.SERVER_AUTH_USER, result.config.SERVER_AUTH_PASS)) {
          lines.push("auth: the default admin/password is accepted only from loopback and private addresses: run again with --new-password --force for a strong one");
        }
        if (tookOver !== undefined) {
          lines.push(tookOver);
        } else {
          lines.push(`autopulse's pending scans: not taken over (give its database with --database ${redactUrl(result.databaseUrl).replace(/^sqlite:\/\//, '')})`);
        }
        // Never "everything was carried over" while anything changed meaning: every difference is listed.
        if (result.notCarried.length) lines.push('what differs from autopulse (read each line):', ...result.notCarried.map((n) => `  - ${n}`));
        else lines.push('every setting was carried over with its meaning (behaviour that differs on purpose: docs/autopulse.md)');
        lines.push(...result.warnings);
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );
}
