import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { UserError } from '../../core/errors.ts';
import type { JsonObject } from '../../config/load.ts';
import { figmentValue } from '../../config/figment-value.ts';

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/** The file's text by its extension, as autopulse picks the parser (settings/mod.rs:283-292). */
export function parseAutopulseText(text: string, source: string): JsonObject {
  const ext = /\.([^./\\]+)$/.exec(source)?.[1]?.toLowerCase() ?? '';
  let doc: unknown;
  try {
    if (ext === 'toml') doc = parseToml(text);
    else if (ext === 'yaml' || ext === 'yml') doc = parseYaml(text);
    else if (ext === 'json') doc = JSON.parse(text);
    else throw new UserError(`${source}: unsupported config format "${ext}" (autopulse reads .toml, .yaml, .yml or .json)`);
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw new UserError(`${source} is not valid ${ext.toUpperCase()}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return {};
  // Plain objects (smol-toml's tables have no prototype), so the result compares and prints as JSON.
  doc = JSON.parse(JSON.stringify(doc));
  if (!isObject(doc)) throw new UserError(`${source} must hold a mapping of sections (app, auth, triggers, targets ...), not ${Array.isArray(doc) ? 'a list' : typeof doc}`);
  return doc;
}

/** figment reads an environment value with its own grammar: bare-word arrays and tables too (figment-value.ts). */
const envValue = (raw: string): unknown => figmentValue(raw);

function setPath(doc: JsonObject, path: string[], value: unknown): void {
  let at = doc;
  for (const key of path.slice(0, -1)) {
    if (!isObject(at[key])) at[key] = {};
    at = at[key] as JsonObject;
  }
  at[path[path.length - 1]!] = value as JsonObject[string];
}

/**
 * AUTOPULSE__SECTION__KEY overrides, then AUTOPULSE__...__FILE secrets (the file's text, trimmed), both
 * lower-cased and split on "__" as autopulse does (settings/mod.rs:233-255, 300-316). Returns the names used.
 */
export function applyAutopulseEnv(doc: JsonObject, env: NodeJS.ProcessEnv, readFile: (path: string) => string = (p) => readFileSync(p, 'utf8')): string[] {
  const used: string[] = [];
  const names = Object.keys(env).filter((k) => k.startsWith('AUTOPULSE__')).sort();
  const keyPath = (k: string) => k.slice('AUTOPULSE__'.length).toLowerCase().split('__').filter(Boolean);
  for (const name of names.filter((k) => !k.endsWith('__FILE'))) {
    const path = keyPath(name);
    if (!path.length) continue;
    setPath(doc, path, envValue(env[name]!));
    used.push(name);
  }
  for (const name of names.filter((k) => k.endsWith('__FILE'))) {
    const path = keyPath(name.slice(0, -'__FILE'.length));
    if (!path.length) continue;
    let text: string;
    try {
      text = readFile(env[name]!);
    } catch (err) {
      throw new UserError(`failed to read file referenced by ${name}: ${env[name]} (${(err as Error).message})`);
    }
    setPath(doc, path, text.trim());
    used.push(name);
  }
  return used;
}
