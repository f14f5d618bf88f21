import { refreshAccessToken, isExpiring } from '../google/oauth.ts';
import { loopbackAuthorize, runRcloneAuthorize } from '../google/rclone-authorize.ts';
import { authorizeCommand, authorizeBlob } from '../google/rclone-blob.ts';
import { deleteRemote, editRemote, findRemote, listRemotes, readRcloneConf, renameRemote, writeRcloneConf } from '../google/rclone-conf.ts';
import { DriveClient } from '../google/drive-client.ts';
import type { SharedDrive } from '../google/drive-types.ts';
import { advancedDriveOptions, DRIVE_SCOPES, driveOption, optionValueProblem, scopeUrls } from '../google/rclone-drive-options.ts';
import { googleEndpoints, serviceAccountTokenUrl } from '../google/endpoints.ts';
import { maskOption } from '../google/rclone-mask.ts';
import { remoteNameProblem } from '../google/rclone-name.ts';
import { parsePaste, PasteError, type PasteResult } from '../google/rclone-paste.ts';
import { readServiceAccountKey, ServiceAccountSource } from '../google/service-account.ts';
import { writeRemoteToSettings, type InstallSettings } from '../google/rclone-settings-yml.ts';
import { formatToken, parseToken } from '../google/rclone-token.ts';

/**
 * `scanrelay remote`: rclone's `config` walkthrough for a drive remote (spec E6, 14 steps), with the same
 * order and accepted answers, writing an rclone.conf that rclone 1.60 and newer read back.
 */

export interface Prompter {
  /** Asks one question; validate returns the reason an answer is refused (the question is then asked again). */
  ask(message: string, opts?: { default?: string; validate?: (value: string) => string | undefined }): Promise<string>;
  say(text: string): void;
}

export interface WalkthroughContext {
  io: Prompter;
  confPath: string;
  settings: InstallSettings;
  env: NodeJS.ProcessEnv;
  /** The rclone executable, when installed (for rclone's own client id). */
  rclone?: string;
}

const CLIENT_ID_WARNING =
  'Warning: with client_id blank, rclone uses its own internal key, shared by every rclone user, which performs poorly ' +
  '(low rate limits). Creating your own client id is recommended: https://rclone.org/drive/#making-your-own-client-id';

/** Options of the remote being made, in the order rclone would write them (a Map keeps first-set order). */
type Options = Map<string, string>;

function yesNo(value: string): boolean | undefined {
  const v = value.trim().toLowerCase();
  if (v === 'y' || v === 'yes' || v === 'true') return true;
  if (v === 'n' || v === 'no' || v === 'false') return false;
  return undefined;
}

/** rclone's rule for option questions: store an answer only when it differs from the current value. */
function setIfChanged(m: Options, key: string, value: string): void {
  const current = m.get(key) ?? driveOption(key)?.default ?? '';
  if (value !== current) m.set(key, value);
}

/** Scope answer: a name, a number 1-5, a comma list of names, or blank (rclone's default, full access). */
export function parseScopeAnswer(answer: string): { value: string } | { error: string } {
  const parts = answer.split(',').map((s) => s.trim()).filter(Boolean);
  if (!parts.length) return { value: '' };
  const names: string[] = [];
  for (const p of parts) {
    const byNumber = /^\d+$/.test(p) ? DRIVE_SCOPES[Number(p) - 1] : undefined;
    const byName = DRIVE_SCOPES.find((s) => s.value === p);
    const hit = byNumber ?? byName;
    if (!hit) return { error: `"${p}" is not a scope: type one of ${DRIVE_SCOPES.map((s) => s.value).join(', ')}, or its number 1-${DRIVE_SCOPES.length}` };
    names.push(hit.value);
  }
  return { value: names.join(',') };
}

export class Walkthrough {
  constructor(private readonly ctx: WalkthroughContext) {}

  private get io(): Prompter {
    return this.ctx.io;
  }

  private read() {
    return readRcloneConf(this.ctx.confPath);
  }

  private async askYesNo(question: string, def: boolean): Promise<boolean> {
    this.io.say(`${question}\ny) Yes${def ? ' (default)' : ''}\nn) No${def ? '' : ' (default)'}`);
    const answer = await this.io.ask('y/n>', { default: def ? 'y' : 'n', validate: (v) => (yesNo(v) === undefined ? 'answer y or n' : undefined) });
    return yesNo(answer)!;
  }

  /** Steps 1 and 14: the menu, until `q`. */
  async run(): Promise<void> {
    this.io.say(`rclone config file: ${this.ctx.confPath}`);
    await this.offerSettingsFix();
    for (let round = 0; round < 10_000; round++) {
      const names = listRemotes(this.read());
      let choices: string;
      if (names.length) {
        this.io.say(`Current remotes:\n\n${this.remoteTable(names)}\n`);
        this.io.say('e) Edit existing remote\nn) New remote\nd) Delete remote\nr) Rename remote\ns) Set configuration password\nq) Quit config');
        choices = 'endrsq';
      } else {
        this.io.say('No remotes found, make a new one?\nn) New remote\ns) Set configuration password\nq) Quit config');
        choices = 'nsq';
      }
      const answer = (
        await this.io.ask(`${choices.split('').join('/')}>`, {
          validate: (v) => (v.trim().length === 1 && choices.includes(v.trim().toLowerCase()) ? undefined : `type one of ${choices.split('').join(', ')}`),
        })
      )
        .trim()
        .toLowerCase();
      if (answer === 'q') return;
      if (answer === 's') {
        this.io.say(
          'Setting a configuration password is not supported by scanrelay: an encrypted rclone.conf could no longer be read by scanrelay. ' +
            'rclone itself does it: run "rclone config" and choose "s) Set configuration password".',
        );
      } else if (answer === 'n') {
        await this.newRemote();
      } else if (answer === 'e') {
        const name = await this.chooseRemote(names);
        await this.editExisting(name);
      } else if (answer === 'd') {
        const name = await this.chooseRemote(names);
        this.deleteRemote(name);
      } else if (answer === 'r') {
        const name = await this.chooseRemote(names);
        await this.renameRemote(name, names);
      }
    }
  }

  private remoteTable(names: string[]): string {
    const conf = this.read();
    const rows = names.map((n) => `${n.padEnd(20)} ${findRemote(conf, n)?.type ?? ''}`);
    return ['Name                 Type', '====                 ====', ...rows].join('\n');
  }

  private async chooseRemote(names: string[]): Promise<string> {
    this.io.say(`Choose a number from below, or type in an existing value.\n${names.map((n, i) => `${String(i + 1).padStart(2)} > ${n}`).join('\n')}`);
    const answer = await this.io.ask('remote>', {
      validate: (v) => (this.pickFrom(names, v) === undefined ? `type a remote name or a number from 1 to ${names.length}` : undefined),
    });
    return this.pickFrom(names, answer)!;
  }

  private pickFrom(names: string[], answer: string): string | undefined {
    const v = answer.trim();
    if (/^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= names.length) return names[Number(v) - 1];
    return names.includes(v) ? v : undefined;
  }

  /**
   * Two fixes when settings.yml names a remote that does not exist but another drive remote does. Without a
   * settings.yml nothing names a remote: the wizard starts from the user's own remotes, never offering to
   * rename one of them to the default name.
   */
  private async offerSettingsFix(): Promise<void> {
    if (!this.ctx.settings.exists) return;
    const conf = this.read();
    const wanted = this.ctx.settings.remote;
    if (conf.remotes.has(wanted)) return;
    const drives = listRemotes(conf).filter((n) => findRemote(conf, n)?.type === 'drive');
    if (!drives.length) return;
    this.io.say(`settings.yml (${this.ctx.settings.path}) names the remote "${wanted}", but rclone.conf has no such remote. It has: ${drives.join(', ')}.`);
    let existing = drives[0];
    if (drives.length > 1) existing = await this.chooseRemote(drives);
    const fixes = [`1) Rename remote "${existing}" to "${wanted}"`, `2) Change "remote:" in ${this.ctx.settings.path} to "${existing}"`, '3) Leave both as they are'];
    this.io.say(fixes.join('\n'));
    const max = fixes.length;
    const answer = await this.io.ask(`${Array.from({ length: max }, (_, i) => i + 1).join('/')}>`, {
      default: String(max),
      validate: (v) => (/^\d+$/.test(v.trim()) && Number(v) >= 1 && Number(v) <= max ? undefined : `type a number from 1 to ${max}`),
    });
    const n = Number(answer.trim());
    if (n === 1) {
      writeRcloneConf(this.ctx.confPath, renameRemote(this.read().text, existing, wanted));
      this.io.say(`Renamed remote "${existing}" to "${wanted}".`);
    } else if (n === 2) {
      writeRemoteToSettings(this.ctx.settings.path, existing);
      this.ctx.settings.remote = existing;
      this.io.say(`${this.ctx.settings.path} now names remote "${existing}".`);
    }
  }

  /** Steps 2-13 for a new remote. */
  async newRemote(): Promise<void> {
    const existing = new Set(listRemotes(this.read()));
    const suggested = existing.has(this.ctx.settings.remote) ? undefined : this.ctx.settings.remote;
    this.io.say('Enter name for new remote.');
    const name = (
      await this.io.ask('name>', {
        default: suggested,
        validate: (v) => remoteNameProblem(v) ?? (existing.has(v) ? `remote "${v}" already exists: choose another name, or edit it with e` : undefined),
      })
    );
    this.io.say('Option Storage.\nType of storage to configure.\nChoose a number from below, or type in your own value.\n 1 / Google Drive\n   \\ (drive)');
    await this.io.ask('Storage>', {
      validate: (v) => {
        const t = v.trim();
        if (t === 'drive' || t === '1') return undefined;
        return t ? `scanrelay creates only Google Drive remotes: type "drive" or 1 (use "rclone config" for "${t}")` : 'type "drive" or 1';
      },
    });
    const m: Options = new Map([['type', 'drive']]);
    await this.askOptions(m, false);
    await this.askAuthorization(m, false);
    await this.askSharedDrive(m);
    writeRcloneConf(this.ctx.confPath, editRemote(this.read().text, name, { set: [...m] }));
    await this.confirm(name);
  }

  /** Steps 5-9: the normal options, then the advanced ones when asked. Current values are the defaults. */
  private async askOptions(m: Options, editing: boolean): Promise<void> {
    const io = this.io;
    const keepHint = editing ? ' Press Enter to keep the current value.' : '';
    io.say(`Option client_id.\nGoogle Application Client Id\nSetting your own is recommended.\nSee https://rclone.org/drive/#making-your-own-client-id for how to create your own.\nIf you leave this blank, it will use an internal key which is low performance.${keepHint}`);
    setIfChanged(m, 'client_id', (await io.ask('client_id>', { default: m.get('client_id') ?? '' })).trim());
    io.say(`Option client_secret.\nOAuth Client Secret.\nLeave blank normally.${keepHint}`);
    setIfChanged(m, 'client_secret', (await io.ask('client_secret>', { default: m.get('client_secret') ?? '' })).trim());
    if (!m.get('client_id')) io.say(CLIENT_ID_WARNING);

    io.say(
      `Option scope.\nScope that rclone should use when requesting access from drive.\nChoose a number from below, or type in your own value.\n${DRIVE_SCOPES.map(
        (s, i) => `${String(i + 1).padStart(2)} / ${s.help.replace(/\n/g, '\n   | ')}\n   \\ (${s.value})`,
      ).join('\n')}`,
    );
    const scopeAnswer = await io.ask('scope>', {
      default: m.get('scope') ?? '',
      validate: (v) => {
        const r = parseScopeAnswer(v);
        return 'error' in r ? r.error : undefined;
      },
    });
    const scope = (parseScopeAnswer(scopeAnswer) as { value: string }).value;
    setIfChanged(m, 'scope', scope);

    if (scope.split(',').includes('drive.appfolder')) {
      // rclone's drive Config sets this for the appfolder scope, whatever was typed.
      m.set('root_folder_id', 'appDataFolder');
      io.say('Scope drive.appfolder: root_folder_id is set to appDataFolder, as rclone does.');
    } else {
      io.say(`Option root_folder_id.\nID of the root folder.\nLeave blank normally.\nFill in to access "Computers" folders (see docs), or for rclone to use\na non root folder as its starting point.${keepHint}`);
      setIfChanged(m, 'root_folder_id', (await io.ask('root_folder_id>', { default: m.get('root_folder_id') ?? '' })).trim());
    }

    io.say(
      'Option service_account_file.\nService Account Credentials JSON file path.\nLeave blank normally.\nNeeded only if you want use SA instead of interactive login.\n' +
        `Leading \`~\` will be expanded in the file name as will environment variables such as \`\${RCLONE_CONFIG_DIR}\`.${keepHint}`,
    );
    const sa = await io.ask('service_account_file>', {
      default: m.get('service_account_file') ?? '',
      validate: (v) => {
        if (!v.trim()) return undefined;
        try {
          readServiceAccountKey(v.trim(), this.ctx.env);
          return undefined;
        } catch (err) {
          return `${(err as Error).message}: give the path of a service account JSON key, or leave blank`;
        }
      },
    });
    setIfChanged(m, 'service_account_file', sa.trim());

    if (await this.askYesNo('Edit advanced config?', false)) {
      for (const opt of advancedDriveOptions()) {
        io.say(`Option ${opt.name}.\n${opt.help}\nPress Enter for the default (${opt.default || 'empty'}).`);
        const value = await io.ask(`${opt.name}>`, {
          default: m.get(opt.name) ?? opt.default,
          validate: (v) => (v.trim() ? optionValueProblem(opt, v.trim()) : undefined),
        });
        setIfChanged(m, opt.name, value.trim());
      }
    }
  }

  /** Steps 10-11 (skipped with a service account): browser on this machine, or the headless paste. */
  private async askAuthorization(m: Options, editing: boolean): Promise<void> {
    if (m.get('service_account_file')) return;
    if (editing && m.get('token')) {
      if (!(await this.askYesNo('Already have a token - refresh?', true))) return;
    }
    for (let attempt = 0; attempt < 100; attempt++) {
      const auto = await this.askYesNo('Use auto config?\n * Say Y if not sure\n * Say N if you are working on a remote or headless machine\n', true);
      if (!auto) {
        this.applyPaste(m, await this.askPaste(m));
        return;
      }
      const options = Object.fromEntries(m);
      if (options.client_id) {
        try {
          const token = await loopbackAuthorize(options, googleEndpoints({ env: this.ctx.env, remote: options }), (line) => this.io.say(line));
          m.set('token', token);
          return;
        } catch (err) {
          this.io.say(`Authorization failed: ${(err as Error).message}`);
          continue;
        }
      }
      if (!this.ctx.rclone) {
        this.io.say(
          'With client_id blank the remote uses rclone\'s own client id, which only rclone itself may use, and rclone is not installed here. ' +
            'Answer n to authorize on a machine with rclone and a browser, or start again with your own client id.',
        );
        continue;
      }
      const result = await runRcloneAuthorize(this.ctx.rclone, authorizeBlob(options), (chunk) => process.stdout.write(chunk));
      try {
        this.applyPaste(m, parsePaste(result.stdout));
        return;
      } catch (err) {
        this.io.say(`rclone authorize did not produce a token (exit status ${result.code}): ${(err as Error).message}`);
      }
    }
  }

  private async askPaste(m: Options): Promise<PasteResult> {
    const options = Object.fromEntries(m);
    const lines = [
      'For this to work, you will need rclone available on a machine that has',
      'a web browser available.',
      '',
      'For more help and alternate methods see: https://rclone.org/remote_setup/',
      '',
      'Execute the following on the machine with the web browser (same rclone',
      'version recommended):',
      '',
      `\t${authorizeCommand(options)}`,
      '',
    ];
    if (options.client_id) lines.push('Or, on a machine with scanrelay and no rclone:', '', `\t${authorizeCommand(options, 'scanrelay')}`, '');
    lines.push('Then paste the result (the text between the "--->" and "<---End paste" lines).');
    this.io.say(lines.join('\n'));
    const answer = await this.io.ask('config_token>', {
      validate: (v) => {
        try {
          parsePaste(v);
          return undefined;
        } catch (err) {
          if (err instanceof PasteError) return `Couldn't decode response - try again: ${err.message}`;
          throw err;
        }
      },
    });
    return parsePaste(answer);
  }

  private applyPaste(m: Options, paste: PasteResult): void {
    // rclone sets every key the browser side sent back, then the token.
    for (const [k, v] of Object.entries(paste.options)) m.set(k, v);
    m.set('token', paste.tokenText);
  }

  /** Step 12: shared drive, listed with drives.list using the new token (or the service account). */
  private async askSharedDrive(m: Options): Promise<void> {
    const current = m.get('team_drive');
    if (current) {
      if (!(await this.askYesNo(`Change current Shared Drive (Team Drive) ID "${current}"?`, false))) return;
    } else if (!(await this.askYesNo('Configure this as a Shared Drive (Team Drive)?\n', false))) {
      m.set('team_drive', '');
      return;
    }
    let drives: SharedDrive[] = [];
    let problem: string | undefined;
    try {
      const token = await this.accessToken(m);
      // One try: the user is waiting at a prompt, and the list is only a convenience (an ID can be typed).
      const client = new DriveClient({
        baseUrl: googleEndpoints({ env: this.ctx.env }).driveApiUrl,
        auth: { description: 'the remote\'s token', accessToken: async () => token },
        backoff: { baseMs: 0, maxMs: 0, attempts: 1 },
      });
      drives = await client.listDrives();
    } catch (err) {
      problem = (err as Error).message;
    }
    if (problem !== undefined || !drives.length) {
      this.io.say(problem ? `Cannot list the shared drives: ${problem}` : 'No Shared Drives found in your account');
      this.io.say('Type a Shared Drive ID by hand, or leave blank for none.');
      const id = (await this.io.ask('config_team_drive>', { default: '' })).trim();
      this.setTeamDrive(m, id);
      return;
    }
    this.io.say(
      `Option config_team_drive.\nShared Drive\nChoose a number from below, or type in your own value.\nPress Enter for the default (${drives[0].id}).\n${drives
        .map((d, i) => `${String(i + 1).padStart(2)} / ${d.name}\n   \\ (${d.id})`)
        .join('\n')}`,
    );
    const answer = (await this.io.ask('config_team_drive>', { default: drives[0].id, validate: (v) => (v.trim() ? undefined : 'type a number or a Shared Drive ID') })).trim();
    const byNumber = /^\d+$/.test(answer) && Number(answer) >= 1 && Number(answer) <= drives.length ? drives[Number(answer) - 1] : undefined;
    this.setTeamDrive(m, byNumber?.id ?? answer);
  }

  private setTeamDrive(m: Options, id: string): void {
    m.set('team_drive', id);
    // rclone's teamdrive_final empties root_folder_id: a shared drive is its own root.
    if (id) m.set('root_folder_id', '');
  }

  private async accessToken(m: Options): Promise<string> {
    const endpoints = googleEndpoints({ env: this.ctx.env, remote: Object.fromEntries(m) });
    const saFile = m.get('service_account_file');
    if (saFile) {
      const key = readServiceAccountKey(saFile, this.ctx.env);
      const scope = scopeUrls(m.get('scope') ?? '').join(' ');
      return new ServiceAccountSource(key, serviceAccountTokenUrl(endpoints), { scope, subject: m.get('impersonate') || undefined }).accessToken();
    }
    const tokenText = m.get('token');
    if (!tokenText) throw new Error('the remote has no token');
    const token = parseToken(tokenText);
    const clientId = m.get('client_id');
    if (token.refresh_token && clientId && isExpiring(token)) {
      const fresh = await refreshAccessToken({ clientId, clientSecret: m.get('client_secret') ?? '', authUrl: endpoints.authUrl, tokenUrl: endpoints.tokenUrl }, token.refresh_token);
      // rclone saves a refreshed token into the remote too.
      m.set('token', formatToken(parseToken(JSON.stringify(fresh))));
      return fresh.access_token;
    }
    return token.access_token;
  }

  /** Step 13: show the remote (secrets masked), then keep, edit or delete. */
  private async confirm(name: string): Promise<void> {
    for (let round = 0; round < 1000; round++) {
      const options = findRemote(this.read(), name) ?? {};
      this.io.say(`Configuration complete.\nOptions:\n${Object.entries(options).map(([k, v]) => `- ${k}: ${maskOption(k, v)}`).join('\n')}`);
      this.io.say(`Keep this "${name}" remote?\ny) Yes this is OK (default)\ne) Edit this remote\nd) Delete this remote`);
      const answer = (
        await this.io.ask('y/e/d>', { default: 'y', validate: (v) => (['y', 'e', 'd'].includes(v.trim().toLowerCase()) ? undefined : 'type y, e or d') })
      )
        .trim()
        .toLowerCase();
      if (answer === 'y') return;
      if (answer === 'd') {
        this.deleteRemote(name);
        return;
      }
      await this.editOptions(name);
    }
  }

  private async editExisting(name: string): Promise<void> {
    const remote = findRemote(this.read(), name);
    if (remote?.type !== 'drive') {
      this.io.say(`"${name}" is a ${remote?.type ?? 'typeless'} remote: scanrelay edits only drive remotes. Use "rclone config" for it.`);
      return;
    }
    await this.editOptions(name);
    await this.confirm(name);
  }

  /** rclone's edit: every question again with the current value as default; changed values are written. */
  private async editOptions(name: string): Promise<void> {
    this.io.say(`Editing existing "${name}" remote with options:\n${Object.entries(findRemote(this.read(), name) ?? {}).map(([k, v]) => `- ${k}: ${maskOption(k, v)}`).join('\n')}`);
    const before = new Map(Object.entries(findRemote(this.read(), name) ?? {}));
    const m: Options = new Map(before);
    await this.askOptions(m, true);
    await this.askAuthorization(m, true);
    await this.askSharedDrive(m);
    const changed = [...m].filter(([k, v]) => before.get(k) !== v);
    if (changed.length) writeRcloneConf(this.ctx.confPath, editRemote(this.read().text, name, { set: changed }));
  }

  private deleteRemote(name: string): void {
    writeRcloneConf(this.ctx.confPath, deleteRemote(this.read().text, name));
    this.io.say(`Deleted remote "${name}".`);
  }

  private async renameRemote(name: string, names: string[]): Promise<void> {
    this.io.say(`Enter new name for "${name}" remote.`);
    const to = await this.io.ask('name>', {
      validate: (v) => remoteNameProblem(v) ?? (names.includes(v) ? `remote "${v}" already exists` : undefined),
    });
    writeRcloneConf(this.ctx.confPath, renameRemote(this.read().text, name, to));
    this.io.say(`Renamed remote "${name}" to "${to}".`);
  }
}
