import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakePlex } from '../fakes/plex.ts';
import { FakeScanner } from '../fakes/scanner.ts';
import { runCli, tempDir } from '../helpers/relay.ts';

/*
 * Issue 49 item 3: the CLI's Plex commands work on every Plex named in TARGETS, not only on the top-level PLEX_*
 * keys. `--target NAME` picks one; the default is the top-level `plex`, as before, else the only Plex there is.
 * Nothing listens on 127.0.0.1:1: a Plex there is down.
 */
const DEAD = 'http://127.0.0.1:1';

describe('sections, sections+, scan and map on a Plex named in TARGETS', () => {
  let fake: FakeScanner;
  let plex4k: FakePlex;
  let dir: string;
  const config = (name: string, value: Record<string, unknown>) => {
    const path = join(dir, `${name}.json`);
    writeFileSync(path, JSON.stringify(value));
    return path;
  };

  before(async () => {
    dir = tempDir();
    fake = new FakeScanner();
    plex4k = await new FakePlex({
      token: '4k-token',
      sections: [
        { id: '7', title: 'Movies 4K', type: 'movie', locations: ['/4k/Movies'] },
        { id: '8', title: 'TV 4K', type: 'show', locations: ['/4k/TV'] },
      ],
    }).start();
  });
  after(async () => {
    await plex4k?.stop();
  });

  /** The top-level Plex is down and tokenless; plex4k is up, with its own token, user, scanner and rewrite. */
  const twoPlex = (name: string, extra: Record<string, unknown> = {}) =>
    config(name, {
      PLEX_LOCAL_URL: DEAD,
      PLEX_USER: 'plex',
      PLEX_SCANNER: '/nowhere/Plex\\ Media\\ Scanner',
      USE_SUDO: true,
      TARGETS: {
        plex4k: { TYPE: 'plex', URL: plex4k.url, TOKEN: plex4k.token, USER: 'uhd', SCANNER: fake.escapedScanner, REWRITE: [{ from: '^/mnt/media/', to: '/4k/' }] },
        jf: { TYPE: 'jellyfin', URL: DEAD, API_KEY: 'k' },
      },
      ...extra,
    });

  test("sections --target runs the named Plex's scanner as its own USER", async () => {
    const res = await runCli(['--config', twoPlex('sections'), 'sections', '--target', 'plex4k'], { env: fake.env() });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'Plex Sections:\n==============\n  1: Movies\n  2: TV Shows\n');
    assert.deepEqual(fake.wrapperCalls().at(-1)!.slice(0, 5), ['sudo', '-u', 'uhd', 'bash', '-c']);
    assert.deepEqual(fake.scannerCalls().at(-1)!.argv, ['--list']);
  });

  test('sections+ --target lists the named Plex through its own URL and token', async () => {
    const res = await runCli(['--config', twoPlex('sections-plus'), 'sections+', '--target', 'plex4k', '--json']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(JSON.parse(res.stdout).sections.map((s: { id: string; locations: string[] }) => [s.id, s.locations]), [['7', ['/4k/Movies']], ['8', ['/4k/TV']]]);
    const call = plex4k.calls.at(-1)!;
    assert.deepEqual([call.path, call.token], ['/library/sections/all', plex4k.token]);
    // The default is still the top-level Plex, which has no token here.
    const top = await runCli(['--config', twoPlex('sections-plus-top'), 'sections+']);
    assert.equal(top.code, 2);
    assert.match(top.stderr, /sections\+ needs PLEX_TOKEN/);
  });

  test('without PLEX_* keys, the only Plex in TARGETS is the default', async () => {
    const cfg = config('only', { PLEX_ENABLED: false, TARGETS: { plex4k: { TYPE: 'plex', URL: plex4k.url, TOKEN: plex4k.token } } });
    const res = await runCli(['--config', cfg, 'sections+']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^7\) Movies 4K$/m);
  });

  test('a --target that is not a Plex, or no target of that name, is a one-line message and exit 2', async () => {
    const cfg = twoPlex('wrong');
    const jf = await runCli(['--config', cfg, 'sections+', '--target', 'jf']);
    assert.equal(jf.code, 2);
    assert.match(jf.stderr, /--target: jf is a jellyfin target; this command works on Plex targets \(Plex targets: plex, plex4k\)/);
    const nope = await runCli(['--config', cfg, 'scan', '--target', 'nope', '--dry-run', '/mnt/media/Movies/X']);
    assert.equal(nope.code, 2);
    assert.match(nope.stderr, /--target: no target is named "nope" \(Plex targets: plex, plex4k\)/);
  });

  test("scan --target sends the named Plex its own path (its REWRITE), in its section, with its token", async () => {
    const cfg = twoPlex('scan');
    const dry = JSON.parse((await runCli(['--config', cfg, 'scan', '--target', 'plex4k', '--dry-run', '--json', '/mnt/media/Movies/Heat (1995)/Heat.mkv'])).stdout);
    assert.deepEqual([dry.method, dry.section, dry.directory], ['api', '7', '/4k/Movies/Heat (1995)']);
    const res = await runCli(['--config', cfg, 'scan', '--target', 'plex4k', '/mnt/media/Movies/Heat (1995)/Heat.mkv']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(plex4k.refreshes().at(-1), { section: '7', path: '/4k/Movies/Heat (1995)', token: plex4k.token });
  });

  test('map asks every Plex for the section: the named one answers though the top-level one is down', async () => {
    const cfg = twoPlex('map');
    const res = await runCli(['--config', cfg, 'map', '/mnt/media/TV/Dark/e1.mkv']);
    assert.equal(res.code, 0, res.stderr);
    const lines = res.stdout.split('\n').filter((l) => l.startsWith('section:'));
    assert.equal(lines.length, 2, res.stdout);
    assert.match(lines[0]!, /^section: none \(PLEX_TOKEN is empty and this machine has no Plex Media Scanner .*\) \[plex\]$/);
    assert.equal(lines[1], 'section: 8 (TV 4K), location /4k/TV [plex4k]');
    const json = JSON.parse((await runCli(['--config', cfg, 'map', '--json', '/mnt/media/TV/Dark/e1.mkv'])).stdout);
    // `section` stays the top-level Plex's, as scripts read it; `sections` has every Plex's.
    assert.equal(json.section, null);
    assert.match(json.sectionError, /^PLEX_TOKEN is empty/);
    assert.deepEqual(json.sections.find((s: { target: string }) => s.target === 'plex4k'), { target: 'plex4k', section: { id: '8', title: 'TV 4K', location: '/4k/TV' }, error: null });
    // --target: that Plex's section is the section.
    const named = await runCli(['--config', cfg, 'map', '--target', 'plex4k', '/mnt/media/TV/Dark/e1.mkv']);
    assert.equal(named.code, 0, named.stderr);
    assert.deepEqual(named.stdout.split('\n').filter((l) => l.startsWith('section:')), ['section: 8 (TV 4K), location /4k/TV']);
    const namedJson = JSON.parse((await runCli(['--config', cfg, 'map', '--json', '--target', 'plex4k', '/mnt/media/TV/Dark/e1.mkv'])).stdout);
    assert.deepEqual([namedJson.section, namedJson.sectionError], [{ id: '8', title: 'TV 4K', location: '/4k/TV' }, null]);
    const jf = await runCli(['--config', cfg, 'map', '--target', 'jf', '/mnt/media/TV/Dark/e1.mkv']);
    assert.equal(jf.code, 2);
    assert.match(jf.stderr, /--target: jf is a jellyfin target, which has no library sections/);
  });

  test('map with only a Plex named in TARGETS shows its section as the section', async () => {
    const cfg = config('map-only', { PLEX_ENABLED: false, TARGETS: { plex4k: { TYPE: 'plex', URL: plex4k.url, TOKEN: plex4k.token, REWRITE: [{ from: '^/mnt/media/', to: '/4k/' }] } } });
    const res = await runCli(['--config', cfg, 'map', '/mnt/media/Movies/Up (2009)/up.mkv']);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^section: 7 \(Movies 4K\), location \/4k\/Movies$/m);
    const json = JSON.parse((await runCli(['--config', cfg, 'map', '--json', '/mnt/media/Movies/Up (2009)/up.mkv'])).stdout);
    assert.deepEqual(json.section, { id: '7', title: 'Movies 4K', location: '/4k/Movies' });
  });
});

describe('scan --target on a target that is not a Plex', () => {
  let jellyfin: FakeMediaServer;
  let dir: string;
  before(async () => {
    dir = tempDir();
    jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
  });
  after(async () => {
    await jellyfin?.stop();
  });

  test('the named Jellyfin is sent the file as the queue would send it, after its own REWRITE', async () => {
    const cfg = join(dir, 'jf.json');
    writeFileSync(cfg, JSON.stringify({ PLEX_ENABLED: false, TARGETS: { jf: { TYPE: 'jellyfin', URL: jellyfin.url, API_KEY: 'jf-key', REWRITE: [{ from: '^/mnt/media/', to: '/media/' }] } } }));
    const dry = await runCli(['--config', cfg, 'scan', '--target', 'jf', '--dry-run', '/mnt/media/Movies/Up (2009)/up.mkv']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(dry.stdout, 'would send jf (jellyfin): /media/Movies/Up (2009)\n');
    assert.equal(jellyfin.updates.length, 0, 'a dry run sends nothing');
    const res = await runCli(['--config', cfg, 'scan', '--target', 'jf', '--json', '/mnt/media/Movies/Up (2009)/up.mkv']);
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(jellyfin.updates.map((u) => u.path), ['/media/Movies/Up (2009)/up.mkv']);
    const out = JSON.parse(res.stdout);
    assert.deepEqual([out.target, out.type, out.directory, out.status], ['jf', 'jellyfin', '/media/Movies/Up (2009)', 0]);
    // Plex's own options make no sense here: refused, nothing sent.
    const section = await runCli(['--config', cfg, 'scan', '--target', 'jf', '--section', '1', '/mnt/media/Movies/Up (2009)/up.mkv']);
    assert.equal(section.code, 2);
    assert.match(section.stderr, /--section, --method and --directory are for a Plex target; jf is a jellyfin target/);
    assert.equal(jellyfin.updates.length, 1);
  });
});
