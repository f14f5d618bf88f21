import { z } from 'zod';
import { regexList, rewriteMode, rewriteRules } from './patterns.ts';

/**
 * What every entry of `TARGETS` has, whatever its `TYPE` (issue 39; autopulse's targets/*.rs share the same
 * request options and rewrite). Each kind's schema is `targetBase.extend({ TYPE: z.literal(...), ... })`.
 */
export const targetRequestSchema = z
  .object({
    /** Seconds before a request to the target is given up (and retried). */
    TIMEOUT: z.number().positive().default(30),
    VERIFY_SSL: z.boolean().default(true),
    HEADERS: z.record(z.string(), z.string()).default({}),
  })
  .prefault({});

export const targetBase = z.object({
  /** From the relay's path to this target's own (the same rules as PLEX_REWRITE). */
  REWRITE: rewriteRules(),
  /** `first` (default): the first rule that matches rewrites the path; `all`: every rule in turn (autopulse's). */
  REWRITE_MODE: rewriteMode(),
  /** RE2 patterns matched against the target's own path (after REWRITE): only matching paths go to it. Empty: all. */
  INCLUDE: regexList(),
  /** RE2 patterns matched against the target's own path: a match never goes to it. */
  EXCLUDE: regexList(),
  REQUEST: targetRequestSchema,
});
export type TargetBase = z.infer<typeof targetBase>;
export type TargetRequest = z.infer<typeof targetRequestSchema>;
