import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { tempDir } from '../helpers/relay.ts';

/*
 * A fake Plex Media Scanner with fake `docker` and `sudo` in front of it. The wrappers record their argv,
 * then run the `bash -c` payload for real in a cleared environment, as a container or sudo's env_reset
 * would: docker's has the container's own PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR (linuxserver/plex sets
 * it), sudo's has none. The scanner records its argv and environment (NUL-terminated, so any byte but
 * NUL survives), prints `--list` lines like the real one, and can be told to fail or hang.
 */

export const CONTAINER_SUPPORT_DIR = '/config/Library/Application Support';

const RECORD = `record() { local kind="$1"; shift; local n; n=$(find "$ROOT/calls" -name "$kind-*" | wc -l); printf '%s\\0' "$@" > "$ROOT/calls/$kind-$(printf %04d "$n")"; }`;

const DOCKER = `#!/usr/bin/env bash
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
${RECORD}
record wrapper docker "$@"
[ "$1" = exec ] || { echo "fake docker: only exec is supported" >&2; exit 125; }
shift
user=root
while [ $# -gt 0 ]; do
  case "$1" in
    -u) user="$2"; shift 2 ;;
    -i|-t|-it) shift ;;
    -*) echo "unknown flag: $1" >&2; exit 125 ;;
    *) break ;;
  esac
done
container="$1"; shift
if [ "$container" != "$(cat "$ROOT/container")" ]; then
  echo "Error response from daemon: No such container: $container" >&2; exit 1
fi
exec env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/config PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR="${CONTAINER_SUPPORT_DIR}" \\
  FAKE_USER="$user" FAKE_CONTAINER="$container" FAKE_ROOT="$ROOT" "$@"
`;

const SUDO = `#!/usr/bin/env bash
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
${RECORD}
record wrapper sudo "$@"
[ "$1" = -u ] || { echo "fake sudo: expected -u <user>" >&2; exit 1; }
user="$2"; shift 2
exec env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/home/"$user" USER="$user" FAKE_USER="$user" FAKE_ROOT="$ROOT" "$@"
`;

const SCANNER = `#!/usr/bin/env bash
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
${RECORD}
record scanner "$@"
n=$(find "$ROOT/calls" -name "scanner-*" | wc -l)
for v in LD_LIBRARY_PATH PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR FAKE_USER FAKE_CONTAINER; do
  if [ -n "\${!v+set}" ]; then printf '%s=%s\\0' "$v" "\${!v}"; fi
done > "$ROOT/calls/env-$(printf %04d "$((n - 1))")"
if [ -f "$ROOT/running" ]; then : > "$ROOT/overlap"; fi
: > "$ROOT/running"
trap 'rm -f "$ROOT/running"' EXIT
if [ -f "$ROOT/hang" ]; then sleep 60; fi
if [ -f "$ROOT/slow" ]; then sleep 0.3; fi
left=$(cat "$ROOT/fail-count" 2>/dev/null || echo 0)
if [ "$left" -gt 0 ]; then
  echo "$((left - 1))" > "$ROOT/fail-count"
  echo "Plex Media Scanner: database is locked" >&2
  exit "$(cat "$ROOT/fail-status" 2>/dev/null || echo 3)"
fi
case "$1" in
  --list) cat "$ROOT/sections.txt" ;;
  --scan) echo "The '--scan' operation is deprecated and will be removed in future versions of Plex Media Server." >&2 ;;
esac
exit 0
`;

export interface ScannerCall {
  argv: string[];
  env: Record<string, string>;
}

export class FakeScanner {
  readonly binDir: string;
  /** The scanner's real path: a folder name with a space, as Plex's own ("Plex Media Scanner"). */
  readonly scannerPath: string;
  private readonly basePath = process.env.PATH ?? '';

  constructor(readonly root: string = tempDir('scanrelay-scanner-')) {
    this.binDir = join(root, 'bin');
    const scannerDir = join(root, 'plex bin');
    this.scannerPath = join(scannerDir, 'Plex Media Scanner');
    for (const d of [this.binDir, scannerDir, join(root, 'calls')]) mkdirSync(d, { recursive: true });
    const write = (path: string, text: string) => {
      writeFileSync(path, text);
      chmodSync(path, 0o755);
    };
    write(join(this.binDir, 'docker'), DOCKER);
    write(join(this.binDir, 'sudo'), SUDO);
    write(this.scannerPath, SCANNER);
    this.setContainer('plex');
    this.setSections(['  1: Movies', '  2: TV Shows']);
  }

  /** PLEX_SCANNER as plex_autoscan's configs write it: spaces escaped with backslashes. */
  get escapedScanner(): string {
    return this.scannerPath.replace(/ /g, '\\ ');
  }

  /** An environment with the fake docker and sudo first on PATH (before the PATH this fake was made under). */
  env(): NodeJS.ProcessEnv {
    return { PATH: `${this.binDir}${delimiter}${this.basePath}` };
  }

  setContainer(name: string): void {
    writeFileSync(join(this.root, 'container'), name);
  }

  setSections(lines: string[]): void {
    writeFileSync(join(this.root, 'sections.txt'), lines.map((l) => `${l}\n`).join(''));
  }

  /** The next `count` scanner runs exit with `status` and a line on stderr. */
  failNext(count: number, status = 3): void {
    writeFileSync(join(this.root, 'fail-count'), String(count));
    writeFileSync(join(this.root, 'fail-status'), String(status));
  }

  setHang(on: boolean): void {
    const path = join(this.root, 'hang');
    if (on) writeFileSync(path, '');
    else rmSync(path, { force: true });
  }

  /** Each run takes a moment, so runs that overlap would be seen. */
  setSlow(on: boolean): void {
    const path = join(this.root, 'slow');
    if (on) writeFileSync(path, '');
    else rmSync(path, { force: true });
  }

  /** Whether a scanner run ever started while another was running. */
  sawOverlap(): boolean {
    return existsSync(join(this.root, 'overlap'));
  }

  private records(kind: string): string[][] {
    return readdirSync(join(this.root, 'calls'))
      .filter((f) => f.startsWith(`${kind}-`))
      .sort()
      .map((f) => splitNul(readFileSync(join(this.root, 'calls', f), 'utf8')));
  }

  /** Every docker/sudo run: the program name first, then its argv. */
  wrapperCalls(): string[][] {
    return this.records('wrapper');
  }

  scannerCalls(): ScannerCall[] {
    const envs = this.records('env');
    return this.records('scanner').map((argv, i) => ({
      argv,
      env: Object.fromEntries((envs[i] ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
    }));
  }
}

function splitNul(text: string): string[] {
  const parts = text.split('\0');
  parts.pop();
  return parts;
}
