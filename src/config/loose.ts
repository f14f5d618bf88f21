import type { z } from 'zod';
import { clampDuration } from './durations.ts';

/*
 * Values plex_autoscan started with although they are not what its sample config shows. The schema
 * stays strict (its types are what the code reads); a config is parsed, each issue that is one of these
 * loose values is repaired in a copy of the input with one warning, and the copy is parsed again. The
 * rule: a config that plex_autoscan started with also starts here.
 */

type Json = Record<string, unknown>;

/**
 * zod's parse options for a config, read once at start (and again on a reload): no compiled fast path. zod compiles
 * one (source text and code, ~100 KB for the config's schemas) the first time it parses an object schema, and keeps
 * it for every later parse; a config has no later parse, so compiling only costs time and an idle relay's memory.
 */
export const PARSED_ONCE = { jitless: true } as const;

/** The floor scanrelay puts under GOOGLE.POLL_INTERVAL 0 (plex_autoscan: no pause at all). */
export const MIN_POLL_INTERVAL = 1;

interface Repair {
  value: unknown;
  warning: string;
}

/** Keys plex_autoscan only tests for truth or length (plex.py:158,188,213; scan.py:197): null there means "not set". */
const NULL_MEANS_EMPTY = new Set(['PLEX_TOKEN', 'RUN_COMMAND_BEFORE_SCAN', 'RUN_COMMAND_AFTER_SCAN', 'RCLONE.CONFIG', 'GOOGLE.CLIENT_ID', 'GOOGLE.CLIENT_SECRET']);

function repairOf(issue: z.core.$ZodIssue, value: unknown, root: Json): Repair | undefined {
  const key = issue.path.map(String).join('.');
  if (value === null && NULL_MEANS_EMPTY.has(key)) {
    return { value: '', warning: `${key}: null read as not set (""); write "" or the value` };
  }
  // Flask routes "/%s" % SERVER_PASS (scan.py:242,279,313): a number is its digits.
  if (key === 'SERVER_PASS' && typeof value === 'number' && Number.isFinite(value)) {
    return { value: String(value), warning: `SERVER_PASS: the number ${value} read as the text "${value}"; write it in double quotes` };
  }
  // plex.py:68-99 checks once, then gives up when checks >= SERVER_MAX_FILE_CHECKS: below 1 is one check, like 0 here.
  if (key === 'SERVER_MAX_FILE_CHECKS' && Number.isInteger(value) && (value as number) < 0) {
    return { value: 0, warning: `SERVER_MAX_FILE_CHECKS: ${value} read as 0 (one check, then the scan is given up, as plex_autoscan's loop did); write 0 or more` };
  }
  if (key === 'GOOGLE.POLL_INTERVAL' && typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) && Number(value) > 0) {
    return { value: Number(value), warning: `GOOGLE.POLL_INTERVAL: the text ${JSON.stringify(value)} read as ${Number(value)} s; write it without quotes` };
  }
  // plex_autoscan reads booleans with Python's truthiness (`if config[...]:`, e.g. plex.py:138), so 0 and 1 work.
  if (issue.code === 'invalid_type' && issue.expected === 'boolean' && (value === 0 || value === 1)) {
    return { value: value === 1, warning: `${key}: ${value} read as ${value === 1}; write true or false` };
  }
  // plex.py:206 analyzes unless the value is "off"; plex.py:368 runs a deep analysis only for "deep":
  // any other text is a basic analysis.
  if (key === 'PLEX_ANALYZE_TYPE' && typeof value === 'string') {
    return { value: 'basic', warning: `PLEX_ANALYZE_TYPE: ${JSON.stringify(value.slice(0, 40))} read as "basic" (as plex_autoscan did); write "off", "basic" or "deep"` };
  }
  // scan.py:228 sleeps POLL_INTERVAL seconds between polls: 0 polled again at once, without end. The sane
  // equivalent is the shortest pause, so a failing Drive API is not called in a tight loop.
  if (key === 'GOOGLE.POLL_INTERVAL' && value === 0) {
    return { value: MIN_POLL_INTERVAL, warning: `GOOGLE.POLL_INTERVAL: 0 read as ${MIN_POLL_INTERVAL} s (plex_autoscan polled again at once); write the seconds between polls` };
  }
  const clamped = clampDuration(key, value);
  if (clamped) return clamped;
  // plex_autoscan reads the GOOGLE section only when monitoring starts (scan.py:187-231, after GOOGLE.ENABLED is
  // checked): with monitoring off, a value of the wrong type never mattered there, so here it takes the default.
  if (issue.path[0] === 'GOOGLE' && issue.path.length > 1 && issue.path[1] !== 'ENABLED' && !googleEnabled(root)) {
    return { value: undefined, warning: `${key}: ${JSON.stringify(value)?.slice(0, 40)} is not ${expectedOf(issue)}; ignored (the default is used) while GOOGLE.ENABLED is false` };
  }
  return undefined;
}

function googleEnabled(root: Json): boolean {
  const google = (root.GOOGLE ?? root.CLOUD) as Json | undefined;
  // Python's truth (scan.py:532 `if conf.configs['GOOGLE']['ENABLED']`): any non-empty, non-zero value starts monitoring.
  const enabled = google && typeof google === 'object' ? google.ENABLED : undefined;
  return !!enabled && !(Array.isArray(enabled) && enabled.length === 0) && !(typeof enabled === 'object' && !Array.isArray(enabled) && Object.keys(enabled).length === 0);
}

function expectedOf(issue: z.core.$ZodIssue): string {
  return issue.code === 'invalid_type' ? `a ${issue.expected}` : 'a valid value';
}

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let node = root;
  for (const key of path) {
    if (!node || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

/** Sets a value in `root`, copying each object on the way so the caller's input is never changed. */
function withValue(root: Json, path: ReadonlyArray<PropertyKey>, value: unknown): Json {
  const [head, ...rest] = path;
  if (head === undefined) return root;
  const child = root[head as string];
  const next = rest.length === 0 ? value : withValue(child && typeof child === 'object' ? { ...(child as Json) } : {}, rest, value);
  return { ...root, [head as string]: next };
}

/**
 * Parses `input` with `schema`, accepting the loose values above. Returns zod's result for the repaired
 * input and one warning per repaired value.
 */
export function parseLoosely<S extends z.ZodType>(schema: S, input: Json): { result: z.ZodSafeParseResult<z.output<S>>; warnings: string[] } {
  const warnings: string[] = [];
  let current = input;
  let result = schema.safeParse(current, PARSED_ONCE);
  // Each pass repairs every loose value zod reported; a repair never creates another, so two passes
  // suffice. The bound only guards against a schema that reports issues one at a time.
  for (let pass = 0; pass < 8 && !result.success; pass++) {
    let repaired = false;
    for (const issue of result.error.issues) {
      const repair = repairOf(issue, valueAt(current, issue.path), current);
      if (!repair) continue;
      current = withValue(current, issue.path, repair.value);
      warnings.push(repair.warning);
      repaired = true;
    }
    if (!repaired) break;
    result = schema.safeParse(current, PARSED_ONCE);
  }
  return { result, warnings };
}

/**
 * Warnings for SERVER_SCAN_PRIORITIES keys that are not whole numbers: plex_autoscan started with them, and a
 * path such an entry matches got priority 0 (its int() raised and the handler returned 0, utils.py:168-178).
 */
export function priorityKeyNotes(entries: ReadonlyArray<{ key: string; priority: number | undefined }>): string[] {
  return entries
    .filter((e) => e.priority === undefined)
    .map((e) => `SERVER_SCAN_PRIORITIES: key ${JSON.stringify(e.key)} is not a whole number: a path it matches gets priority 0 and no later entry is tried, as in plex_autoscan; write a number such as "0" or "2"`);
}

/** Below this many characters SERVER_PASS gets a warning (it is the only credential unless Basic auth is set). */
export const SHORT_PASS = 16;

/** fastify's default longest route parameter (find-my-way's maxParamLength). */
export const DEFAULT_MAX_PARAM_LENGTH = 100;

/**
 * Warnings for a SERVER_PASS that plex_autoscan served but that is awkward in a URL. Flask routes
 * "/<SERVER_PASS>" as a literal path (scan.py:242,279,313) and matches the decoded path, so a space, a
 * "/" or any other character works there, typed as it is (a "/") or percent-encoded; so it does here.
 */
export function serverPassNotes(pass: string): string[] {
  const notes: string[] = [];
  if (encodeURIComponent(pass) !== pass) {
    notes.push(`SERVER_PASS holds characters that are percent-encoded in URLs (a space, "/", "?", ...): the scan URL is /${encodeURIComponent(pass)}`);
  }
  if (pass.length < SHORT_PASS) {
    notes.push(`SERVER_PASS is ${pass.length} characters long: anyone who can reach the relay can guess a short secret; use ${SHORT_PASS} or more (scanrelay writes a random 32)`);
  }
  if (pass.length > DEFAULT_MAX_PARAM_LENGTH) {
    notes.push(`SERVER_PASS is ${pass.length} characters long; it works, but it makes every scan URL long`);
  }
  return notes;
}
