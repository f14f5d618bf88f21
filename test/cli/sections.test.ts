import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';
import { FakeScanner } from '../fakes/scanner.ts';
import { runCli, tempDir } from '../helpers/relay.ts';

describe('scanrelay sections and sections+', () => {
  let fake: FakeScanner;
  let plex: FakePlex;
  let dir: string;
  const config = (name: string, over: Record<string, unknown>) => {
    const path = join(dir, `${name}.json`);
    writeFileSync(path, JSON.stringify({ PLEX_SCANNER: fake.escapedScanner, PLEX_USER: 'plex', ...over }));
    return path;
  };

  before(async () => {
    dir = tempDir();
    fake = new FakeScanner();
    plex = await new FakePlex({
      sections: [
        { id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] },
        { id: '12', title: 'TV Shows', type: 'show', locations: ['/data/TV', '/data/TV2/'] },
      ],
    }).start();
  });
  after(async () => {
    await plex?.stop();
  });

  test('sections runs the scanner --list through sudo as PLEX_USER and prints its lines under the header', async () => {
    const res = await runCli(['--config', config('sudo', { USE_SUDO: true }), 'sections'], { env: fake.env() });
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'Plex Sections:\n==============\n  1: Movies\n  2: TV Shows\n');
    const wrapper = fake.wrapperCalls().at(-1)!;
    assert.deepEqual(wrapper.slice(0, 5), ['sudo', '-u', 'plex', 'bash', '-c']);
    const call = fake.scannerCalls().at(-1)!;
    assert.deepEqual(call.argv, ['--list']);
    assert.equal(call.env.PLEX_MEDIA_SERVER_APPLICATION_SUPPORT_DIR, '/var/lib/plexmediaserver/Library/Application Support');
    assert.equal(plex.calls.length, 0, 'sections needs no Plex API');
  });

  test('sections --json through docker, and a failing scanner passes its status on', async () => {
    const cfg = config('docker', { USE_DOCKER: true, PLEX_USER: 'abc', DOCKER_NAME: 'plex' });
    const res = await runCli(['--config', cfg, 'sections', '--json'], { env: fake.env() });
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout);
    assert.deepEqual(out.sections, [{ id: '1', title: 'Movies' }, { id: '2', title: 'TV Shows' }]);
    assert.match(out.command, /^docker exec -u abc -i plex bash -c '.*Scanner --list'$/);
    assert.deepEqual(fake.wrapperCalls().at(-1)!.slice(0, 8), ['docker', 'exec', '-u', 'abc', '-i', 'plex', 'bash', '-c']);
    fake.failNext(1, 4);
    const failed = await runCli(['--config', cfg, 'sections'], { env: fake.env() });
    assert.equal(failed.code, 4);
    assert.match(failed.stderr, /database is locked/);
  });

  test('sections+ lists each section and its locations from the API with the token', async () => {
    const cfg = config('api', { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token });
    const res = await runCli(['--config', cfg, 'sections+']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(
      res.stdout,
      'Plex Sections:\n==============\n\n1) Movies\n---------\n/data/Movies/\n\n12) TV Shows\n------------\n/data/TV/\n/data/TV2/\n',
    );
    const call = plex.calls.at(-1)!;
    assert.equal(call.path, '/library/sections/all');
    assert.equal(call.token, plex.token);
    const json = JSON.parse((await runCli(['--config', cfg, 'sections+', '--json'])).stdout);
    assert.deepEqual(json.sections.map((s: { id: string; locations: string[] }) => [s.id, s.locations]), [['1', ['/data/Movies']], ['12', ['/data/TV', '/data/TV2/']]]);
  });

  test('sections+ without a token, or with a wrong one, says so and exits non-zero', async () => {
    const none = await runCli(['--config', config('none', { PLEX_LOCAL_URL: plex.url }), 'sections+']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /sections\+ needs PLEX_TOKEN/);
    const wrong = await runCli(['--config', config('wrong', { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: 'nope' }), 'sections+']);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /Plex refused the token \(401\): check PLEX_TOKEN/);
  });
});
