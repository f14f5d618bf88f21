/**
 * Google's endpoints, in one place for the drive monitor and the rclone walkthrough (docs/protocols.md
 * section 6). The defaults are Google's own (the ones rclone's drive backend uses, with its fixed loopback
 * port 53682). Where a value comes from, first that is set wins:
 *   1. a remote's own `auth_url` / `token_url` options (the walkthrough, the rclone-remote token source);
 *   2. the environment: SCANRELAY_OAUTH_AUTH_URL, SCANRELAY_OAUTH_TOKEN_URL, SCANRELAY_DRIVE_API_URL,
 *      SCANRELAY_OAUTH_PORT (tests, proxies, unusual setups);
 *   3. the config's GOOGLE.OAUTH_AUTH_URL, OAUTH_TOKEN_URL and DRIVE_API_URL, when there is a config;
 *   4. the defaults below.
 */
export const GOOGLE_AUTH_URL = 'https://accounts.google.com/o/oauth2/auth';
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const DRIVE_API_URL = 'https://www.googleapis.com/drive/v3/';
export const RCLONE_LOOPBACK_PORT = 53682;

export interface GoogleEndpoints {
  authUrl: string;
  tokenUrl: string;
  /** False when nothing above named a token URL (the default is used): a service account then uses its key's `token_uri`. */
  tokenUrlSet: boolean;
  driveApiUrl: string;
  /** Loopback port for the browser redirect; 0 picks a free one. */
  loopbackPort: number;
}

/** The config keys that name endpoints (the GOOGLE section); the defaults there are the ones above. */
export interface ConfiguredEndpoints {
  OAUTH_AUTH_URL?: string;
  OAUTH_TOKEN_URL?: string;
  DRIVE_API_URL?: string;
}

export function googleEndpoints(sources: { env?: NodeJS.ProcessEnv; configured?: ConfiguredEndpoints; remote?: Readonly<Record<string, string | undefined>> } = {}): GoogleEndpoints {
  const env = sources.env ?? process.env;
  const configured = sources.configured ?? {};
  const remote = sources.remote ?? {};
  const pick = (...values: Array<string | undefined>) => values.find((v) => v !== undefined && v !== '');
  const port = env.SCANRELAY_OAUTH_PORT !== undefined && env.SCANRELAY_OAUTH_PORT !== '' ? Number(env.SCANRELAY_OAUTH_PORT) : RCLONE_LOOPBACK_PORT;
  // A config always holds a token URL (its schema's default); only one that differs from it was chosen.
  const tokenUrl = pick(remote.token_url, env.SCANRELAY_OAUTH_TOKEN_URL, configured.OAUTH_TOKEN_URL === GOOGLE_TOKEN_URL ? undefined : configured.OAUTH_TOKEN_URL);
  return {
    authUrl: pick(remote.auth_url, env.SCANRELAY_OAUTH_AUTH_URL, configured.OAUTH_AUTH_URL) ?? GOOGLE_AUTH_URL,
    tokenUrl: tokenUrl ?? GOOGLE_TOKEN_URL,
    tokenUrlSet: tokenUrl !== undefined,
    driveApiUrl: pick(env.SCANRELAY_DRIVE_API_URL, configured.DRIVE_API_URL) ?? DRIVE_API_URL,
    loopbackPort: Number.isInteger(port) && port >= 0 && port < 65536 ? port : RCLONE_LOOPBACK_PORT,
  };
}

/** The token URL a service account uses: the one chosen above, else undefined (its key's own `token_uri`). */
export function serviceAccountTokenUrl(endpoints: GoogleEndpoints): string | undefined {
  return endpoints.tokenUrlSet ? endpoints.tokenUrl : undefined;
}
