import type { Command } from 'commander';
import { authorizeRclone } from './authorize-rclone.ts';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { UserError } from '../core/errors.ts';
import type { Config } from '../config/schema.ts';
import { oauthClientOf } from '../google/auth.ts';
import { writeTokenFile } from '../google/token-file.ts';
import type { Logger } from '../core/logger.ts';
import {
  DRIVE_SCOPE,
  OAuthError,
  OOB_REDIRECT,
  authorizationUrl,
  codeFromPaste,
  exchangeCode,
  startLoopbackReceiver,
  withExpiry,
  type LoopbackReceiver,
} from '../google/oauth.ts';
import { action, loadExistingConfig, loggerFor, settingsOf } from './context.ts';

export const CODE_PROMPT = 'Enter authorization code: ';

export interface DriveAuthorizeOptions {
  config: Config;
  tokenfile: string;
  log: Logger;
  /** The spec's out-of-band flow (urn:ietf:wg:oauth:2.0:oob), for clients still in "Testing". */
  oob: boolean;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

/**
 * `scanrelay authorize` with no positional argument: authorizes drive monitoring (GOOGLE section).
 * Exported as the hook the CLI dispatches to; other authorize forms (an rclone-style
 * `authorize drive "<blob>"`) are dispatched elsewhere.
 */
export async function authorizeDriveMonitor(opts: DriveAuthorizeOptions): Promise<void> {
  const { config, log } = opts;
  const output = opts.output ?? process.stdout;
  const driveLog = log.child({ component: 'drive' });
  const scanLog = log.child({ component: 'scan' });
  // plex_autoscan refuses too: the token is only useful to a monitor that is switched on.
  if (!config.GOOGLE.ENABLED) throw new UserError('GOOGLE.ENABLED is false: enable the GOOGLE (or CLOUD) section in the config first', 1);
  if (!config.GOOGLE.CLIENT_ID) throw new UserError('GOOGLE.CLIENT_ID is empty: fill in CLIENT_ID and CLIENT_SECRET of a "Desktop app" OAuth client first (see docs/drive.md)', 1);
  const client = oauthClientOf(config.GOOGLE);
  const other = config.GOOGLE.SERVICE_ACCOUNT_FILE ? 'SERVICE_ACCOUNT_FILE' : config.GOOGLE.RCLONE_REMOTE ? 'RCLONE_REMOTE' : undefined;
  if (other) driveLog.warn(`GOOGLE.${other} is set: drive monitoring uses it, not the token this command saves`);

  let receiver: LoopbackReceiver | undefined;
  let redirectUri = OOB_REDIRECT;
  let url: string;
  if (opts.oob) {
    url = authorizationUrl(client, { redirectUri, scope: DRIVE_SCOPE, prompt: null });
  } else {
    const state = randomBytes(12).toString('hex');
    receiver = await startLoopbackReceiver({ state });
    redirectUri = receiver.redirectUri;
    url = authorizationUrl(client, { redirectUri, scope: DRIVE_SCOPE, state, prompt: 'consent' });
  }

  const lines = createInterface({ input: opts.input ?? process.stdin, terminal: false });
  try {
    output.write('Visit the link below and paste the authorization code:\n\n');
    output.write(`${url}\n\n`);
    if (!opts.oob) {
      output.write('Open it in a browser on this machine and scanrelay finishes by itself. On a machine without a browser,\n');
      output.write('open it elsewhere and paste the code, or the whole address the browser ended on (http://127.0.0.1:...).\n');
    }
    output.write(CODE_PROMPT);
    const code = await firstCode(lines, receiver, opts.oob);
    output.write('\n');
    driveLog.info('Requesting access token for auth code');
    let token;
    try {
      token = await exchangeCode(client, code, redirectUri);
    } catch (err) {
      if (err instanceof OAuthError) throw new UserError(`authorization failed, ${opts.tokenfile} left as it was: ${err.message}`, 1);
      throw err;
    }
    driveLog.info('Retrieved first access token');
    writeTokenFile(opts.tokenfile, withExpiry(token));
    scanLog.info({ tokenfile: opts.tokenfile }, `Access tokens were successfully retrieved and saved to ${opts.tokenfile}`);
    output.write(`Authorized. Restart the relay ("scanrelay server") so drive monitoring starts with the new token.\n`);
  } finally {
    lines.close();
    await receiver?.close();
  }
}

/** The code from the loopback redirect or from a pasted line, whichever comes first. */
function firstCode(lines: ReturnType<typeof createInterface>, receiver: LoopbackReceiver | undefined, oob: boolean): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      fn();
    };
    lines.on('line', (line) => {
      if (!line.trim()) return;
      finish(() => {
        try {
          resolve(codeFromPaste(line));
        } catch (err) {
          reject(new UserError(`${(err as Error).message}`, 1));
        }
      });
    });
    lines.on('close', () => {
      // Without a browser redirect to wait for, the end of input means no code will come.
      if (oob || !receiver) finish(() => reject(new UserError('no authorization code was entered', 1)));
    });
    receiver?.code.then(
      (code) => finish(() => resolve(code)),
      (err: Error) => finish(() => reject(new UserError(err.message, 1))),
    );
  });
}

export function registerAuthorize(program: Command): void {
  program
    .command('authorize')
    // The list of commands shows the summary on one line; the command's own help has the whole description.
    .summary('authorize drive monitoring (saves an OAuth token to --tokenfile), or with "drive <blob>" finish a headless rclone remote setup')
    .description(
      'authorize drive monitoring (GOOGLE section): saves an OAuth token to --tokenfile. ' +
        'With "drive <blob>": the browser-machine half of a headless rclone remote setup (prints the token to paste)',
    )
    .argument('[backend]', 'only for a remote setup: "drive"')
    .argument('[blob]', 'only for a remote setup: the blob printed by "scanrelay remote" or "rclone config"')
    .option('--oob', 'use the out-of-band flow (urn:ietf:wg:oauth:2.0:oob); Google allows it only for clients in "Testing"')
    .action(
      action(async (backend: string | undefined, blob: string | undefined, opts: { oob?: boolean }, cmd: Command) => {
        if (backend !== undefined) return authorizeRclone(backend, blob);
        const settings = settingsOf(cmd);
        const { config } = loadExistingConfig(settings);
        await authorizeDriveMonitor({ config, tokenfile: settings.tokenfile, log: await loggerFor(settings), oob: opts.oob === true });
      }),
    );
}
