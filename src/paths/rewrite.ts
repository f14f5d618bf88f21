import { mapPath, type MappedPath, type PathMappings } from './mapping.ts';

/** One SERVER_PATH_REWRITES rule: an autoscan-style regular expression and its replacement. */
export interface RewriteRule {
  from: string;
  to: string;
}

/** A rule that changed a path, for `scanrelay map` and the dashboard preview. */
export interface FiredRewrite {
  index: number;
  from: string;
  to: string;
  before: string;
  after: string;
}

interface CompiledRule {
  index: number;
  rule: RewriteRule;
  re: RegExp;
}

/**
 * Compiles an autoscan (Go RE2) pattern as a JavaScript RegExp. Always with the `u` flag: without it
 * JavaScript reads escapes Go rejects or means otherwise (`\z`, `\Q`) as plain letters and the rule would
 * silently match something else; with it they are errors. Go's `(?P<name>` group syntax and leading
 * `(?i)`, `(?m)`, `(?s)` flags are translated; anything else RE2-only fails here, naming the rule.
 */
export function compileRewritePattern(pattern: string): RegExp {
  let source = pattern.replaceAll('(?P<', '(?<');
  let flags = 'gu';
  const leading = /^\(\?([ims]+)\)/.exec(source);
  if (leading) {
    for (const f of new Set(leading[1])) flags += f;
    source = source.slice(leading[0].length);
  }
  return new RegExp(source, flags);
}

/** The error a bad pattern gives, or undefined when it compiles. */
export function rewritePatternProblem(pattern: string): string | undefined {
  try {
    compileRewritePattern(pattern);
    return undefined;
  } catch (err) {
    return `invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}`;
  }
}

/**
 * Go's regexp.Expand semantics for a replacement template, so an autoscan `to` means here what it meant
 * there: `$1`/`${1}` a numbered group, `$name`/`${name}` a named group (the longest run of letters, digits
 * and `_` after `$`, so `$1x` is the group "1x", i.e. empty), `$$` a dollar, a missing or unmatched group
 * the empty string, and a `$` that starts no valid name stays as it is. JavaScript's own `$&`, `` $` ``,
 * `$'` and `$<name>` have no special meaning in Go, so they are kept literally.
 */
export function expandGoTemplate(template: string, groups: ReadonlyArray<string | undefined>, named: Readonly<Record<string, string | undefined>> | undefined): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const dollar = template.indexOf('$', i);
    if (dollar < 0) {
      out += template.slice(i);
      break;
    }
    out += template.slice(i, dollar);
    i = dollar + 1;
    if (template[i] === '$') {
      out += '$';
      i++;
      continue;
    }
    let name: string;
    const brace = template[i] === '{';
    const start = brace ? i + 1 : i;
    let end = start;
    while (end < template.length && /[\p{L}\p{Nd}_]/u.test(template[end]!)) end++;
    name = template.slice(start, end);
    if (name === '' || (brace && template[end] !== '}')) {
      out += '$'; // malformed: the dollar is plain text, as in Go
      continue;
    }
    i = brace ? end + 1 : end;
    if (/^\d+$/.test(name)) out += groups[Number(name)] ?? '';
    else out += named?.[name] ?? '';
  }
  return out;
}

const compiledCache = new WeakMap<readonly RewriteRule[], CompiledRule[]>();

function compiled(rules: readonly RewriteRule[]): CompiledRule[] {
  let out = compiledCache.get(rules);
  if (!out) {
    // The schema already rejected bad patterns; this compiles each valid rule once per config.
    out = rules.map((rule, index) => ({ index, rule, re: compileRewritePattern(rule.from) }));
    compiledCache.set(rules, out);
  }
  return out;
}

/**
 * Applies every rule in order, each to the previous one's result, replacing all matches (Go's
 * ReplaceAllString). autoscan stops at the first rule that matches (its issue #212); scanrelay does not,
 * so a trigger's rewrite and a target's rewrite can follow one another.
 */
export function rewritePath(rules: readonly RewriteRule[], path: string): { path: string; fired: FiredRewrite[] } {
  const fired: FiredRewrite[] = [];
  let current = path;
  for (const { index, rule, re } of compiled(rules)) {
    re.lastIndex = 0;
    if (!re.test(current)) continue;
    re.lastIndex = 0;
    const after = current.replace(re, (...args: unknown[]) => {
      const last = args[args.length - 1];
      const hasNamed = typeof last === 'object' && last !== null;
      // replace() passes: match, groups..., offset, whole string[, named groups]
      const groups = args.slice(0, hasNamed ? -3 : -2) as Array<string | undefined>;
      return expandGoTemplate(rule.to, groups, hasNamed ? (last as Record<string, string | undefined>) : undefined);
    });
    fired.push({ index, from: rule.from, to: rule.to, before: current, after });
    current = after;
  }
  return { path: current, fired };
}

export interface IncomingPath extends MappedPath {
  /** The SERVER_PATH_REWRITES rules that changed the path, in the order they ran. */
  rewrites: FiredRewrite[];
}

/** A path from a trigger as the media server sees it: SERVER_PATH_REWRITES in order, then SERVER_PATH_MAPPINGS. */
export function mapIncomingPath(
  config: { SERVER_PATH_REWRITES?: readonly RewriteRule[]; SERVER_PATH_MAPPINGS: PathMappings },
  path: string,
): IncomingPath {
  const rules = config.SERVER_PATH_REWRITES ?? [];
  const rewritten = rules.length === 0 ? { path, fired: [] } : rewritePath(rules, path);
  return { ...mapPath(config.SERVER_PATH_MAPPINGS, rewritten.path), rewrites: rewritten.fired };
}
