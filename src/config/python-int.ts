/**
 * Python's int() of a text, as plex_autoscan applies it to a SERVER_SCAN_PRIORITIES key (utils.py:173): blanks
 * around it, a sign, ASCII digits with single underscores between them ("1_0" is 10). Undefined where Python
 * raises ValueError ("high", "1.5", "").
 */
export function pythonInt(text: string): number | undefined {
  const m = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(text);
  if (!m) return undefined;
  const n = Number(m[2]!.replaceAll('_', ''));
  return m[1] === '-' && n !== 0 ? -n : n;
}
