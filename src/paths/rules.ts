/** SERVER_SCAN_PRIORITIES as the config reads it (config/schema.ts scanPrioritiesSchema): entries in the file's order. */
export type ScanPriorities = ReadonlyArray<{ priority: number | undefined; paths: readonly string[] }>;

/** plex_autoscan's SERVER_IGNORE_LIST: a case-insensitive substring of the mapped path. */
export function ignoredBy(list: readonly string[], path: string): string | undefined {
  const lower = path.toLowerCase();
  return list.find((item) => item !== '' && lower.includes(item.toLowerCase()));
}

/** SERVER_SCAN_PRIORITIES: the priority of the first entry that matches (default 0). */
export function priorityOf(priorities: ScanPriorities, path: string): number {
  return priorityMatch(priorities, path) ?? 0;
}

/**
 * The priority of the first SERVER_SCAN_PRIORITIES entry, in the file's order, with a case-insensitive
 * substring of `path` (utils.py:170-174), or undefined when none matches. An entry whose key is not a whole
 * number ends the search with 0: plex_autoscan's int() raised there, and its handler returned 0 (utils.py:176-178).
 */
export function priorityMatch(priorities: ScanPriorities, path: string): number | undefined {
  const lower = path.toLowerCase();
  for (const { priority, paths } of priorities) {
    if (paths.some((n) => n !== '' && lower.includes(n.toLowerCase()))) return priority ?? 0;
  }
  return undefined;
}
