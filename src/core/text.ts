/*
 * Which texts the queue can keep and a client may send: the ground floor's rules, used by the scan vocabulary
 * (core/scan.ts) and every trigger's checks (paths/validate.ts).
 */

/**
 * The longest path the queue keeps, in UTF-8 bytes, the same on both stores. PostgreSQL's B-tree indexes (a
 * pending scan per folder, a scan's files) refuse an entry over 2,704 bytes when it does not compress (random
 * names, CJK); 2,400 leaves room for the other columns of the entry.
 */
export const MAX_PATH_BYTES = 2400;

/** A half of a UTF-16 surrogate pair without its other half: no UTF-8 spelling, so a store would change it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a text can not be stored as it is (the queue's stores must keep what they answer), or undefined: a NUL
 * byte (PostgreSQL refuses it in text) or a lone surrogate (both stores would keep U+FFFD instead).
 */
export function invalidText(value: string): string | undefined {
  if (value.includes('\0')) return 'must not contain a NUL byte';
  if (LONE_SURROGATE.test(value)) return 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff without its pair): it is not valid Unicode';
  return undefined;
}

/** C0 control characters (U+0000-U+001F, CR and LF among them) and DEL. */
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Why a text a client sent (a path, a title, an event, an id) is refused, or undefined: what invalidText refuses,
 * and any control character. A newline in a path would reach the command target's SCANRELAY_FILES (one path a
 * line) as lines of their own, and log lines as lines of their own; no media manager sends one.
 */
export function invalidInputText(value: string): string | undefined {
  const stored = invalidText(value);
  if (stored) return stored;
  const m = CONTROL.exec(value);
  if (m) return `must not contain a control character (U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}, at character ${m.index + 1})`;
  return undefined;
}

/** Why a path is too long for the queue (MAX_PATH_BYTES), or undefined. */
export function tooLong(path: string): string | undefined {
  // Characters first: a string of fewer than MAX_PATH_BYTES / 3 characters fits whatever they are.
  if (path.length * 3 <= MAX_PATH_BYTES) return undefined;
  const bytes = Buffer.byteLength(path, 'utf8');
  return bytes > MAX_PATH_BYTES ? `filepath is ${bytes} bytes long (UTF-8); the queue keeps paths of up to ${MAX_PATH_BYTES} bytes` : undefined;
}
