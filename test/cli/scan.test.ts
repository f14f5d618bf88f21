import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPlexDb } from '../fakes/plex-db.ts';
import { FakePlex } from '../fakes/plex.ts';
import { FakeScanner } from '../fakes/scanner.ts';
import { CLI, runCli, tempDir, waitFor } from '../helpers/relay.ts';

describe('scanrelay scan', () => {
  let fake: FakeScanner;
  let plex: FakePlex;
  let dir: string;
  const config = (name: string, over: Record<string, unknown>) => {
    const path = join(dir, `${name}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        PLEX_SCANNER: fake.escapedScanner,
        PLEX_DATABASE_PATH: join(dir, 'library.db'),
        USE_DOCKER: true,
        PLEX_USER: 'abc',
        DOCKER_NAME: 'plex',
        PLEX_SCAN_METHOD: 'scanner',
        SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] },
        ...over,
      }),
    );
    return path;
  };
  const cli = (configPath: string, args: string[]) => runCli(['--config', configPath, 'scan', ...args], { env: fake.env() });

  before(async () => {
    dir = tempDir();
    fake = new FakeScanner();
    createPlexDb(join(dir, 'library.db'), [
      { id: 1, name: 'Movies', type: 1, roots: ['/data/Movies'] },
      { id: 2, name: 'TV', type: 2, roots: ['/data/TV'] },
    ]).close();
    plex = await new FakePlex().start();
  });
  after(async () => {
    await plex?.stop();
  });

  test('--dry-run maps the path, finds the section in Plex database, prints the command and runs nothing', async () => {
    const cfg = config('dry', {});
    const res = await cli(cfg, ['/movies/Heat (1995)/Heat (1995).mkv', '--dry-run']);
    assert.equal(res.code, 0, res.stderr);
    const line = res.stdout.trimEnd();
    assert.match(line, /^docker exec -u abc -i plex bash -c '/);
    assert.equal(fake.scannerCalls().length, 0);
    const json = await cli(cfg, ['/movies/Heat (1995)/Heat (1995).mkv', '--dry-run', '--json']);
    const out = JSON.parse(json.stdout);
    assert.deepEqual({ ...out, command: undefined }, { method: 'scanner', section: '1', directory: '/data/Movies/Heat (1995)', command: undefined, dryRun: true });
    assert.equal(out.command, line);
    // The printed line is the exact command: pasted into a shell it runs the same scan.
    const pasted = spawnSync('bash', ['-c', line], { env: { ...process.env, ...fake.env() } });
    assert.equal(pasted.status, 0, String(pasted.stderr));
    assert.deepEqual(fake.scannerCalls().at(-1)!.argv, ['--scan', '--refresh', '--section', '1', '--directory', '/data/Movies/Heat (1995)']);
  });

  test('--section and --directory run the scanner now and exit with its status', async () => {
    const cfg = config('run', {});
    const folder = "/data/TV/It's \"Always\" $SUNNY; `x`";
    const before = fake.scannerCalls().length;
    const ok = await cli(cfg, ['--section', '2', '--directory', folder]);
    assert.equal(ok.code, 0, ok.stderr);
    // A real run says what it ran and how it ended; only --dry-run prints the bare command.
    assert.match(ok.stdout.split('\n')[0]!, /^running: docker exec -u abc -i plex bash -c /);
    assert.match(ok.stdout, new RegExp(`^done \\(section 2, ".*"\\): Plex Media Scanner exited with status 0$`, 'm'));
    assert.match(ok.stderr, /'--scan' operation is deprecated/);
    assert.deepEqual(fake.scannerCalls().slice(before).map((c) => c.argv), [['--scan', '--refresh', '--section', '2', '--directory', folder]]);

    fake.failNext(1, 5);
    const failed = await cli(cfg, ['--section', '2', '--directory', folder]);
    assert.equal(failed.code, 5);
    assert.match(failed.stderr, /database is locked/);
    assert.match(failed.stderr, /failed \(section 2, .*\): Plex Media Scanner exited with status 5/);
    assert.doesNotMatch(failed.stdout, /^done/m);

    const json = await cli(cfg, ['--section', '2', '--directory', folder, '--json']);
    assert.equal(json.code, 0);
    assert.equal(JSON.parse(json.stdout).status, 0);
  });

  test('a path in no section, or a missing container, gives a message and a non-zero status', async () => {
    const nowhere = await cli(config('nowhere', {}), ['/elsewhere/file.mkv']);
    assert.equal(nowhere.code, 2);
    assert.match(nowhere.stderr, /"\/elsewhere" is in no Plex section \(section locations: \/data\/Movies, \/data\/TV\)/);
    const noContainer = await cli(config('nocontainer', { DOCKER_NAME: 'plex2' }), ['--section', '1', '--directory', '/data/Movies/X']);
    assert.equal(noContainer.code, 1);
    assert.match(noContainer.stderr, /No such container: plex2/);
    const both = await cli(config('both', {}), ['/movies/X', '--directory', '/data/Movies/X']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /either a path or --directory/);
  });

  test('Ctrl-C stops the scanner it started, and scan exits 130', async () => {
    const cfg = config('interrupt', {});
    const before = fake.scannerCalls().length;
    fake.setHang(true);
    try {
      const proc = spawn(process.execPath, [CLI, '--config', cfg, 'scan', '--section', '1', '--directory', '/data/Movies/Long'], {
        env: { ...process.env, ...fake.env() },
        stdio: 'ignore',
      });
      const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
      await waitFor(() => fake.scannerCalls().length > before, 30_000, 'the scanner to start');
      proc.kill('SIGINT');
      assert.equal(await exited, 130);
      const left = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout.split('\n').filter((l) => l.includes(fake.root));
      assert.deepEqual(left, []);
    } finally {
      fake.setHang(false);
    }
  });

  test('--method api prints the request and makes it; a failing Plex exits 1', async () => {
    const cfg = config('api', { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token });
    const res = await cli(cfg, ['/movies/Up (2009)', '--method', 'api']);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(
      res.stdout.trim(),
      `requesting: GET ${plex.url}/library/sections/1/refresh?path=%2Fdata%2FMovies%2FUp%20(2009) (header X-Plex-Token)\n` +
        'done (section 1, "/data/Movies/Up (2009)"): Plex accepted the refresh and scans the folder in the background',
    );
    assert.deepEqual(plex.refreshes().at(-1), { section: '1', path: '/data/Movies/Up (2009)', token: plex.token });
    await plex.setMode('error503');
    try {
      const down = await cli(cfg, ['--section', '1', '--directory', '/data/Movies/Up (2009)', '--method', 'api']);
      assert.equal(down.code, 1);
      assert.match(down.stderr, /HTTP 503/);
    } finally {
      await plex.setMode('up');
    }
    const noToken = await cli(config('notoken', {}), ['/movies/Up', '--method', 'api']);
    assert.equal(noToken.code, 2);
    assert.match(noToken.stderr, /needs PLEX_TOKEN/);
  });
});
