/*
 * How autopulse reads an AUTOPULSE__ environment value: figment's Env provider parses each value with figment's own
 * small grammar (figment src/value/parse.rs, 0.10; autopulse's settings/mod.rs:285-289 merges Env::prefixed), not
 * JSON:
 * - `true`, `false`; a number (an integer, or a float when it has a dot);
 * - `[a, b]`: an array whose items are values, bare words included (`[plex, jellyfin]` is two strings);
 * - `{key=value, ...}`: a table, keys bare (letters, digits, `_`, `-`) or quoted;
 * - `"text"` with escapes, `'c'` one character;
 * - anything else is the text, trimmed.
 * A value the grammar does not read to its end (`a,b`, `[a`, `"open`) is the text exactly as given.
 */

type FigmentValue = string | number | boolean | FigmentValue[] | { [key: string]: FigmentValue };

class NoParse extends Error {}

const SEPARATORS = new Set([',', '{', '}', '[', ']']);
const isSpace = (c: string | undefined) => c !== undefined && /^[\t\n\f\r ]$/.test(c);
const isIdent = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9_-]$/.test(c);
/** Rust's f64 text (it has a dot here): sign, digits around the dot, an exponent. */
const FLOAT = /^[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?$/;
const INT = /^[+-]?\d+$/;
const USIZE_MAX = 2n ** 64n - 1n;
const ISIZE_MIN = -(2n ** 63n);

/** The escapes of a quoted string (figment's escape.rs, after TOML's), besides \uXXXX and \UXXXXXXXX. */
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '"': '"', '\\': '\\' };

class Reader {
  i = 0;
  constructor(readonly s: string) {}
  peek(): string | undefined {
    return this.s[this.i];
  }
  skipSpace(): void {
    while (isSpace(this.peek())) this.i++;
  }
  eat(c: string): void {
    if (this.s[this.i] !== c) throw new NoParse();
    this.i++;
  }

  value(): FigmentValue {
    this.skipSpace();
    let v: FigmentValue;
    if (this.s.startsWith('true', this.i)) {
      this.i += 4;
      v = true;
    } else if (this.s.startsWith('false', this.i)) {
      this.i += 5;
      v = false;
    } else if (this.peek() === '{') v = this.dict();
    else if (this.peek() === '[') v = this.array();
    else if (this.peek() === '"') v = this.quoted();
    else if (this.peek() === "'") {
      this.i++;
      const c = this.s.codePointAt(this.i);
      if (c === undefined) throw new NoParse();
      this.i += c > 0xffff ? 2 : 1;
      this.eat("'");
      v = String.fromCodePoint(c);
    } else v = this.bare();
    this.skipSpace();
    return v;
  }

  private bare(): FigmentValue {
    const start = this.i;
    while (this.i < this.s.length && !SEPARATORS.has(this.s[this.i]!)) this.i++;
    const text = this.s.slice(start, this.i).trim();
    if (text.includes('.') && FLOAT.test(text)) return Number(text);
    if (INT.test(text)) {
      const n = BigInt(text);
      if (n >= ISIZE_MIN && n <= USIZE_MAX) return Number(n);
    }
    return text;
  }

  private quoted(): string {
    this.eat('"');
    let out = '';
    for (;;) {
      const c = this.s[this.i++];
      if (c === undefined) throw new NoParse();
      if (c === '"') return out;
      if (c !== '\\') {
        // A control character other than a tab is refused inside quotes.
        if (c !== '\t' && (c < ' ' || c === '\x7f')) throw new NoParse();
        out += c;
        continue;
      }
      const e = this.s[this.i++];
      if (e === 'u' || e === 'U') {
        const len = e === 'u' ? 4 : 8;
        const hex = this.s.slice(this.i, this.i + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) throw new NoParse();
        const code = parseInt(hex, 16);
        if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw new NoParse();
        out += String.fromCodePoint(code);
        this.i += len;
      } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) out += ESCAPES[e];
      else throw new NoParse();
    }
  }

  /** `open item (, item)* close`, or `open close`. */
  private list<T>(open: string, close: string, item: () => T): T[] {
    this.eat(open);
    const out: T[] = [];
    this.skipSpace();
    if (this.peek() === close) {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(item());
      this.skipSpace();
      const c = this.peek();
      this.i++;
      if (c === close) return out;
      if (c !== ',') throw new NoParse();
    }
  }

  private array(): FigmentValue[] {
    return this.list('[', ']', () => this.value());
  }

  private dict(): { [key: string]: FigmentValue } {
    const out: { [key: string]: FigmentValue } = {};
    for (const [k, v] of this.list('{', '}', () => this.keyValue())) out[k] = v;
    return out;
  }

  private keyValue(): [string, FigmentValue] {
    this.skipSpace();
    let key: string;
    if (this.peek() === '"') key = this.quoted();
    else {
      const start = this.i;
      while (isIdent(this.peek())) this.i++;
      if (this.i === start) throw new NoParse();
      key = this.s.slice(start, this.i);
    }
    this.skipSpace();
    this.eat('=');
    return [key, this.value()];
  }
}

/** An AUTOPULSE__ value as figment reads it (see above). */
export function figmentValue(raw: string): FigmentValue {
  const r = new Reader(raw);
  try {
    const v = r.value();
    if (r.i !== raw.length) return raw;
    return v;
  } catch (err) {
    if (err instanceof NoParse) return raw;
    throw err;
  }
}
