import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';

/*
 * Every regular expression a user writes (rewrites, WATCH include/exclude) runs on RE2 (re2js, a pure
 * JavaScript port): RE2 syntax, as autoscan's Go regexps had, and matching in time linear in the path, so
 * no pattern can stall the relay on one path. JavaScript's RegExp backtracks: `^/mnt/(\w+\s?)+$` on a
 * 50-character path that does not match took minutes there.
 */

export type Pattern = RE2JS;

let engine: typeof RE2JS | undefined;
/** The engine is loaded on the first pattern (about 1.5 MB): a config without patterns never pays for it. */
function re2(): typeof RE2JS {
  engine ??= (createRequire(import.meta.url)('re2js') as typeof import('re2js')).RE2JS;
  return engine;
}

/** Compiles an RE2 pattern; throws PatternError naming the pattern and RE2's reason. */
export function compilePattern(pattern: string): Pattern {
  try {
    return re2().compile(pattern);
  } catch (err) {
    throw new PatternError(pattern, (err as Error).message.replace(/^error parsing regexp: /, ''));
  }
}

/** RE2's reason for refusing a pattern, or undefined when it compiles. */
export function patternProblem(pattern: string): string | undefined {
  try {
    compilePattern(pattern);
    return undefined;
  } catch (err) {
    return (err as PatternError).message;
  }
}

/** Whether the pattern matches anywhere in the text (Go's MatchString). */
export function matchesAnywhere(re: Pattern, text: string): boolean {
  return re.test(text);
}

/** Which patterns of an include/exclude pair leave a text out: the first EXCLUDE that matches, or the INCLUDE list when none matches. */
export type LeftOut = { key: 'EXCLUDE'; pattern: string } | { key: 'INCLUDE'; patterns: string[] };

/**
 * An include/exclude pair on one text (targets' INCLUDE/EXCLUDE, autopulse's trigger filters): no EXCLUDE pattern
 * may match, and some INCLUDE pattern must (none: any text). undefined: the text is taken.
 */
export function leftOutByPatterns(include: readonly Pattern[], exclude: readonly Pattern[], text: string): LeftOut | undefined {
  const excluded = exclude.find((re) => matchesAnywhere(re, text));
  if (excluded) return { key: 'EXCLUDE', pattern: excluded.pattern() };
  if (include.length === 0 || include.some((re) => matchesAnywhere(re, text))) return undefined;
  return { key: 'INCLUDE', patterns: include.map((re) => re.pattern()) };
}

export class PatternError extends Error {
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super(`invalid regular expression ${JSON.stringify(pattern)} (RE2 syntax): ${reason}`);
    this.name = 'PatternError';
  }
}
