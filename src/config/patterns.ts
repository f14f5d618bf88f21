import { z } from 'zod';
import { patternProblem } from '../paths/pattern.ts';

/** A user-written pattern: RE2 syntax (paths/pattern.ts); one RE2 refuses stops the start, naming it and why. */
export const pattern = () =>
  z.string().superRefine((s, ctx) => {
    const problem = patternProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
export const regexList = () => z.array(pattern()).default([]);

/** autoscan-style rewrite rules: `from` an RE2 pattern, `to` a Go template (paths/rewrite.ts). */
export const rewriteRulesSchema = z.array(z.object({ from: pattern().pipe(z.string().min(1, 'must not be empty')), to: z.string() }));
export const rewriteRules = () => rewriteRulesSchema.default([]);
/** REWRITE_MODE beside a place's REWRITE: `first` stops at the first rule that matches, `all` runs each in turn (paths/rewrite.ts). */
export const rewriteMode = () => z.enum(['first', 'all']).default('first');
