import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { distance } from 'fastest-levenshtein';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import type { z } from 'zod';
import { nestedEnvOverrides, setAtPath } from './env-nested.ts';
import { UserError } from '../core/errors.ts';
import { findJsonProblem, objectKeyOrder } from './json-position.ts';
import { parseLoosely, priorityKeyNotes, serverPassNotes } from './loose.ts';
import { configSchema, KNOWN_KEYS, RETIRED_KEYS, type Config, type FileConfig } from './schema.ts';
import { checkTargets, relayConfig } from './named-targets.ts';
import { queueUrlSchemeProblem, urlProblems } from './urls.ts';

export type JsonObject = Record<string, unknown>;

export interface LoadedConfig {
  /** The relay's config: every target by name in `targets` (the PLEX_*, JELLYFIN and EMBY keys among them). */
  config: Config;
  /** The file's keys as checked, the plex_autoscan servers' keys as written (for config/ and its tests). */
  file: FileConfig;
  /** The file as written, for commands that rewrite it. */
  raw: JsonObject;
  /** One line each; the caller logs them once. */
  warnings: string[];
  /** Facts worth one INFO line at start (environment overrides in use, as plex_autoscan logs them). */
  notices: string[];
  /** SERVER_PASS was set nowhere: config.SERVER_PASS is a new random one (the server writes it into the file). */
  passGenerated?: boolean;
}

/** The warning for a SERVER_PASS made up for one run (when it cannot be written into the file). */
export const PASS_FOR_THIS_RUN = 'SERVER_PASS is not set: using a random one for this run (set it to keep the scan URL stable)';

export function newServerPass(): string {
  return randomBytes(16).toString('hex');
}

/** Reads and validates a config file. Throws UserError naming the key on any mistake. */
export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  const raw = parseJsonText(text, path);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new UserError(`config file ${path} must hold a JSON object`);
  }
  return parseConfig(raw as JsonObject, env, path, { priorityOrder: objectKeyOrder(text, ['SERVER_SCAN_PRIORITIES']) });
}

/** JSON.parse, with a mistake reported by line and column (what an editor shows). */
export function parseJsonText(text: string, path: string): JsonObject {
  try {
    return JSON.parse(text) as JsonObject;
  } catch (err) {
    const problem = findJsonProblem(text);
    const where = problem ? `line ${problem.line}, column ${problem.column}: ${problem.message}` : (err as Error).message;
    throw new UserError(`config file ${path} is not valid JSON: ${where}`);
  }
}

/** Validates a config object (after environment overrides), the pure core of loading. */
export function parseConfig(raw: JsonObject, env: NodeJS.ProcessEnv = {}, source = 'config', text: { priorityOrder?: string[] } = {}): LoadedConfig {
  const warnings: string[] = [];
  const notices: string[] = [];
  const input: JsonObject = { ...raw };
  let priorityOrder = text.priorityOrder;
  const fromEnv = new Set<string>();

  // plex_autoscan lets a top-level key be replaced by an environment variable holding JSON.
  for (const key of Object.keys(configSchema.shape)) {
    const value = env[key];
    if (value === undefined) continue;
    try {
      input[key] = JSON.parse(value);
    } catch {
      // A URL is text with no JSON quotes in every other tool's env: taken as it is.
      const scheme = key === 'SERVER_QUEUE_URL' ? queueUrlSchemeProblem(value) : undefined;
      if (scheme) throw new UserError(`environment variable ${scheme}`);
      if (key === 'SERVER_QUEUE_URL' && /^postgres(ql)?:\/\//.test(value)) input[key] = value;
      else throw new UserError(envNotJsonMessage(key, value));
    }
    if (key === 'SERVER_SCAN_PRIORITIES') priorityOrder = objectKeyOrder(value, []);
    fromEnv.add(key);
    // plex_autoscan logs this at INFO too (config.py:276, "Using ENV setting").
    notices.push(`using environment setting ${key} (it replaces the config file's value)`);
  }

  // The spec calls the drive section CLOUD; plex_autoscan calls it GOOGLE. Either, not both.
  if ('CLOUD' in input) {
    if ('GOOGLE' in input) {
      throw new UserError(`${source}: both GOOGLE and CLOUD are present; they are the same section, keep one of them`);
    }
    input.GOOGLE = input.CLOUD;
    delete input.CLOUD;
  }

  // SCANRELAY__SECTION__KEY and its __FILE form (env-nested.ts): nested keys and secrets from files.
  let nested: JsonObject = input;
  for (const o of nestedEnvOverrides(env, configSchema)) {
    nested = setAtPath(nested, o.path, o.value);
    fromEnv.add(o.path[0]!);
    notices.push(`using environment setting ${o.variable} for ${o.path.join('.')} (it replaces the config file's value)`);
  }
  Object.assign(input, nested);

  for (const [key, why] of Object.entries(RETIRED_KEYS)) {
    if (key in input) {
      warnings.push(why);
      delete input[key];
    }
  }
  const unknown = Object.keys(raw).filter((k) => !KNOWN_KEYS.has(k) && !(k in RETIRED_KEYS));
  warnings.push(...unknownKeyWarnings(unknown));

  const scheme = queueUrlSchemeProblem(input.SERVER_QUEUE_URL);
  if (scheme) throw new UserError(`${fromEnv.has('SERVER_QUEUE_URL') ? 'environment variable ' : `${source}: `}${scheme}`);
  const { result, warnings: loose } = parseLoosely(configSchema, input);
  warnings.push(...loose);
  if (!result.success) throw new UserError(issuesMessage(result.error, source, fromEnv));
  const badUrls = urlProblems(result.data);
  if (badUrls.length) throw new UserError(`${source}: ${badUrls.join('; ')}`);
  const parsed = { ...result.data, SERVER_SCAN_PRIORITIES: inFileOrder(result.data.SERVER_SCAN_PRIORITIES, priorityOrder) };
  const file: FileConfig = { ...parsed, SERVER_PASS: parsed.SERVER_PASS ?? newServerPass() };
  checkTargets(file, source);
  const config = relayConfig(file);
  if (parsed.SERVER_PASS) warnings.push(...serverPassNotes(parsed.SERVER_PASS));
  warnings.push(...priorityKeyNotes(parsed.SERVER_SCAN_PRIORITIES));
  if (!parsed.SERVER_PASS) warnings.push(PASS_FOR_THIS_RUN);
  if (!config.SERVER_USE_SQLITE && 'SERVER_USE_SQLITE' in raw) {
    warnings.push('SERVER_USE_SQLITE is false: scanrelay always keeps its queue in a database (SQLite, or PostgreSQL with SERVER_QUEUE_URL), so nothing is lost on a crash');
  }
  return { config, file, raw, warnings, notices, ...(parsed.SERVER_PASS ? {} : { passGenerated: true }) };
}

/** SERVER_SCAN_PRIORITIES entries in the order the text wrote their keys (see scanPrioritiesSchema). */
function inFileOrder<E extends { key: string }>(entries: E[], order: readonly string[] | undefined): E[] {
  if (!order) return entries;
  const at = (key: string) => {
    const i = order.indexOf(key);
    return i < 0 ? order.length : i;
  };
  return [...entries].sort((a, b) => at(a.key) - at(b.key));
}

export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const key = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
      // A record key that fails its own check: zod says "Invalid key in record"; the key's rule says why.
      const inner = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined;
      return `${key}: ${inner ?? issue.message}`;
    })
    .join('; ');
}

/**
 * The issues of a config that failed, each blamed on where its value came from: a key an environment variable
 * replaced is the environment's mistake, not the file's.
 */
function issuesMessage(error: z.ZodError, source: string, fromEnv: ReadonlySet<string>): string {
  const byEnv = (issue: z.ZodError['issues'][number]) => fromEnv.has(String(issue.path[0]));
  const parts: string[] = [];
  const fileIssues = error.issues.filter((i) => !byEnv(i));
  if (fileIssues.length) parts.push(`${source}: ${formatIssues({ issues: fileIssues } as z.ZodError)}`);
  for (const issue of error.issues.filter(byEnv)) {
    const key = String(issue.path[0]);
    const example = envExample(key);
    parts.push(`environment variable ${formatIssues({ issues: [issue] } as z.ZodError)} (it replaces the config file's ${key}${example ? `; for example ${example}` : ''})`);
  }
  return parts.join('; ');
}

/** A shell assignment of the key's default, in the JSON form the environment needs: `SERVER_PORT=3467`. */
function envExample(key: string): string | undefined {
  const field = (configSchema.shape as Record<string, z.ZodType>)[key];
  const parsed = field?.safeParse(undefined);
  if (!parsed?.success || parsed.data === undefined || parsed.data === null) return undefined;
  const json = JSON.stringify(parsed.data);
  return `${key}=${/^[\w.-]+$/.test(json) ? json : `'${json.replace(/'/g, "'\\''")}'`}`;
}

/** A shell line that sets `key` to what it was meant to be: a number or boolean as it is, a word as a JSON string. */
export function envNotJsonMessage(key: string, value: string): string {
  const got = `environment variable ${key} must hold JSON (as plex_autoscan reads it), got ${JSON.stringify(value)}`;
  const example = envExample(key);
  // A key that takes a number or a boolean: quoting the word would only move the error to its type.
  if (example && !example.startsWith(`${key}='"`) && !example.startsWith(`${key}="`)) return `${got}; ${key} takes ${describeJson(key)}, for example ${example}`;
  const quoted = `'${JSON.stringify(value).replace(/'/g, "'\\''")}'`;
  return `${got}; a text value needs JSON's double quotes inside the shell's: ${key}=${quoted}`;
}

function describeJson(key: string): string {
  const value = (configSchema.shape as Record<string, z.ZodType>)[key]!.safeParse(undefined).data;
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'true or false';
  if (Array.isArray(value)) return 'a JSON list';
  return 'a JSON object';
}

/** Keys a user may have meant; a close spelling (or another case) gets "did you mean". */
export function unknownKeyWarnings(unknown: string[]): string[] {
  const out: string[] = [];
  const plain: string[] = [];
  for (const key of unknown) {
    if (key === 'GDRIVE') {
      out.push('GDRIVE is ignored: it is the drive section\'s old name; plex_autoscan renamed it GOOGLE with new keys (run "scanrelay update_config" to add a GOOGLE section, then move your settings there; docs/drive.md)');
      continue;
    }
    const guess = closestKey(key);
    if (guess) out.push(`unknown config key ${key} kept and ignored: did you mean ${guess}?`);
    else plain.push(key);
  }
  if (plain.length > 0) out.push(`unknown config keys kept and ignored: ${plain.join(', ')}`);
  return out;
}

function closestKey(key: string): string | undefined {
  const upper = key.toUpperCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const known of KNOWN_KEYS) {
    const d = distance(upper, known);
    if (d < bestDistance) [best, bestDistance] = [known, d];
  }
  // One edit per four characters, at least two: PLEX_TOKN, SERVER_PROT, plex_token; not unrelated names.
  return bestDistance <= Math.max(2, Math.floor(key.length / 4)) ? best : undefined;
}

/** JSON as plex_autoscan writes it: 2-space indent, keys sorted at every level. */
export function formatConfigJson(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as JsonObject)
        .sort()
        .map((k) => [k, sortKeys((value as JsonObject)[k])]),
    );
  }
  return value;
}

/**
 * Writes atomically (fsynced temp file + rename + folder fsync) so a crash never leaves half a config. A new
 * file is private (0600, it holds secrets); `mode` keeps an existing file's permissions.
 */
export function writeConfigFile(path: string, value: unknown, mode = 0o600): void {
  writeFileAtomic(path, formatConfigJson(value), { mode });
}

export function configExists(path: string): boolean {
  return existsSync(path);
}
