import { z } from 'zod';
import { posix } from 'node:path';
import type { RcloneConfig } from '../../config/schema.ts';
import type { Logger } from '../../core/logger.ts';
import { mapPath } from '../../paths/mapping.ts';
import { httpRequest } from '../http.ts';

/**
 * What rclone's remote control answers (docs/protocols.md section 7): cache/expire `{"status": "ok", "message"}`,
 * vfs/refresh `{"result": {"<dir>": "OK" | reason}}`, and every error `{"error", "input", "path", "status"}`.
 */
const rcAnswer = z.looseObject({
  status: z.union([z.string(), z.number()]).optional(),
  error: z.string().optional(),
  result: z.record(z.string(), z.string()).optional(),
});
type RcAnswer = z.infer<typeof rcAnswer>;

/**
 * rclone's remote control, to make a mount see a new file before the next file check
 * (RCLONE.RC_CACHE_REFRESH). Like plex_autoscan's rclone_rc_clear_cache: map the local path to the remote
 * (FILE_EXISTS_TO_REMOTE_MAPPINGS), start at its folder, try `cache/expire` (cache remotes) and then
 * `vfs/refresh`, and walk up one folder while rclone answers that the folder does not exist.
 */
export class RcloneRc {
  private readonly base: URL;
  private readonly auth: string | undefined;

  constructor(
    private readonly settings: RcloneConfig['RC_CACHE_REFRESH'],
    private readonly log: Logger,
  ) {
    const url = new URL(settings.RC_URL.endsWith('/') ? settings.RC_URL : `${settings.RC_URL}/`);
    // fetch refuses URLs with credentials: send them as basic auth (rclone's --rc-user/--rc-pass).
    this.auth = url.username ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}` : undefined;
    url.username = '';
    url.password = '';
    this.base = url;
  }

  /** Returns the remote folder rclone refreshed, or undefined when none could be. Never throws. */
  async refreshFor(localPath: string): Promise<string | undefined> {
    const remote = mapPath(this.settings.FILE_EXISTS_TO_REMOTE_MAPPINGS, localPath).path.replace(/\\/g, '/').replace(/^\/+/, '');
    let dir = remote;
    for (let level = 0; level < 64; level++) {
      const up = posix.dirname(dir);
      if (up === dir || up === '.' || up === '') {
        this.log.warn({ path: localPath, last: dir }, 'rclone cache refresh: no folder level left to refresh (RCLONE.RC_CACHE_REFRESH)');
        return undefined;
      }
      dir = up;
      try {
        const expire = await this.post('cache/expire', { remote: dir });
        if (expire?.status === 'ok') {
          this.log.info({ dir }, 'rclone cache remote cleared its folder cache (RCLONE.RC_CACHE_REFRESH)');
          return dir;
        }
        if (!expire || expire.error === undefined) {
          this.log.error({ dir, answer: expire }, 'rclone cache refresh: unexpected answer from cache/expire; giving up');
          return undefined;
        }
        const refresh = await this.post('vfs/refresh', { dir });
        if (refresh?.result?.[dir] === 'OK') {
          this.log.info({ dir }, 'rclone refreshed the mount folder (RCLONE.RC_CACHE_REFRESH vfs/refresh)');
          return dir;
        }
        if (refresh === undefined) {
          this.log.error({ dir }, 'rclone cache refresh: vfs/refresh answer is not JSON; giving up');
          return undefined;
        }
        this.log.info({ dir, answer: refresh?.result?.[dir] ?? refresh?.error }, 'rclone could not refresh the folder; trying its parent');
      } catch (err) {
        this.log.error({ dir, err: (err as Error).message }, 'rclone cache refresh failed (RCLONE.RC_CACHE_REFRESH); the file check goes on');
        return undefined;
      }
    }
    return undefined;
  }

  /** POST with JSON params; the parsed answer (rclone answers errors as JSON too), or undefined if it is not rclone's JSON. */
  private async post(command: string, params: Record<string, string>): Promise<RcAnswer | undefined> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.auth) headers.authorization = this.auth;
    const res = await httpRequest({ method: 'POST', url: new URL(command, this.base).toString(), headers, body: JSON.stringify(params), timeoutMs: 120_000 }, `rclone rc ${command}`);
    let json: unknown;
    try {
      json = JSON.parse(res.text);
    } catch {
      return undefined;
    }
    const answer = rcAnswer.safeParse(json);
    return answer.success ? answer.data : undefined;
  }
}
