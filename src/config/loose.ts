import type { z } from 'zod';

/*
 * Values plex_autoscan started with although they are not what its sample config shows. The schema
 * stays strict (its types are what the code reads); a config is parsed, each issue that is one of these
 * loose values is repaired in a copy of the input with one warning, and the copy is parsed again. The
 * rule: a config that plex_autoscan started with also starts here.
 */

type Json = Record<string, unknown>;

/** The floor scanrelay puts under GOOGLE.POLL_INTERVAL 0 (plex_autoscan: no pause at all). */
export const MIN_POLL_INTERVAL = 1;

interface Repair {
  value: unknown;
  warning: string;
}

function repairOf(issue: z.core.$ZodIssue, value: unknown): Repair | undefined {
  const key = issue.path.map(String).join('.');
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
  return undefined;
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
  let result = schema.safeParse(current);
  // Each pass repairs every loose value zod reported; a repair never creates another, so two passes
  // suffice. The bound only guards against a schema that reports issues one at a time.
  for (let pass = 0; pass < 8 && !result.success; pass++) {
    let repaired = false;
    for (const issue of result.error.issues) {
      const repair = repairOf(issue, valueAt(current, issue.path));
      if (!repair) continue;
      current = withValue(current, issue.path, repair.value);
      warnings.push(repair.warning);
      repaired = true;
    }
    if (!repaired) break;
    result = schema.safeParse(current);
  }
  return { result, warnings };
}

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
  if (pass.length > DEFAULT_MAX_PARAM_LENGTH) {
    notes.push(`SERVER_PASS is ${pass.length} characters long; it works, but it makes every scan URL long`);
  }
  return notes;
}
