import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { UserError } from '../core/errors.ts';

/**
 * rclone.conf as rclone 1.60 reads it (github.com/Unknwon/goconfig): `[section]` headers (name trimmed),
 * `key = value` or `key: value` split on the first `=` or `:`, keys and values trimmed, full-line `#`/`;`
 * comments only, double quotes kept, a value wrapped in backticks or triple double quotes unwrapped,
 * duplicate keys: last wins, duplicate sections merged, keys before any section go to `DEFAULT`.
 *
 * Edits keep every byte of the file that is not part of the remote being changed: we never re-serialise
 * the whole file as rclone does, so comments, other remotes and their order survive.
 */

export const DEFAULT_SECTION = 'DEFAULT';

export type ConfLine =
  | { kind: 'blank' | 'comment'; raw: string }
  | { kind: 'section'; raw: string; name: string }
  | { kind: 'entry'; raw: string; key: string; value: string; section: string };

export interface RcloneConf {
  lines: ConfLine[];
  /** Remote name -> key -> value, in order of first appearance (what `rclone config dump` shows). */
  remotes: Map<string, Map<string, string>>;
}

export class RcloneConfError extends UserError {}

const ENCRYPTED_MARKER = 'RCLONE_ENCRYPT_V0:';

export function isEncryptedConf(text: string): boolean {
  return text.split(/\r?\n/).some((l) => l.trim() === ENCRYPTED_MARKER);
}

/** Splits text into lines that keep their own line ending, so joining them gives the text back exactly. */
function splitKeepingEndings(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\n') {
      out.push(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

function parseEntry(line: string): { key: string; value: string } | undefined {
  let key: string;
  let rest: string;
  const keyQuote = line.startsWith('"""') && line.length >= 6 ? '"""' : line[0] === '"' ? '"' : line[0] === '`' ? '`' : '';
  if (keyQuote) {
    const close = line.indexOf(keyQuote, keyQuote.length);
    if (close < 0) return undefined;
    const sep = line.slice(close).search(/[=:]/);
    if (sep <= 0) return undefined;
    key = line.slice(keyQuote.length, close);
    rest = line.slice(close + sep + 1);
  } else {
    const sep = line.search(/[=:]/);
    if (sep <= 0) return undefined;
    key = line.slice(0, sep).trim();
    rest = line.slice(sep + 1);
  }
  const right = rest.trim();
  const valQuote = right.length >= 2 && right[0] === '`' ? '`' : right.length >= 6 && right.startsWith('"""') ? '"""' : '';
  if (!valQuote) return { key, value: right };
  const inner = right.slice(valQuote.length);
  let close = inner.lastIndexOf(valQuote);
  // goconfig falls back to a single double quote when the closing quote is missing.
  if (close < 0) close = inner.lastIndexOf('"');
  if (close < 0) return undefined;
  return { key, value: inner.slice(0, close) };
}

/** Parses rclone.conf text. Throws RcloneConfError for an encrypted file or a line rclone cannot parse. */
export function parseRcloneConf(text: string, source = 'rclone.conf'): RcloneConf {
  if (isEncryptedConf(text)) {
    throw new RcloneConfError(
      `${source} is an encrypted rclone config (RCLONE_ENCRYPT_V0): scanrelay cannot read or edit it. ` +
        'Run "rclone config" to manage this remote, or remove the configuration password with "rclone config" > s) Set configuration password.',
    );
  }
  const lines: ConfLine[] = [];
  const remotes = new Map<string, Map<string, string>>();
  let section = DEFAULT_SECTION;
  const rawLines = splitKeepingEndings(text);
  rawLines.forEach((raw, index) => {
    let line = raw.trim();
    if (index === 0 && line.startsWith('\uFEFF')) line = line.slice(1).trim();
    if (!line) {
      lines.push({ kind: 'blank', raw });
      return;
    }
    if (line[0] === '#' || line[0] === ';') {
      lines.push({ kind: 'comment', raw });
      return;
    }
    if (line[0] === '[' && line.endsWith(']')) {
      section = line.slice(1, -1).trim();
      if (!remotes.has(section)) remotes.set(section, new Map());
      lines.push({ kind: 'section', raw, name: section });
      return;
    }
    const entry = parseEntry(line);
    if (!entry) throw new RcloneConfError(`${source} line ${index + 1}: rclone cannot parse this line: ${line}`);
    if (!remotes.has(section)) remotes.set(section, new Map());
    remotes.get(section)!.set(entry.key, entry.value);
    lines.push({ kind: 'entry', raw, key: entry.key, value: entry.value, section });
  });
  return { lines, remotes };
}

/** Reads and parses rclone.conf; a missing file is an empty config (rclone says the same). */
export function readRcloneConf(path: string): RcloneConf & { text: string; exists: boolean } {
  if (!existsSync(path)) return { ...parseRcloneConf(''), text: '', exists: false };
  const text = readFileSync(path, 'utf8');
  return { ...parseRcloneConf(text, path), text, exists: true };
}

/** The options of one remote (merged over duplicate sections, last duplicate key wins), or undefined. */
export function findRemote(conf: RcloneConf, name: string): Record<string, string> | undefined {
  const section = conf.remotes.get(name);
  return section ? Object.fromEntries(section) : undefined;
}

/** Remote names as `rclone listremotes` lists them (every section, sorted). */
export function listRemotes(conf: RcloneConf): string[] {
  return [...conf.remotes.keys()].sort();
}

/** Values rclone would read back differently (or not at all) are refused rather than written wrong. */
function checkWritable(key: string, value: string): void {
  if (!/^[A-Za-z0-9_.-]+$/.test(key)) throw new RcloneConfError(`cannot write option "${key}": option names are letters, digits, "_", "-" and "."`);
  if (/[\r\n]/.test(value)) throw new RcloneConfError(`cannot write option ${key}: the value holds a line break`);
  if (value !== value.trim()) throw new RcloneConfError(`cannot write option ${key}: rclone trims leading and trailing spaces from values`);
  if (value.startsWith('`') || value.startsWith('"""')) {
    throw new RcloneConfError(`cannot write option ${key}: rclone would strip the quotes from a value starting with ${value.startsWith('`') ? 'a backtick' : '"""'}`);
  }
}

/** `key = value` exactly as rclone writes it (an empty value keeps the space after `=`). */
function entryLine(key: string, value: string, eol: string): string {
  checkWritable(key, value);
  return `${key} = ${value}${eol}`;
}

function eolOf(text: string): string {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

function lineEnding(raw: string, fallback: string): string {
  return raw.endsWith('\r\n') ? '\r\n' : raw.endsWith('\n') ? '\n' : fallback;
}

/** Index ranges [header, end) of each block of a section, where end excludes trailing blanks/comments. */
function blocksOf(lines: ConfLine[], name: string): Array<{ header: number; lastEntry: number; end: number }> {
  const blocks: Array<{ header: number; lastEntry: number; end: number }> = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (l.kind !== 'section' || l.name !== name) continue;
    let lastEntry = i;
    let j = i + 1;
    for (; j < lines.length && lines[j].kind !== 'section'; j++) if (lines[j].kind === 'entry') lastEntry = j;
    blocks.push({ header: i, lastEntry, end: j });
  }
  return blocks;
}

export interface RemoteEdit {
  /** Options to set, in the order rclone would write new ones. */
  set?: Array<[string, string]>;
  /** Options to remove. */
  unset?: string[];
}

function render(lines: ConfLine[]): string {
  return lines.map((l) => l.raw).join('');
}

/**
 * Sets and removes options of one remote, creating it at the end of the file when absent. Existing keys
 * are rewritten in place (their last occurrence), new keys go after the remote's last option; every other
 * line is kept as it was.
 */
export function editRemote(text: string, name: string, edit: RemoteEdit): string {
  const conf = parseRcloneConf(text);
  const eol = eolOf(text);
  let lines = [...conf.lines];
  const set = edit.set ?? [];
  const unset = new Set(edit.unset ?? []);
  if (!conf.remotes.has(name)) {
    let out = text;
    if (out && !out.endsWith('\n')) out += eol;
    if (out.trim() && !/(\r?\n){2}$/.test(out)) out += eol;
    out += `[${name}]${eol}`;
    for (const [k, v] of set) if (!unset.has(k)) out += entryLine(k, v, eol);
    return out + eol;
  }
  const remaining = new Map(set);
  for (const k of unset) remaining.delete(k);
  // Rewrite the last occurrence of each key being set; drop every occurrence of keys being removed.
  const lastIndex = new Map<string, number>();
  lines.forEach((l, i) => {
    if (l.kind === 'entry' && l.section === name) lastIndex.set(l.key, i);
  });
  lines = lines.map((l, i) => {
    if (l.kind !== 'entry' || l.section !== name) return l;
    if (unset.has(l.key)) return { kind: 'blank', raw: '' } as ConfLine;
    if (remaining.has(l.key) && lastIndex.get(l.key) === i) {
      const value = remaining.get(l.key)!;
      remaining.delete(l.key);
      return { ...l, value, raw: entryLine(l.key, value, lineEnding(l.raw, eol)) };
    }
    return l;
  });
  if (remaining.size) {
    // New keys go after the remote's last option (or its last header when it has none).
    let at = -1;
    lines.forEach((l, i) => {
      if ((l.kind === 'entry' && l.section === name) || (l.kind === 'section' && l.name === name)) at = i;
    });
    const anchor = lines[at];
    if (!anchor.raw.endsWith('\n')) lines[at] = { ...anchor, raw: anchor.raw + eol };
    const added: ConfLine[] = [...remaining].map(([key, value]) => ({ kind: 'entry', key, value, section: name, raw: entryLine(key, value, eol) }));
    lines.splice(at + 1, 0, ...added);
  }
  return render(lines);
}

/** Removes every block of a remote: its header and options up to its last option, plus following blank lines. */
export function deleteRemote(text: string, name: string): string {
  const conf = parseRcloneConf(text);
  if (!conf.remotes.has(name)) throw new RcloneConfError(`there is no remote named "${name}"`);
  const lines = [...conf.lines];
  const drop = new Set<number>();
  for (const b of blocksOf(lines, name)) {
    for (let i = b.header; i <= b.lastEntry; i++) drop.add(i);
    for (let i = b.lastEntry + 1; i < b.end && lines[i].kind === 'blank'; i++) drop.add(i);
  }
  // Keys of the DEFAULT section before any header have no block: drop them one by one.
  if (name === DEFAULT_SECTION) lines.forEach((l, i) => l.kind === 'entry' && l.section === name && drop.add(i));
  return render(lines.filter((_, i) => !drop.has(i)));
}

/** Renames a remote by rewriting its header line(s); everything else stays. */
export function renameRemote(text: string, from: string, to: string): string {
  const conf = parseRcloneConf(text);
  if (!conf.remotes.has(from)) throw new RcloneConfError(`there is no remote named "${from}"`);
  if (conf.remotes.has(to)) throw new RcloneConfError(`a remote named "${to}" already exists`);
  const eol = eolOf(text);
  return render(conf.lines.map((l) => (l.kind === 'section' && l.name === from ? { ...l, name: to, raw: `[${to}]${lineEnding(l.raw, eol)}` } : l)));
}

/** Writes rclone.conf atomically (temp file in the same folder, then rename) with mode 0600. */
export function writeRcloneConf(path: string, text: string): void {
  // Never let an edit produce a file rclone would refuse.
  parseRcloneConf(text, path);
  writeFileAtomic(path, text, { mode: 0o600 });
}

/**
 * Reads, edits one remote, and writes back atomically: e.g. the drive monitor saving a refreshed token
 * (`updateRemote(path, name, { set: [['token', formatToken(t)]] })`) the way rclone rewrites it in place.
 */
export function updateRemote(path: string, name: string, edit: RemoteEdit): void {
  const current = readRcloneConf(path);
  if (!current.remotes.has(name)) throw new RcloneConfError(`${path} has no remote named "${name}"`);
  writeRcloneConf(path, editRemote(current.text, name, edit));
}
