import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli, tempDir } from '../helpers/relay.ts';
import { UserError } from '../../src/core/errors.ts';
import { parseConfig } from '../../src/config/load.ts';
import { expandGoTemplate, mapIncomingPath, placeRewriter, rewriteFirstMatch, rewritePath } from '../../src/paths/rewrite.ts';
import type { Intent } from '../../src/intake/intent.ts';
import { resolveIntent } from '../../src/intake/resolve.ts';

/*
 * autoscan's rewrites are Go regular expressions with Go replacement templates (autoscan.go NewRewriter:
 * regexp.Compile + ReplaceAllString). The template cases follow the documented rules of Go's
 * regexp.Expand: `$name` takes the longest run of letters, digits and `_`, missing groups are empty,
 * `$$` is a dollar, a malformed `$` is kept.
 */
describe('rewritePath: one rule, Go semantics', () => {
  const cases: Array<[string, { from: string; to: string }, string, string]> = [
    ['plain prefix', { from: '^/mnt/unionfs/Media/', to: '/data/' }, '/mnt/unionfs/Media/TV/x.mkv', '/data/TV/x.mkv'],
    ['no match leaves the path', { from: '^/mnt/unionfs/Media/', to: '/data/' }, '/srv/TV/x.mkv', '/srv/TV/x.mkv'],
    ['$1 group', { from: '^/mnt/(\\w+)/Media/', to: '/data/$1/' }, '/mnt/gd/Media/TV/x.mkv', '/data/gd/TV/x.mkv'],
    ['${1} group followed by letters', { from: '^/mnt/(\\w+)/', to: '/data/${1}x/' }, '/mnt/gd/a', '/data/gdx/a'],
    ['$1x is the group named "1x" in Go: empty (JavaScript would give "gdx")', { from: '^/mnt/(\\w+)/', to: '/data/$1x/' }, '/mnt/gd/a', '/data//a'],
    ['$$ is a dollar', { from: '^/a/', to: '/$$/' }, '/a/b', '/$/b'],
    ['a missing group is empty (JavaScript keeps "$3")', { from: '^/(a)/', to: '/$3/' }, '/a/b', '//b'],
    ['JavaScript-only $& is literal text in Go', { from: '^/a/', to: '/$&/' }, '/a/b', '/$&/b'],
    ['named groups (?P<name>) and ${name}', { from: '^/mnt/(?P<drive>\\w+)/', to: '/data/${drive}/' }, '/mnt/gd/a', '/data/gd/a'],
    ['$0 is the whole match', { from: 'TV', to: '[$0]' }, '/TV/a', '/[TV]/a'],
    ['every match is replaced (ReplaceAllString)', { from: ' ', to: '_' }, '/a b/c d', '/a_b/c_d'],
    ['leading (?i) flag', { from: '(?i)^/MNT/', to: '/data/' }, '/mnt/a', '/data/a'],
    ['. matches one whole character, as Go (UTF-8 runes)', { from: '^/(.)/', to: '/$1$1/' }, '/🎬/a', '/🎬🎬/a'],
  ];
  for (const [name, rule, input, expected] of cases) {
    test(name, () => assert.equal(rewritePath([rule], input).path, expected));
  }

  test('expandGoTemplate: an unclosed ${ keeps the dollar', () => {
    assert.equal(expandGoTemplate('/x/${1', ['m', 'g'], undefined), '/x/${1');
  });
});

describe('rewritePath: every rule, in order (autoscan stops at the first: its issue #212)', () => {
  const rules = [
    { from: '^/tv/', to: '/mnt/unionfs/Media/TV/' },
    { from: '^/mnt/unionfs/Media/', to: '/data/' },
    { from: '^/never/', to: '/x/' },
  ];
  test('a trigger rewrite then a target rewrite both apply', () => {
    const out = rewritePath(rules, '/tv/Westworld/Season 1/s01e01.mkv');
    assert.equal(out.path, '/data/TV/Westworld/Season 1/s01e01.mkv');
    assert.deepEqual(
      out.fired.map((f) => [f.index, f.before, f.after]),
      [
        [0, '/tv/Westworld/Season 1/s01e01.mkv', '/mnt/unionfs/Media/TV/Westworld/Season 1/s01e01.mkv'],
        [1, '/mnt/unionfs/Media/TV/Westworld/Season 1/s01e01.mkv', '/data/TV/Westworld/Season 1/s01e01.mkv'],
      ],
    );
  });
  test('rewrites run before SERVER_PATH_MAPPINGS', () => {
    const out = mapIncomingPath(
      { SERVER_PATH_REWRITES: [{ from: '^/tv/', to: '/mnt/unionfs/Media/TV/' }], SERVER_PATH_MAPPINGS: { '/data/': ['/mnt/unionfs/Media/'] } },
      '/tv/Dark/e1.mkv',
    );
    assert.equal(out.path, '/data/TV/Dark/e1.mkv');
    assert.equal(out.rewrites.length, 1);
    assert.deepEqual(out.match, { key: '/data/', value: '/mnt/unionfs/Media/' });
  });
});

describe('SERVER_PATH_REWRITES in the config', () => {
  test('an invalid pattern is a config error naming the key and the index', () => {
    assert.throws(
      () => parseConfig({ SERVER_PATH_REWRITES: [{ from: '^/ok/', to: '/a/' }, { from: '^/mnt/(unclosed', to: '/b/' }] }),
      (e: Error) => e instanceof UserError && /SERVER_PATH_REWRITES\.1\.from/.test(e.message) && /invalid regular expression/.test(e.message),
    );
  });
  test('RE2 syntax as Go has it: \\z, \\pN, [[:alpha:]] and (?P<name>) are patterns, not letters', () => {
    const rules = (from: string, to = 'X') => [{ from, to }];
    assert.equal(rewritePath(rules('/a\\z'), '/a').path, 'X');
    assert.equal(rewritePath(rules('/az'), '/a').path, '/a');
    assert.equal(rewritePath(rules('\\pN+'), '/s01').path, '/sX');
    assert.equal(rewritePath(rules('^/[[:alpha:]]+'), '/tv/x').path, 'X/x');
    assert.equal(rewritePath(rules('^/(?P<top>[^/]+)/', '/mnt/${top}/'), '/tv/x').path, '/mnt/tv/x');
  });
  test('a pattern RE2 refuses stops the start, naming the key, the pattern and the reason', () => {
    for (const [from, reason] of [
      ['(?=a)b', /invalid or unsupported Perl syntax/],
      ['(?<=a)b', /invalid named capture/],
      ['(a)\\1', /invalid escape sequence/],
      ['a**', /invalid nested repetition operator/],
    ] as const) {
      assert.throws(
        () => parseConfig({ SERVER_PATH_REWRITES: [{ from, to: '/b' }] }),
        (e: Error) => e instanceof UserError && e.message.includes(`SERVER_PATH_REWRITES.0.from: invalid regular expression ${JSON.stringify(from)} (RE2 syntax)`) && reason.test(e.message),
        from,
      );
    }
    for (const key of ['PLEX_REWRITE', 'JELLYFIN', 'A_TRAIN', 'WATCH']) {
      const bad = [{ from: 'a**', to: '' }];
      const config =
        key === 'PLEX_REWRITE' ? { PLEX_REWRITE: bad } : key === 'JELLYFIN' ? { JELLYFIN: { REWRITE: bad } } : key === 'A_TRAIN' ? { A_TRAIN: { DRIVES: [{ ID: 'd', REWRITE: bad }] } } : { WATCH: { EXCLUDE: ['a**'] } };
      assert.throws(() => parseConfig(config), /invalid regular expression "a\*\*" \(RE2 syntax\): invalid nested repetition/, key);
    }
  });
  test('a pattern that backtracks for minutes in JavaScript runs in linear time on RE2: ^/mnt/(\\w+\\s?)+$ on a 50-character path', { timeout: 20_000 }, () => {
    // With a JavaScript RegExp this one path took 134 s (issue 33); the test would time out.
    const path = `/mnt/${'a'.repeat(44)}!`;
    assert.equal(path.length, 50);
    const rules = [{ from: '^/mnt/(\\w+\\s?)+$', to: '/data/$1' }];
    assert.equal(rewritePath(rules, path).path, path);
    assert.equal(rewriteFirstMatch(rules, path), path);
    assert.equal(rewritePath(rules, '/mnt/abc def').path, '/data/def');
  });
  test("Go's ReplaceAllString: an empty match right after a match is not replaced (String.replace would)", () => {
    assert.equal(rewritePath([{ from: 'a*', to: '-' }], 'baaac').path, '-b-c-');
    assert.equal('baaac'.replace(/a*/g, '-'), '-b--c-');
  });
  test('a rule without "to" is refused', () => {
    assert.throws(() => parseConfig({ SERVER_PATH_REWRITES: [{ from: '^/a/' }] }), /SERVER_PATH_REWRITES\.0\.to/);
  });
  test('default: none', () => assert.deepEqual(parseConfig({}).config.SERVER_PATH_REWRITES, []));
});

describe('resolveIntent applies the rewrites and the trigger priority', () => {
  const { config } = parseConfig({
    SERVER_PATH_REWRITES: [{ from: '^/tv/', to: '/mnt/unionfs/Media/TV/' }, { from: '^/mnt/unionfs/Media/', to: '/data/' }],
    SERVER_SCAN_PRIORITIES: { '3': ['/Anime/'] },
  });
  const intent = (path: string, priority?: number): Extract<Intent, { kind: 'scan' }> => ({
    kind: 'scan',
    source: 'Sonarr',
    event: 'Download',
    updateType: 'Created',
    paths: [{ path, kind: 'file' }],
    priority,
  });

  test('a webhook path is rewritten by every rule before it is queued', () => {
    const [o] = resolveIntent(intent('/tv/Dark/Season 1/e1.mkv'), config, () => 'missing');
    assert.ok(o && 'request' in o);
    assert.equal(o.request.folder, '/data/TV/Dark/Season 1');
  });
  test("the trigger's priority is used when no SERVER_SCAN_PRIORITIES entry matches", () => {
    const [o] = resolveIntent(intent('/tv/Dark/e1.mkv', -5), config, () => 'missing');
    assert.ok(o && 'request' in o);
    assert.equal(o.request.priority, -5);
  });
  test('a SERVER_SCAN_PRIORITIES match wins over the trigger priority', () => {
    const [o] = resolveIntent(intent('/tv/Anime/X/e1.mkv', -5), config, () => 'missing');
    assert.ok(o && 'request' in o);
    assert.equal(o.request.priority, 3);
  });
});

describe("rewriteFirstMatch: a place's rules as autoscan's rewriter applies them (autoscan.go:64-86)", () => {
  test('the first rule that matches wins; the others are not tried', () => {
    const rules = [
      { from: '^/TV/', to: '/mnt/unionfs/TV/' },
      { from: '^/', to: '/mnt/unionfs/Media/' },
    ];
    assert.equal(rewriteFirstMatch(rules, '/TV/Dark'), '/mnt/unionfs/TV/Dark');
    assert.equal(rewriteFirstMatch(rules, '/Movies/Up'), '/mnt/unionfs/Media/Movies/Up');
    assert.equal(rewritePath(rules, '/TV/Dark').path, '/mnt/unionfs/Media/mnt/unionfs/TV/Dark', 'SERVER_PATH_REWRITES runs every rule');
  });
  test("a_train_test.go:40-41's rule: $1 names no group, so it is empty", () => {
    assert.equal(rewriteFirstMatch([{ from: '^/TV/*', to: '/mnt/unionfs/Media/TV/$1' }], '/TV/Legion/Season 1'), '/mnt/unionfs/Media/TV/Legion/Season 1');
  });
});

describe('the relay refuses to start on a pattern RE2 rejects', () => {
  test('scanrelay server exits at once, naming the key, the pattern and the reason', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ SERVER_PORT: 0, SERVER_IP: '127.0.0.1', WATCH: { EXCLUDE: ['(?<!x)y'] } }));
    const out = await runCli(['--config', file, '--queuefile', join(dir, 'q.db'), 'server']);
    assert.notEqual(out.code, 0);
    assert.match(out.stderr, /WATCH\.EXCLUDE\.0: invalid regular expression "\(\?<!x\)y" \(RE2 syntax\): invalid named capture/);
  });
});

/*
 * REWRITE_MODE "all": autopulse's Rewrite::rewrite_path runs every rule in turn, each on the previous result,
 * replacing all matches (crates/utils/src/rewrite.rs:76-85). These replay its own tests
 * (crates/utils/src/tests/rewrite.rs:34-71) and a chain, where the second rule matches only what the first wrote.
 */
describe('placeRewriter: REWRITE_MODE first (autoscan) and all (autopulse)', () => {
  test("autopulse's own cases: a missing or extra slash is kept, several rules each rewrite their own paths", () => {
    const one = (from: string, to: string) => placeRewriter([{ from, to }], 'all')!;
    assert.equal(one('/testing', '/movies/')('/testing/movie.mkv'), '/movies//movie.mkv');
    assert.equal(one('/testing/', '/movies')('/testing/movie.mkv'), '/moviesmovie.mkv');
    assert.equal(one('/testing/movie(\\d+)', '/movies/film$1')('/testing/movie123.mkv'), '/movies/film123.mkv');
    const two = placeRewriter([{ from: '/tv/', to: '/series/' }, { from: '/film/', to: '/movies/' }], 'all')!;
    assert.equal(two('/film/film123.mkv'), '/movies/film123.mkv');
    assert.equal(two('/tv/episode456.mkv'), '/series/episode456.mkv');
  });

  test('chained rules: all runs the second on what the first wrote; first stops after the first', () => {
    const rules = [
      { from: '^/downloads/', to: '/media/' },
      { from: '^/media/tv/(.*)$', to: '/data/TV/$1' },
    ];
    assert.equal(placeRewriter(rules, 'all')!('/downloads/tv/Dark/e1.mkv'), '/data/TV/Dark/e1.mkv');
    assert.equal(placeRewriter(rules, 'first')!('/downloads/tv/Dark/e1.mkv'), '/media/tv/Dark/e1.mkv');
    assert.equal(placeRewriter(rules)!('/downloads/tv/Dark/e1.mkv'), '/media/tv/Dark/e1.mkv', 'first is the default');
    // The rule doc's own pair (rewrite.rs:15-22): each path is rewritten by the rule that matches it.
    const doc = placeRewriter([{ from: '/testing', to: '/production' }, { from: '^/old/path/(.*)$', to: '/new/path/$1' }], 'all')!;
    assert.equal(doc('/old/path/testing/x.mkv'), '/new/path/production/x.mkv');
  });

  test('a TARGETS entry and a WATCH.PATHS entry take REWRITE_MODE; anything but first or all is refused', () => {
    const cfg = parseConfig({ TARGETS: { jf: { TYPE: 'jellyfin', URL: 'http://127.0.0.1:1', API_KEY: 'k', REWRITE: [{ from: 'a', to: 'b' }], REWRITE_MODE: 'all' } } }).config as Record<string, any>;
    assert.equal(cfg.TARGETS.jf.REWRITE_MODE, 'all');
    assert.throws(() => parseConfig({ TARGETS: { jf: { TYPE: 'jellyfin', URL: 'http://127.0.0.1:1', API_KEY: 'k', REWRITE_MODE: 'each' } } }), /REWRITE_MODE/);
    const w = parseConfig({ WATCH: { ENABLED: true, PATHS: [{ PATH: '/w', REWRITE_MODE: 'all' }] } }).config as Record<string, any>;
    assert.equal(w.WATCH.PATHS[0].REWRITE_MODE, 'all');
  });
});

describe('every target kind honours REWRITE_MODE (the path each one is sent)', () => {
  test('plex, jellyfin, emby, tdarr, command, sonarr: "all" runs the chain, "first" stops', async () => {
    const { buildTargets } = await import('../../src/targets/index.ts');
    const { silentLogger } = await import('../../src/core/logger.ts');
    const chain = [
      { from: '^/downloads/', to: '/media/' },
      { from: '^/media/tv/(.*)$', to: '/data/TV/$1' },
    ];
    const kinds: Record<string, Record<string, unknown>> = {
      plex: { TYPE: 'plex', URL: 'http://127.0.0.1:1', TOKEN: 't' },
      jellyfin: { TYPE: 'jellyfin', URL: 'http://127.0.0.1:1', API_KEY: 'k' },
      emby: { TYPE: 'emby', URL: 'http://127.0.0.1:1', API_KEY: 'k' },
      tdarr: { TYPE: 'tdarr', URL: 'http://127.0.0.1:1', DB_ID: 'd' },
      command: { TYPE: 'command', COMMAND: ['true'] },
      sonarr: { TYPE: 'sonarr', URL: 'http://127.0.0.1:1', API_KEY: 'k' },
    };
    for (const mode of ['all', 'first'] as const) {
      const TARGETS = Object.fromEntries(Object.entries(kinds).map(([n, e]) => [n, { ...e, REWRITE: chain, REWRITE_MODE: mode }]));
      const { config } = parseConfig({ PLEX_ENABLED: false, TARGETS });
      const targets = await buildTargets(config, silentLogger());
      for (const name of Object.keys(kinds)) {
        const t = targets.find((x) => x.name === name);
        assert.ok(t?.toTargetPath, name);
        assert.equal(t.toTargetPath('/downloads/tv/Dark'), mode === 'all' ? '/data/TV/Dark' : '/media/tv/Dark', `${name} ${mode}`);
      }
    }
  });
});
