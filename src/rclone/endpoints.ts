import { DEFAULT_DRIVE_API_URL } from './drive-api.ts';

/**
 * Google endpoints rclone's drive backend uses (golang.org/x/oauth2/google Endpoint) and its fixed loopback
 * port 53682 (redirect http://127.0.0.1:53682/). Overridable through the environment so tests and
 * unusual setups can point elsewhere; a remote's own auth_url/token_url options win over both.
 */
export interface GoogleEndpoints {
  authUrl: string;
  tokenUrl: string;
  driveApiUrl: string;
  /** Loopback port for the browser redirect; 0 picks a free one. */
  loopbackPort: number;
}

export const RCLONE_LOOPBACK_PORT = 53682;

export function googleEndpoints(env: NodeJS.ProcessEnv = process.env, remote: Record<string, string> = {}): GoogleEndpoints {
  const port = env.SCANRELAY_OAUTH_PORT !== undefined && env.SCANRELAY_OAUTH_PORT !== '' ? Number(env.SCANRELAY_OAUTH_PORT) : RCLONE_LOOPBACK_PORT;
  return {
    authUrl: remote.auth_url || env.SCANRELAY_OAUTH_AUTH_URL || 'https://accounts.google.com/o/oauth2/auth',
    tokenUrl: remote.token_url || env.SCANRELAY_OAUTH_TOKEN_URL || 'https://oauth2.googleapis.com/token',
    driveApiUrl: env.SCANRELAY_DRIVE_API_URL || DEFAULT_DRIVE_API_URL,
    loopbackPort: Number.isInteger(port) && port >= 0 && port < 65536 ? port : RCLONE_LOOPBACK_PORT,
  };
}
