import { execFile } from 'node:child_process';

/**
 * Decoding drive paths that lie in an rclone crypt remote (RCLONE.CRYPT_MAPPINGS), with the real
 * rclone: `rclone [--config FILE] cryptdecode -- <remote:> <name>...`. Drive only knows the encrypted
 * names; the filters, SERVER_PATH_MAPPINGS and the media server need the clear ones.
 *
 * CRYPT_MAPPINGS maps a drive folder (the crypt remote's root as a drive path, e.g. "My Drive/crypt/")
 * to the crypt remotes that may decode what lies below it, tried in order.
 */
export type CryptMappings = Record<string, string[]>;

/** A path's decoded form, or why it has none. */
export type Decoded = { path: string } | { failed: string };

export interface CryptDecoderOptions {
  binary: string;
  /** RCLONE.CONFIG; empty lets rclone find its own config file. */
  configFile: string;
  mappings: CryptMappings;
  timeoutMs?: number;
}

/** rclone's answer for one name it cannot decrypt (cmd/cryptdecode). */
const FAILED = 'Failed to decrypt';
/**
 * Bounds on one rclone run. rclone 1.60's cryptdecode takes at most 10 names (its arguments are
 * checked as 2 to 11 with the remote), so a page of 1,000 changes is at most 100 short runs, a few at
 * a time, instead of 1,000.
 */
export const MAX_NAMES = 10;
const MAX_ARG_CHARS = 64 * 1024;
const PARALLEL_RUNS = 4;

/** A whole rclone run failed (missing binary, unknown remote, timeout): no name of it was decided. */
export class CryptDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CryptDecodeError';
  }
}

/** The mappings whose drive folder starts `path` (case-insensitively, as plex_autoscan compares), in config order. */
export function cryptFoldersOf(path: string, mappings: CryptMappings): string[] {
  const lower = path.toLowerCase();
  return Object.keys(mappings).filter((folder) => folder && lower.startsWith(folder.toLowerCase()));
}

/** Splits a path below a crypt folder into the folder and the encrypted rest rclone is given. */
export function splitCryptPath(path: string, folder: string): { folder: string; rest: string } {
  return { folder, rest: path.slice(folder.length).replace(/^\/+/, '') };
}

/** The clear path: the drive folder joined with the decoded rest by exactly one "/". */
export function joinDecoded(folder: string, decoded: string): string {
  return folder.endsWith('/') ? `${folder}${decoded}` : `${folder}/${decoded}`;
}

/**
 * Reads cryptdecode's output: one `<name> \t <decoded>` line per name, in the order given (rclone
 * 1.60's cmd/cryptdecode). Each entry is the decoded name, or undefined when rclone could not decrypt
 * it or its line is missing. Reading name by name keeps a decoded name's own odd characters harmless.
 */
export function parseCryptdecode(stdout: string, names: readonly string[]): Array<string | undefined> {
  const out: Array<string | undefined> = [];
  let pos = 0;
  for (let i = 0; i < names.length; i++) {
    const head = `${names[i]} \t `;
    if (pos < 0 || !stdout.startsWith(head, pos)) {
      out.push(undefined);
      pos = -1;
      continue;
    }
    pos += head.length;
    const next = i + 1 < names.length ? stdout.indexOf(`\n${names[i + 1]} \t `, pos) : stdout.endsWith('\n') ? stdout.length - 1 : stdout.length;
    const end = next < 0 ? stdout.indexOf('\n', pos) : next;
    const value = stdout.slice(pos, end < 0 ? stdout.length : end);
    out.push(value === FAILED || value === '' ? undefined : value);
    pos = next < 0 ? -1 : next + 1;
  }
  return out;
}

/** Groups names into argument lists small enough for one process each. */
export function batches(names: readonly string[], maxNames = MAX_NAMES, maxChars = MAX_ARG_CHARS): string[][] {
  const out: string[][] = [];
  let cur: string[] = [];
  let chars = 0;
  for (const n of names) {
    if (cur.length && (cur.length >= maxNames || chars + n.length + 1 > maxChars)) {
      out.push(cur);
      cur = [];
      chars = 0;
    }
    cur.push(n);
    chars += n.length + 1;
  }
  if (cur.length) out.push(cur);
  return out;
}

export class CryptDecoder {
  private readonly timeoutMs: number;

  constructor(private readonly opts: CryptDecoderOptions) {
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  get active(): boolean {
    return Object.keys(this.opts.mappings).length > 0;
  }

  /**
   * Decodes every path that lies below a CRYPT_MAPPINGS folder; other paths are returned as they are.
   * A name no mapped remote decrypts gets `failed` (the caller logs and skips it). A run that fails as
   * a whole throws CryptDecodeError, so the caller can retry later instead of dropping the names.
   */
  async decode(paths: readonly string[]): Promise<Map<string, Decoded>> {
    const result = new Map<string, Decoded>();
    // Each path's remaining (folder, remote) candidates, tried one round at a time.
    const pending = new Map<string, Array<{ folder: string; remote: string }>>();
    for (const path of new Set(paths)) {
      const candidates = cryptFoldersOf(path, this.opts.mappings).flatMap((folder) => (this.opts.mappings[folder] ?? []).map((remote) => ({ folder, remote })));
      if (!candidates.length) result.set(path, { path });
      else pending.set(path, candidates);
    }
    // Bounded: each round consumes one candidate of every pending path.
    while (pending.size) {
      const byRemote = new Map<string, Array<{ path: string; folder: string; rest: string }>>();
      for (const [path, candidates] of pending) {
        const { folder, remote } = candidates.shift()!;
        const { rest } = splitCryptPath(path, folder);
        if (!rest) {
          // The crypt folder itself: nothing encrypted to decode.
          result.set(path, { path });
          pending.delete(path);
          continue;
        }
        const list = byRemote.get(remote) ?? [];
        list.push({ path, folder, rest });
        byRemote.set(remote, list);
      }
      for (const [remote, items] of byRemote) {
        const decoded = await this.run(remote, [...new Set(items.map((i) => i.rest))]);
        for (const item of items) {
          const clear = decoded.get(item.rest);
          if (clear !== undefined) {
            result.set(item.path, { path: joinDecoded(item.folder, clear) });
            pending.delete(item.path);
          } else if (!pending.get(item.path)?.length) {
            result.set(item.path, { failed: `rclone cryptdecode ${remote} could not decrypt "${item.rest}"` });
            pending.delete(item.path);
          }
        }
      }
    }
    return result;
  }

  /** Decodes names with one remote, in as few rclone runs as the argument bounds allow. */
  private async run(remote: string, names: string[]): Promise<Map<string, string | undefined>> {
    const out = new Map<string, string | undefined>();
    const queue = batches(names);
    const worker = async () => {
      // Bounded: each worker takes batches off a finite list.
      for (let batch = queue.shift(); batch; batch = queue.shift()) {
        const decoded = parseCryptdecode(await this.exec(remote, batch), batch);
        batch.forEach((n, i) => out.set(n, decoded[i]));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_RUNS, queue.length) }, worker));
    return out;
  }

  private exec(remote: string, names: string[]): Promise<string> {
    const args = [...(this.opts.configFile ? ['--config', this.opts.configFile] : []), 'cryptdecode', '--', remote, ...names];
    return new Promise((resolve, reject) => {
      execFile(this.opts.binary, args, { timeout: this.timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const e = err as NodeJS.ErrnoException & { killed?: boolean };
        const why =
          e.code === 'ENOENT'
            ? `${this.opts.binary} not found (RCLONE.BINARY, or rclone on PATH)`
            : e.killed
              ? `no answer within ${Math.round(this.timeoutMs / 1000)} s`
              : lastLine(stderr) || e.message;
        reject(new CryptDecodeError(`rclone cryptdecode ${remote} failed: ${why}`));
      });
    });
  }
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines[lines.length - 1] ?? '').trim();
}
