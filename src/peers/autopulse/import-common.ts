import type { JsonObject } from '../../config/load.ts';
import type { RewriteRule } from './settings.ts';

/** What an import section reports, in the printout's order: what was carried, what differs, loud warnings. */
export interface ImportNotes {
  carried: string[];
  notes: string[];
  warnings: string[];
}

// Two or more rules keep autopulse's meaning with REWRITE_MODE "all" (each in turn); one rule means the same either way.
export const rewriteOf = (rules: RewriteRule[]): JsonObject => (rules.length === 0 ? {} : rules.length === 1 ? { REWRITE: rules } : { REWRITE: rules, REWRITE_MODE: 'all' });

/** autopulse's path filter as the entry's INCLUDE/EXCLUDE (an empty list is none). */
export function filterOf(filter: { include?: string[]; exclude?: string[] } | undefined): { INCLUDE?: string[]; EXCLUDE?: string[] } {
  const out: { INCLUDE?: string[]; EXCLUDE?: string[] } = {};
  if (filter?.include?.length) out.INCLUDE = filter.include;
  if (filter?.exclude?.length) out.EXCLUDE = filter.exclude;
  return out;
}
