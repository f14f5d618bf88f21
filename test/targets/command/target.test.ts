import assert from 'node:assert/strict';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pino from 'pino';
import { commandTargetSchema } from '../../../src/targets/command/schema.ts';
import { commandInvocation, createCommandTarget } from '../../../src/targets/command/target.ts';
import { scanItem } from '../../helpers/plex-target.ts';
import { tempDir } from '../../helpers/relay.ts';

const silent = pino({ level: 'silent' });
const dir = tempDir('scanrelay-command-');

/** A script that writes its arguments (one a line) and its environment to files in `dir`, then exits `code`. */
function script(name: string, code = 0, extra = ''): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\nprintf '%s\\n' "$@" > "${dir}/${name}.args"\nenv > "${dir}/${name}.env"\n${extra}\necho "done with $#"\nexit ${code}\n`);
  chmodSync(path, 0o755);
  return path;
}
const target = (over: Record<string, unknown>) => createCommandTarget('hook', commandTargetSchema.parse({ TYPE: 'command', ...over }), silent);

// autopulse's command.rs:33-89 runs `path` with the file as its argument, or `raw` through `sh -c` with
// $FILE_PATH; here COMMAND is an argv list only, run without a shell, in the clean environment of the
// before/after commands (src/targets/plex/commands.ts).
describe('command target', { skip: process.platform === 'win32' }, () => {
  test('commandInvocation: COMMAND then the files (or the folder) as arguments; SCANRELAY_* in a clean environment', () => {
    const item = scanItem({ folder: '/tv/Show/S01', files: ['/tv/Show/S01/a b.mkv', '/tv/Show/S01/$(touch x).mkv'], updateType: 'Created', source: 'Sonarr', event: 'Download' });
    const { argv, env } = commandInvocation('hook', ['/bin/notify', '--quiet'], item, { PATH: '/usr/bin', HOME: '/root', SERVER_PASS: 'secret', PLEX_TOKEN: 't', LC_ALL: 'C' });
    assert.deepEqual(argv, ['/bin/notify', '--quiet', '/tv/Show/S01/a b.mkv', '/tv/Show/S01/$(touch x).mkv']);
    assert.deepEqual(env, {
      PATH: '/usr/bin',
      HOME: '/root',
      LC_ALL: 'C',
      SCANRELAY_TARGET: 'hook',
      SCANRELAY_PATH: '/tv/Show/S01',
      SCANRELAY_FILES: '/tv/Show/S01/a b.mkv\n/tv/Show/S01/$(touch x).mkv',
      SCANRELAY_UPDATE_TYPE: 'Created',
      SCANRELAY_SOURCE: 'Sonarr',
      SCANRELAY_EVENT: 'Download',
    });
    assert.deepEqual(commandInvocation('hook', ['x'], scanItem({ folder: '/tv/A', files: ['/tv/A/1.mkv'], moreFiles: 5 }), {}).argv, ['x', '/tv/A']);
  });

  test('runs the program without a shell: a path with shell syntax is one argument, never run; the rewrite applies; exit 0 is done', async () => {
    const prog = script('ok.sh');
    process.env.SCANRELAY_TEST_SECRET = 'must-not-leak';
    try {
      const t = target({ COMMAND: [prog, 'first arg'], REWRITE: [{ from: '^/mnt/', to: '/data/' }] });
      const result = await t.deliver(scanItem({ folder: '/mnt/tv/A', files: [`/mnt/tv/A/$(touch ${dir}/pwned).mkv`] }));
      assert.deepEqual(result, { outcome: 'done', detail: `${prog} exited 0` });
      assert.deepEqual(readFileSync(`${prog}.args`, 'utf8').split('\n').filter(Boolean), ['first arg', `/data/tv/A/$(touch ${dir}/pwned).mkv`]);
      assert.throws(() => readFileSync(join(dir, 'pwned')));
      const env = readFileSync(`${prog}.env`, 'utf8');
      assert.match(env, /^SCANRELAY_PATH=\/data\/tv\/A$/m);
      assert.doesNotMatch(env, /must-not-leak/);
    } finally {
      delete process.env.SCANRELAY_TEST_SECRET;
    }
  });

  test('a non-zero exit is retried, with its last output line; a program that cannot start fails', async () => {
    const bad = await target({ COMMAND: [script('bad.sh', 3)] }).deliver(scanItem({ folder: '/tv/A' }));
    assert.ok(bad.outcome === 'retry' && /bad\.sh exited 3 \(last output: done with 1\)/.test(bad.error), JSON.stringify(bad));
    const missing = await target({ COMMAND: [join(dir, 'no-such-program')] }).deliver(scanItem({ folder: '/tv/A' }));
    assert.ok(missing.outcome === 'failed' && /cannot run .*no-such-program: .*ENOENT/.test(missing.error), JSON.stringify(missing));
    assert.equal((await target({ COMMAND: [join(dir, 'no-such-program')] }).available()).ok, false);
    const sh = await target({ COMMAND: ['sh'] }).available();
    assert.ok(sh.ok && /^runs \/.*\/sh$/.test(sh.note ?? ''), JSON.stringify(sh));
  });

  test('issue 47 item 3: a path the REWRITE leaves relative or "-"-leading fails the delivery with the reason; the program never runs', async () => {
    const prog = script('opt.sh');
    const cases: Array<[Record<string, unknown>, string]> = [
      // A rewrite that strips the root leaves a relative path; one that ends in "-" gives an option.
      [{ REWRITE: [{ from: '^/mnt/', to: '' }] }, 'tv/A'],
      [{ REWRITE: [{ from: '^/mnt/tv/', to: '--output=/tmp/x ' }] }, '--output=/tmp/x A'],
      [{ REWRITE: [{ from: '^/mnt/tv/', to: '-' }] }, '-A'],
    ];
    for (const [over, shown] of cases) {
      rmSync(`${prog}.args`, { force: true });
      const result = await target({ COMMAND: [prog], ...over }).deliver(scanItem({ folder: '/mnt/tv/A', files: ['/mnt/tv/A/e.mkv'] }));
      assert.equal(result.outcome, 'failed', JSON.stringify(result));
      assert.ok(result.outcome === 'failed' && result.error.includes(JSON.stringify(shown)) && /not absolute after the target's REWRITE/.test(result.error), result.outcome === 'failed' ? result.error : '');
      assert.throws(() => readFileSync(`${prog}.args`), 'the program did not run');
    }
    // An absolute result runs as before.
    const ok = await target({ COMMAND: [prog], REWRITE: [{ from: '^/mnt/', to: '/data/' }] }).deliver(scanItem({ folder: '/mnt/tv/A', files: ['/mnt/tv/A/e.mkv'] }));
    assert.equal(ok.outcome, 'done');
  });

  test('issue 47 item 2: SCANRELAY_FILES never gets an extra line: a path with a newline (from a queue kept from before) fails, the program never runs', async () => {
    const prog = script('nl.sh');
    const result = await target({ COMMAND: [prog] }).deliver(scanItem({ folder: '/tv/A', files: ['/tv/A/e.mkv\n/etc/passwd', '/tv/A/f.mkv'] }));
    assert.ok(result.outcome === 'failed' && /holds a control character/.test(result.error), JSON.stringify(result));
    assert.throws(() => readFileSync(`${prog}.env`), 'the program did not run');
  });

  test('TIMEOUT kills the program and its children; the scan is tried again', async () => {
    // The child sleeps in the background and holds the output pipe: only a group kill ends both.
    const prog = script('slow.sh', 0, 'sleep 30 &\nsleep 30');
    const result = await target({ COMMAND: [prog], TIMEOUT: 0.5 }).deliver(scanItem({ folder: '/tv/A' }));
    assert.ok(result.outcome === 'retry' && /timed out after 0\.5 s and was killed/.test(result.error), JSON.stringify(result));
  });
});
