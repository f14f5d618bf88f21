import type { Config } from '../config/schema.ts';

/** plex_autoscan's SERVER_IGNORE_LIST: a case-insensitive substring of the mapped path. */
export function ignoredBy(list: readonly string[], path: string): string | undefined {
  const lower = path.toLowerCase();
  return list.find((item) => item !== '' && lower.includes(item.toLowerCase()));
}

/** SERVER_SCAN_PRIORITIES {"<n>": [substrings]}: the first case-insensitive match gives the priority (default 0). */
export function priorityOf(priorities: Config['SERVER_SCAN_PRIORITIES'], path: string): number {
  return priorityMatch(priorities, path) ?? 0;
}

/** The priority of the first SERVER_SCAN_PRIORITIES entry that matches, or undefined when none does. */
export function priorityMatch(priorities: Config['SERVER_SCAN_PRIORITIES'], path: string): number | undefined {
  const lower = path.toLowerCase();
  for (const [priority, needles] of Object.entries(priorities)) {
    if (needles.some((n) => n !== '' && lower.includes(n.toLowerCase()))) return Number(priority);
  }
  return undefined;
}
