/*
 * Where a JSON text first goes wrong, as line and column. JSON.parse on Node 20 often names no position
 * ("Unexpected token '}', ... is not valid JSON"), and a character offset is no help in an editor.
 * A small validating scanner (RFC 8259 grammar) finds the spot and what was expected there.
 */

export interface JsonProblem {
  line: number;
  column: number;
  /** What was found and what JSON wants there, e.g. `expected a value, found "}"`. */
  message: string;
}

class Stop extends Error {
  constructor(
    readonly at: number,
    readonly what: string,
  ) {
    super(what);
  }
}

/** The first syntax problem in `text`, or undefined when it is valid JSON. */
export function findJsonProblem(text: string): JsonProblem | undefined {
  return scanJson(text);
}

/**
 * The keys of the object at `path` (object keys from the top, e.g. ["SERVER_SCAN_PRIORITIES"]) in the order
 * the text writes them, each once; undefined when there is no object there or the text is not JSON.
 * JSON.parse puts integer-like keys first in numeric order ({"2": .., "1": ..} iterates "1" first), while
 * Python's json keeps the file's order, which plex_autoscan's code relies on.
 */
export function objectKeyOrder(text: string, path: readonly string[]): string[] | undefined {
  const want = JSON.stringify(path);
  let keys: string[] | undefined;
  const problem = scanJson(text, (at, key, isObject) => {
    const here = JSON.stringify(at);
    if (isObject && here === want) keys ??= [];
    if (key !== undefined && here === want && keys && !keys.includes(key)) keys.push(key);
  });
  return problem ? undefined : keys;
}

/**
 * A validating scan of `text`. `visit` (when given) hears of every object as it opens (key undefined,
 * isObject true) and of each of its keys, with the path of object keys leading to it.
 */
function scanJson(text: string, visit?: (path: readonly string[], key: string | undefined, isObject: boolean) => void): JsonProblem | undefined {
  let i = 0;
  const found = () => (i >= text.length ? 'the end of the file' : JSON.stringify(text[i]));
  const fail = (expected: string): never => {
    throw new Stop(i, `expected ${expected}, found ${found()}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const string = () => {
    if (text[i] !== '"') fail(text[i] === "'" ? 'a double quote (JSON strings use "...", not \'...\')' : 'a double-quoted string');
    const start = i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) throw new Stop(i, 'a string may not hold a raw line break or control character (write \\n)');
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) throw new Stop(i - 1, 'a \\u escape needs four hex digits');
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? '')) {
          throw new Stop(i - 1, `unknown escape \\${text[i] ?? ''} (a backslash in a path is written \\\\)`);
        }
      }
      i++;
    }
    if (i >= text.length) throw new Stop(start, 'this string is never closed');
    i++;
    return start;
  };
  const value = (path: readonly string[] = []): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      visit?.(path, undefined, true);
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        const start = string();
        const key = visit ? (JSON.parse(text.slice(start, i)) as string) : '';
        visit?.(path, key, true);
        ws();
        if (text[i] !== ':') fail('":" after the key');
        i++;
        value(visit ? [...path, key] : path);
        ws();
        if (text[i] === ',') {
          i++;
          ws();
          if (text[i] === '}') throw new Stop(i, 'a comma before "}" (JSON allows no trailing comma: remove it)');
          continue;
        }
        if (text[i] === '}') return void i++;
        fail('"," or "}"');
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        // An element of an array is no object key: a path step that no key can be.
        value(visit ? [...path, '\u0000[]'] : path);
        ws();
        if (text[i] === ',') {
          i++;
          ws();
          if (text[i] === ']') throw new Stop(i, 'a comma before "]" (JSON allows no trailing comma: remove it)');
          continue;
        }
        if (text[i] === ']') return void i++;
        fail('"," or "]"');
      }
    }
    if (c === '"') return void string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (literal && !/^[\w.]/.test(text.slice(i + literal[0].length, i + literal[0].length + 1))) {
      i += literal[0].length;
      return;
    }
    fail(c === "'" ? 'a value (JSON strings use "...", not \'...\')' : 'a value (a string in "...", a number, true, false, null, [...] or {...})');
  };
  try {
    value();
    ws();
    if (i < text.length) fail('nothing after the end of the JSON value');
    return undefined;
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    return { ...lineColumn(text, err.at), message: err.what };
  }
}

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}
