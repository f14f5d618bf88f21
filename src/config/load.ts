import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { UserError } from './errors.ts';
import { configSchema, KNOWN_KEYS, RETIRED_KEYS, type Config } from './schema.ts';

export type JsonObject = Record<string, unknown>;

export interface LoadedConfig {
  config: Config;
  /** The file as written, for commands that rewrite it. */
  raw: JsonObject;
  /** One line each; the caller logs them once. */
  warnings: string[];
}

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
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new UserError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new UserError(`config file ${path} must hold a JSON object`);
  }
  return parseConfig(raw as JsonObject, env, path);
}

/** Validates a config object (after environment overrides), the pure core of loading. */
export function parseConfig(raw: JsonObject, env: NodeJS.ProcessEnv = {}, source = 'config'): LoadedConfig {
  const warnings: string[] = [];
  const input: JsonObject = { ...raw };

  // plex_autoscan lets a top-level key be replaced by an environment variable holding JSON.
  for (const key of Object.keys(configSchema.shape)) {
    const value = env[key];
    if (value === undefined) continue;
    try {
      input[key] = JSON.parse(value);
    } catch {
      throw new UserError(`environment variable ${key} must hold JSON (as plex_autoscan reads it), got ${JSON.stringify(value)}`);
    }
    warnings.push(`using environment setting ${key}`);
  }

  // The spec calls the drive section CLOUD; plex_autoscan calls it GOOGLE. Either, not both.
  if ('CLOUD' in input) {
    if ('GOOGLE' in input) {
      throw new UserError(`${source}: both GOOGLE and CLOUD are present; they are the same section, keep one of them`);
    }
    input.GOOGLE = input.CLOUD;
    delete input.CLOUD;
  }

  for (const [key, why] of Object.entries(RETIRED_KEYS)) {
    if (key in input) {
      warnings.push(why);
      delete input[key];
    }
  }
  const unknown = Object.keys(raw).filter((k) => !KNOWN_KEYS.has(k) && !(k in RETIRED_KEYS));
  if (unknown.length > 0) warnings.push(`unknown config keys kept and ignored: ${unknown.join(', ')}`);

  const result = configSchema.safeParse(input);
  if (!result.success) throw new UserError(`${source}: ${formatIssues(result.error)}`);
  const parsed = result.data;
  const config: Config = { ...parsed, SERVER_PASS: parsed.SERVER_PASS ?? newServerPass() };
  if (!parsed.SERVER_PASS) warnings.push('SERVER_PASS is not set: using a random one for this run (set it to keep the scan URL stable)');
  if (!config.SERVER_USE_SQLITE && 'SERVER_USE_SQLITE' in raw) {
    warnings.push('SERVER_USE_SQLITE is false: scanrelay always keeps its queue in SQLite, so nothing is lost on a crash');
  }
  return { config, raw, warnings };
}

export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const key = issue.path.length ? issue.path.map(String).join('.') : '(top level)';
      return `${key}: ${issue.message}`;
    })
    .join('; ');
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

/** Writes atomically (temp file + rename) so a crash never leaves half a config. */
export function writeConfigFile(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, formatConfigJson(value), { mode: 0o600 });
  renameSync(tmp, path);
}

export function configExists(path: string): boolean {
  return existsSync(path);
}
