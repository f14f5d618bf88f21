import { mapPath, type MappedPath, type PathMappings } from './mapping.ts';
import { compilePattern, matchesAnywhere, type Pattern } from './pattern.ts';

/** One rewrite rule (SERVER_PATH_REWRITES, a trigger's or a target's REWRITE): an RE2 pattern and a Go template. */
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
  re: Pattern;
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
    out = rules.map((rule, index) => ({ index, rule, re: compilePattern(rule.from) }));
    compiledCache.set(rules, out);
  }
  return out;
}

/**
 * Go's ReplaceAllString: every non-overlapping match replaced by the expanded template; an empty match
 * right after a previous match is left alone (as Go does, unlike String.replace).
 */
export function replaceAllGo(re: Pattern, input: string, template: string): string {
  const m = re.matcher(input);
  let out = '';
  let last = 0;
  let prevEnd = -1;
  const count = m.groupCount();
  while (m.find()) {
    const start = m.start();
    const end = m.end();
    if (start === end && start === prevEnd) continue;
    const groups: Array<string | undefined> = [];
    for (let g = 0; g <= count; g++) groups.push(m.group(g) ?? undefined);
    const named = m.hasNamedGroups ? Object.fromEntries(Object.entries(m.getNamedGroups()).map(([k, v]) => [k, v ?? undefined])) : undefined;
    out += input.slice(last, start) + expandGoTemplate(template, groups, named);
    last = end;
    prevEnd = end;
  }
  return last === 0 && prevEnd === -1 ? input : out + input.slice(last);
}

/**
 * Applies every rule in order, each to the previous one's result, replacing all matches (Go's
 * ReplaceAllString). autoscan stops at the first rule that matches (its issue #212); SERVER_PATH_REWRITES
 * does not, so a trigger's rewrite and a target's rewrite can follow one another in one list.
 */
export function rewritePath(rules: readonly RewriteRule[], path: string): { path: string; fired: FiredRewrite[] } {
  const fired: FiredRewrite[] = [];
  let current = path;
  for (const { index, rule, re } of compiled(rules)) {
    if (!matchesAnywhere(re, current)) continue;
    const after = replaceAllGo(re, current, rule.to);
    fired.push({ index, from: rule.from, to: rule.to, before: current, after });
    current = after;
  }
  return { path: current, fired };
}

/**
 * autoscan's rewriter (autoscan.go:64-86, NewRewriter): the first rule whose pattern matches rewrites the
 * path (every match in it) and the others are not tried. The per-trigger and per-target rules use it, so
 * an imported rule list means what it meant in autoscan.
 */
export function rewriteFirstMatch(rules: readonly RewriteRule[], path: string): string {
  for (const { rule, re } of compiled(rules)) {
    if (matchesAnywhere(re, path)) return replaceAllGo(re, path, rule.to);
  }
  return path;
}

/** A place's rewrite (a trigger's or a target's), compiled once: undefined when it has no rules. */
export type PathRewriter = (path: string) => string;

/**
 * How a place's list of rules applies: `first` (autoscan's, the default) stops at the first rule that matches;
 * `all` runs every rule in turn on the previous one's result (autopulse's utils/src/rewrite.rs:76-85), so a
 * list imported from autopulse means what it meant there. Chained rules cannot be folded into one first-match
 * list in general (a rule may match only what an earlier one wrote), hence a mode rather than a translation.
 */
export type RewriteMode = 'first' | 'all';

export function placeRewriter(rules: readonly RewriteRule[] | undefined, mode: RewriteMode = 'first'): PathRewriter | undefined {
  if (!rules || rules.length === 0) return undefined;
  compiled(rules);
  return mode === 'all' ? (path) => rewritePath(rules, path).path : (path) => rewriteFirstMatch(rules, path);
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
