import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { UserError } from '../core/errors.ts';

/*
 * Container-style overrides: SCANRELAY__<KEY> and SCANRELAY__<SECTION>__<KEY> set any key, nested ones
 * included (SCANRELAY__GOOGLE__ENABLED=true), and SCANRELAY__<...>__FILE=/run/secrets/x sets it to that
 * file's text, trimmed (Docker and Kubernetes secrets). This is how autopulse reads its environment
 * (crates/service/src/settings/mod.rs:233-305: the AUTOPULSE__ prefix, "__" between levels, a __FILE
 * variable read and trimmed, and winning over the plain variable). The plain top-level overrides
 * (PLEX_TOKEN='"..."', as plex_autoscan reads them) are unchanged and come first.
 */

export const ENV_PREFIX = 'SCANRELAY__';
const FILE_SUFFIX = '__FILE';

export interface NestedOverride {
  /** The variable that set it. */
  variable: string;
  /** The key path in the config, in the config's own spelling: ['GOOGLE', 'ENABLED']. */
  path: string[];
  value: unknown;
}

type Def = { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; in?: z.ZodType; element?: z.ZodType };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schema under wrappers that do not change what a value must be (default, optional, nullable, a pipe's input). */
function unwrap(schema: z.ZodType): z.ZodType {
  for (;;) {
    const def = defOf(schema);
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (!inner) return schema;
    schema = inner;
  }
}

/**
 * The key path a variable names, each level matched to the schema's keys whatever its case, and the schema at
 * its end; a level the config does not have is a mistake worth stopping for (a typo would otherwise be ignored).
 * Inside a record (keys the user chooses) a level is taken as written.
 */
function resolvePath(variable: string, levels: string[], root: z.ZodType): { path: string[]; leaf: z.ZodType | undefined } {
  const path: string[] = [];
  let schema: z.ZodType | undefined = root;
  for (const level of levels) {
    const def: Def | undefined = schema ? defOf(unwrap(schema)) : undefined;
    if (def?.type === 'object' && def.shape) {
      const key: string | undefined = Object.keys(def.shape).find((k) => k.toLowerCase() === level.toLowerCase());
      if (!key) {
        const where = path.length ? `${path.join('.')} has no key ${level}` : `${level} is not a config key`;
        throw new UserError(`environment variable ${variable}: ${where} (${ENV_PREFIX}<KEY> or ${ENV_PREFIX}<SECTION>__<KEY>, as in config.json)`);
      }
      path.push(key);
      schema = def.shape[key];
    } else {
      path.push(level);
      schema = def?.type === 'record' ? (def as { valueType?: z.ZodType }).valueType : undefined;
    }
  }
  return { path, leaf: schema ? unwrap(schema) : undefined };
}

/**
 * A variable's text as the key's value: as it is for a text key (a token of digits stays text), otherwise
 * JSON when it parses (true, 30, ["a"]), else the text, which the schema then refuses naming the key.
 */
function valueFor(text: string, leaf: z.ZodType | undefined): unknown {
  if (leaf && defOf(leaf).type === 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Every SCANRELAY__ override in `env`, in the order to apply them: plain variables first, then __FILE ones. */
export function nestedEnvOverrides(env: NodeJS.ProcessEnv, schema: z.ZodType, readText: (path: string) => string = (p) => readFileSync(p, 'utf8')): NestedOverride[] {
  const plain: NestedOverride[] = [];
  const files: NestedOverride[] = [];
  for (const variable of Object.keys(env).sort()) {
    const raw = env[variable];
    if (raw === undefined || !variable.startsWith(ENV_PREFIX)) continue;
    const isFile = variable.endsWith(FILE_SUFFIX);
    const name = variable.slice(ENV_PREFIX.length, isFile ? -FILE_SUFFIX.length : undefined);
    const levels = name.split('__');
    if (levels.some((l) => l === '')) throw new UserError(`environment variable ${variable}: an empty level between "__"; write ${ENV_PREFIX}<SECTION>__<KEY>`);
    const { path, leaf } = resolvePath(variable, levels, schema);
    let text = raw;
    if (isFile) {
      try {
        text = readText(raw).trim();
      } catch (err) {
        throw new UserError(`environment variable ${variable}: cannot read ${raw}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
    }
    (isFile ? files : plain).push({ variable, path, value: valueFor(text, leaf) });
  }
  return [...plain, ...files];
}

/** `input` with `value` at `path`, copying each object on the way (the caller's raw file stays as read). */
export function setAtPath(input: Record<string, unknown>, path: readonly string[], value: unknown): Record<string, unknown> {
  const [head, ...rest] = path;
  if (head === undefined) return input;
  if (rest.length === 0) return { ...input, [head]: value };
  const inner = input[head];
  const child = inner && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Record<string, unknown>) : {};
  return { ...input, [head]: setAtPath(child, rest, value) };
}
