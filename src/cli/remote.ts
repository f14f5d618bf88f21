import { readFileSync } from 'node:fs';
import { input } from '@inquirer/prompts';
import type { Command } from 'commander';
import { UserError } from '../core/errors.ts';
import { editRemote, readRcloneConf, writeRcloneConf } from '../google/rclone-conf.ts';
import { remoteNameProblem } from '../google/rclone-name.ts';
import { findRcloneBinary, resolveRcloneConfPath } from '../google/rclone-path.ts';
import { parsePaste, PasteError } from '../google/rclone-paste.ts';
import { readServiceAccountKey } from '../google/service-account.ts';
import { readInstallSettings } from '../google/rclone-settings-yml.ts';
import { action } from './context.ts';
import { parseScopeAnswer, Walkthrough, type Prompter } from './remote-walkthrough.ts';

/** Questions asked with @inquirer/prompts; plain typed answers, as rclone config takes them. */
export const terminalPrompter: Prompter = {
  async ask(message, opts = {}) {
    return input({
      message,
      default: opts.default || undefined,
      validate: (value) => opts.validate?.(value) ?? true,
    });
  },
  say(text) {
    process.stdout.write(`${text}\n`);
  },
};

interface RemoteOptions {
  rcloneConfig?: string;
  settings?: string;
}

interface CreateOptions extends RemoteOptions {
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  rootFolderId?: string;
  serviceAccountFile?: string;
  tokenFile?: string;
  teamDrive?: string;
  nonInteractive?: boolean;
}

/** Options written by `remote create`, in the order the walkthrough writes them; blanks left out as rclone does. */
export function createOptions(opts: CreateOptions, env: NodeJS.ProcessEnv = process.env): Array<[string, string]> {
  const scope = parseScopeAnswer(opts.scope ?? '');
  if ('error' in scope) throw new UserError(`--scope: ${scope.error}`);
  const set: Array<[string, string]> = [['type', 'drive']];
  if (opts.clientId) set.push(['client_id', opts.clientId]);
  if (opts.clientSecret) set.push(['client_secret', opts.clientSecret]);
  if (scope.value) set.push(['scope', scope.value]);
  if (scope.value.split(',').includes('drive.appfolder')) set.push(['root_folder_id', 'appDataFolder']);
  else if (opts.rootFolderId) set.push(['root_folder_id', opts.rootFolderId]);
  if (opts.serviceAccountFile) {
    try {
      readServiceAccountKey(opts.serviceAccountFile, env);
    } catch (err) {
      throw new UserError(`--service-account-file: ${(err as Error).message}`);
    }
    set.push(['service_account_file', opts.serviceAccountFile]);
  }
  if (opts.tokenFile) {
    let text: string;
    try {
      text = readFileSync(opts.tokenFile, 'utf8');
    } catch (err) {
      throw new UserError(`--token-file: cannot read ${opts.tokenFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    try {
      const paste = parsePaste(text);
      for (const [k, v] of Object.entries(paste.options)) set.push([k, v]);
      set.push(['token', paste.tokenText]);
    } catch (err) {
      if (err instanceof PasteError) throw new UserError(`--token-file ${opts.tokenFile}: ${err.message}`);
      throw err;
    }
  } else if (!opts.serviceAccountFile) {
    throw new UserError('give --token-file (token JSON, or what "rclone authorize" printed) or --service-account-file');
  }
  set.push(['team_drive', opts.teamDrive ?? '']);
  return set;
}

export function registerRemote(program: Command): void {
  const remote = program
    .command('remote')
    .description('create or edit the rclone "drive" remote interactively (like "rclone config")')
    .option('--rclone-config <file>', 'rclone.conf to edit (default: $RCLONE_CONFIG, else the file "rclone config file" names, else rclone\'s search order)')
    .option('--settings <file>', 'a settings.yml whose top-level "remote:" key names the rclone remote your mounts use (Cloudbox/Saltbox style); the new remote is named after it (env SCANRELAY_SETTINGS; default ./settings.yml; without it: "cloud")')
    .action(
      action(async (opts: RemoteOptions) => {
        const env = process.env;
        const conf = resolveRcloneConfPath(opts.rcloneConfig, env);
        readRcloneConf(conf.path); // refuse an encrypted or unreadable file before asking anything
        if (!process.stdin.isTTY) {
          throw new UserError('"scanrelay remote" asks questions and needs a terminal; for scripts use "scanrelay remote create <name> ... --non-interactive"');
        }
        const walkthrough = new Walkthrough({
          io: terminalPrompter,
          confPath: conf.path,
          settings: readInstallSettings(opts.settings, env),
          env,
          rclone: findRcloneBinary(env),
        });
        try {
          await walkthrough.run();
        } catch (err) {
          if ((err as Error).name === 'ExitPromptError') {
            process.stdout.write('\ncancelled: rclone.conf keeps what was written so far\n');
            process.exit(130);
          }
          throw err;
        }
      }),
    );

  remote
    .command('create')
    .description('create a drive remote without questions (for scripts)')
    .argument('<name>', 'remote name')
    .option('--client-id <id>', 'OAuth client id (blank: rclone\'s own, low performance)')
    .option('--client-secret <secret>', 'OAuth client secret')
    .option('--scope <scope>', 'drive, drive.readonly, drive.file, drive.appfolder or drive.metadata.readonly (or 1-5)', 'drive')
    .option('--root-folder-id <id>', 'root folder id (normally blank)')
    .option('--service-account-file <file>', 'service account JSON key instead of a token')
    .option('--token-file <file>', 'token JSON, or the output of "rclone authorize" / "scanrelay authorize drive"')
    .option('--team-drive <id>', 'shared drive id')
    .option('--rclone-config <file>', 'rclone.conf to edit')
    .option('--non-interactive', 'never ask (the default for create)')
    .action(
      action(async (name: string, opts: CreateOptions, cmd: Command) => {
        const all = { ...(cmd.parent?.opts() as RemoteOptions), ...opts };
        const problem = remoteNameProblem(name);
        if (problem) throw new UserError(`remote name "${name}": ${problem}`);
        const conf = resolveRcloneConfPath(all.rcloneConfig);
        const current = readRcloneConf(conf.path);
        if (current.remotes.has(name)) throw new UserError(`remote "${name}" already exists in ${conf.path}: delete or rename it first ("scanrelay remote")`);
        writeRcloneConf(conf.path, editRemote(current.text, name, { set: createOptions(opts) }));
        process.stdout.write(`created remote "${name}" in ${conf.path}\n`);
      }),
    );
}
