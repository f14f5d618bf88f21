import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { UserError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { isExpiring, refreshAccessToken, type OAuthToken } from './oauth.ts';
import type { AccessTokenSource } from './drive-client.ts';
import { findRemote, readRcloneConf } from './rclone-conf.ts';
import { resolveRcloneConfPath } from './rclone-path.ts';
import { parseToken } from './rclone-token.ts';
import { expandPath } from '../paths/expand.ts';
import { serviceAccountTokenUrl, type GoogleEndpoints } from './endpoints.ts';
import { ServiceAccountSource, parseServiceAccountKey, readServiceAccountKey } from './service-account.ts';
import { readTokenFile, writeTokenFile } from './token-file.ts';

const execFileAsync = promisify(execFile);

/** rclone's own lookup: RCLONE.CONFIG, then $RCLONE_CONFIG, `rclone config file`, and rclone's search order. */
export function locateRcloneConf(opts: { configured?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const env = opts.env ?? process.env;
  if (opts.configured) return expandPath(opts.configured, env);
  return resolveRcloneConfPath(undefined, env).path;
}

/** The drive remote's options from rclone.conf (read only: the monitor never writes the user's file). */
export function readRemote(confPath: string, remote: string): Record<string, string> {
  let section: Record<string, string> | undefined;
  try {
    const conf = readRcloneConf(confPath);
    if (!conf.exists) throw new Error('the file does not exist');
    section = findRemote(conf, remote);
  } catch (err) {
    throw new UserError(`GOOGLE.RCLONE_REMOTE: cannot read rclone config ${confPath}: ${(err as Error).message}`);
  }
  if (!section) throw new UserError(`GOOGLE.RCLONE_REMOTE: no remote [${remote}] in ${confPath}`);
  if (section.type !== 'drive') throw new UserError(`GOOGLE.RCLONE_REMOTE: remote ${remote} in ${confPath} is of type "${section.type ?? ''}", not "drive"`);
  return section;
}

/** rclone stores the Go oauth2.Token as one JSON line: access_token, token_type, refresh_token, expiry. */
function tokenOfRemote(section: Record<string, string>, remote: string, confPath: string): OAuthToken {
  try {
    return parseToken(section.token ?? '');
  } catch {
    throw new UserError(`GOOGLE.RCLONE_REMOTE: remote ${remote} in ${confPath} has no usable token: finish "rclone config" for it first`);
  }
}

/** A token in scanrelay's cache, tagged with the remote it belongs to. */
type RemoteToken = OAuthToken & { rclone_remote?: string };

export interface RcloneRemoteOptions {
  remote: string;
  configPath?: string;
  binary?: string;
  /** scanrelay's own token cache, for remotes with their own client. */
  tokenfile: string;
  /** The monitor's endpoints; the remote's own auth_url / token_url win over them. */
  endpoints: GoogleEndpoints;
  log?: Logger;
}

/**
 * Credentials of an rclone drive remote. A remote with its own client_id is refreshed by scanrelay
 * (result kept in scanrelay's token file; rclone.conf is never written). A blank client_id means a
 * token of rclone's built-in client, which only rclone can refresh: rclone is run (`rclone about`)
 * and the token read again. Service account remotes use the JWT grant.
 */
export class RcloneRemoteSource implements AccessTokenSource {
  readonly description: string;
  readonly remote: string;
  private readonly confPath: string;
  private delegate: AccessTokenSource | undefined;
  private token: RemoteToken | undefined;

  constructor(private readonly opts: RcloneRemoteOptions) {
    this.remote = opts.remote.replace(/:$/, '');
    this.confPath = locateRcloneConf({ configured: opts.configPath });
    this.description = `rclone remote ${this.remote}: (${this.confPath})`;
    const section = readRemote(this.confPath, this.remote);
    const tokenUrl = section.token_url || serviceAccountTokenUrl(opts.endpoints);
    if (section.service_account_credentials) {
      this.delegate = new ServiceAccountSource(parseServiceAccountKey(section.service_account_credentials, `service_account_credentials of ${this.remote}`), tokenUrl);
    } else if (section.service_account_file) {
      this.delegate = new ServiceAccountSource(readServiceAccountKey(section.service_account_file), tokenUrl);
    }
  }

  async accessToken(forceRefresh = false): Promise<string> {
    if (this.delegate) return this.delegate.accessToken(forceRefresh);
    const section = readRemote(this.confPath, this.remote);
    const clientId = section.client_id ?? '';
    if (clientId) {
      // Own client: scanrelay's cache holds the newest token for this remote; rclone.conf seeds it.
      // The cache is used while it belongs to this remote and to the refresh token rclone.conf holds now
      // (a re-authorized remote gets a new refresh token, and then rclone.conf wins again).
      const seed = tokenOfRemote(section, this.remote, this.confPath);
      const usable = (t: RemoteToken | undefined): t is RemoteToken => !!t && t.rclone_remote === this.remote && t.refresh_token === seed.refresh_token;
      if (!usable(this.token)) {
        const cached = readTokenFile(this.opts.tokenfile) as RemoteToken | undefined;
        this.token = usable(cached) ? cached : seed;
      }
      if (forceRefresh || isExpiring(this.token)) {
        if (!this.token.refresh_token) throw new UserError(`the token of rclone remote ${this.remote} has no refresh_token`);
        const client = {
          clientId,
          clientSecret: section.client_secret ?? '',
          tokenUrl: section.token_url || this.opts.endpoints.tokenUrl,
          authUrl: section.auth_url || this.opts.endpoints.authUrl,
        };
        const fresh = await refreshAccessToken(client, this.token.refresh_token);
        this.token = { ...fresh, rclone_remote: this.remote };
        writeTokenFile(this.opts.tokenfile, this.token);
        this.opts.log?.info({ remote: this.remote }, `renewed the access token of rclone remote ${this.remote}: (kept in ${this.opts.tokenfile})`);
      }
      return this.token.access_token;
    }
    let token = tokenOfRemote(section, this.remote, this.confPath);
    if (forceRefresh || isExpiring(token)) {
      await this.letRcloneRefresh();
      token = tokenOfRemote(readRemote(this.confPath, this.remote), this.remote, this.confPath);
      if (isExpiring(token, 0)) throw new UserError(`rclone did not renew the token of remote ${this.remote}: (expiry ${token.expiry}); run "rclone about ${this.remote}:" to see why`);
    }
    return token.access_token;
  }

  private async letRcloneRefresh(): Promise<void> {
    const binary = this.opts.binary ?? 'rclone';
    this.opts.log?.info({ remote: this.remote }, `asking rclone to renew the token of ${this.remote}: (blank client_id: rclone's own client)`);
    try {
      await execFileAsync(binary, ['about', `${this.remote}:`, '--config', this.confPath], { timeout: 120_000 });
    } catch (err) {
      const e = err as NodeJS.ErrnoException & { stderr?: string };
      if (e.code === 'ENOENT') {
        throw new UserError(
          `rclone remote ${this.remote}: has a blank client_id, so its token can only be renewed by rclone, and "${binary}" is not installed; install rclone or give the remote its own client_id/client_secret`,
        );
      }
      throw new UserError(`"${binary} about ${this.remote}:" failed while renewing the token: ${(e.stderr ?? e.message).trim().split('\n').pop()}`);
    }
  }
}
