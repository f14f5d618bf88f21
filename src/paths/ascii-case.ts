/**
 * ASCII letters in lower case, nothing else changed: how autopulse compares a Jellyfin/Emby library location with a
 * path under `path_match: case_insensitive` (settings/targets/emby.rs:167-170, starts_with_ascii_case_insensitive).
 * Only ASCII folds, so the string keeps its length and a prefix found in the folded string is one in the original.
 */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}
