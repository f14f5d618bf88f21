import { UserError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { isExpiring, refreshAccessToken, type OAuthClient, type OAuthToken } from './oauth.ts';
import type { AccessTokenSource } from './drive-client.ts';
import { RcloneRemoteSource } from './rclone-remote.ts';
import { googleEndpoints, serviceAccountTokenUrl, type ConfiguredEndpoints, type GoogleEndpoints } from './endpoints.ts';
import { ServiceAccountSource, readServiceAccountKey } from './service-account.ts';
import { readTokenFile, writeTokenFile } from './token-file.ts';

/**
 * What signing in to Google reads of the config's GOOGLE section (config/schema.ts driveSchema): the section is
 * handed down as it is, and this folder names only the keys it uses, so it needs nothing from config/.
 */
export interface GoogleSignIn extends ConfiguredEndpoints {
  CLIENT_ID: string;
  CLIENT_SECRET: string;
  SERVICE_ACCOUNT_FILE: string;
  RCLONE_REMOTE: string;
}

/** The endpoints the drive monitor uses: the GOOGLE section's, unless the environment overrides them (endpoints.ts). */
export function driveMonitorEndpoints(config: GoogleSignIn, env: NodeJS.ProcessEnv = process.env): GoogleEndpoints {
  return googleEndpoints({ env, configured: config });
}

/** The OAuth client from the GOOGLE section. */
export function oauthClientOf(config: GoogleSignIn, endpoints = driveMonitorEndpoints(config)): OAuthClient {
  return {
    clientId: config.CLIENT_ID,
    clientSecret: config.CLIENT_SECRET,
    authUrl: endpoints.authUrl,
    tokenUrl: endpoints.tokenUrl,
  };
}

/**
 * Tokens from `scanrelay authorize`, kept in `--tokenfile` and refreshed with the GOOGLE client when
 * they are about to expire. Concurrent callers share one refresh.
 */
export class TokenFileSource implements AccessTokenSource {
  readonly description: string;
  private token: OAuthToken | undefined;
  private refreshing: Promise<OAuthToken> | undefined;

  constructor(
    private readonly file: string,
    private readonly client: OAuthClient,
    private readonly log?: Logger,
  ) {
    this.description = `token file ${file}`;
  }

  async accessToken(forceRefresh = false): Promise<string> {
    this.token ??= readTokenFile(this.file);
    if (!this.token) throw new UserError(`no drive token in ${this.file}: run "scanrelay authorize" first (same --config and --tokenfile)`);
    if (forceRefresh || isExpiring(this.token)) this.token = await this.refresh(this.token);
    return this.token.access_token;
  }

  private refresh(current: OAuthToken): Promise<OAuthToken> {
    this.refreshing ??= (async () => {
      try {
        if (!current.refresh_token) throw new UserError(`the token in ${this.file} has no refresh_token: run "scanrelay authorize" again`);
        if (!this.client.clientId) throw new UserError('GOOGLE.CLIENT_ID is empty: cannot refresh the drive token');
        const fresh = await refreshAccessToken(this.client, current.refresh_token);
        writeTokenFile(this.file, fresh);
        this.log?.info({ tokenfile: this.file }, 'renewed the drive access token');
        return fresh;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }
}

/** Picks how to authenticate: SERVICE_ACCOUNT_FILE, then RCLONE_REMOTE, then the token file. */
export function tokenSourceFor(
  config: GoogleSignIn,
  opts: { tokenfile: string; rcloneConfigPath?: string; rcloneBinary?: string; log?: Logger },
  endpoints = driveMonitorEndpoints(config),
): AccessTokenSource {
  if (config.SERVICE_ACCOUNT_FILE) {
    return new ServiceAccountSource(readServiceAccountKey(config.SERVICE_ACCOUNT_FILE), serviceAccountTokenUrl(endpoints));
  }
  if (config.RCLONE_REMOTE) {
    return new RcloneRemoteSource({
      remote: config.RCLONE_REMOTE,
      configPath: opts.rcloneConfigPath,
      binary: opts.rcloneBinary,
      tokenfile: opts.tokenfile,
      endpoints,
      log: opts.log,
    });
  }
  return new TokenFileSource(opts.tokenfile, oauthClientOf(config, endpoints), opts.log);
}
