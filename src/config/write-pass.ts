import { readFileSync, realpathSync, statSync } from 'node:fs';
import { writeFileAtomic } from '../fs/atomic-write.ts';

/*
 * A config file without SERVER_PASS gets the secret the relay made up written into it, so the scan URL in the
 * log is the one in the file and stays the same across restarts. plex_autoscan does the same for any missing
 * key: its base_config holds a new uuid4 hex SERVER_PASS, and load() saves the upgraded config when a key was
 * missing (config.py:287-314), then exits; the relay goes on serving. The key is put in as one line after the
 * opening brace, so the rest of the file keeps the layout and key order the user gave it, and the file keeps
 * its mode.
 */

/** `text` (a JSON object's source) with `"SERVER_PASS": pass` as its first key. */
export function withServerPass(text: string, pass: string): string {
  const open = text.indexOf('{');
  if (open < 0) throw new Error('the config file holds no JSON object');
  const rest = text.slice(open + 1);
  const empty = /^\s*}/.test(rest);
  // The indent of the file's first key, so the new line looks like the others.
  const indent = /^\s*?\n([ \t]*)"/.exec(rest)?.[1] ?? '  ';
  const line = `\n${indent}${JSON.stringify('SERVER_PASS')}: ${JSON.stringify(pass)}${empty ? '\n' : ','}`;
  return `${text.slice(0, open + 1)}${line}${empty ? rest.replace(/^\s*/, '') : rest}`;
}

/** Writes SERVER_PASS into the config file at `path` (a symlink's target), keeping its mode. Returns that mode. */
export function writeServerPass(path: string, pass: string): number {
  const file = realpathSync(path);
  const mode = statSync(file).mode & 0o7777;
  const text = readFileSync(file, 'utf8');
  const next = withServerPass(text, pass);
  JSON.parse(next); // never write a file that would not load
  writeFileAtomic(file, next, { mode });
  return mode;
}
