import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, ROOT, runCli, runProcess, tempDir } from '../helpers/relay.ts';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

// Issue 35 item 3.
test('`scanrelay --version` and `-V` print the version from package.json and exit 0', async () => {
  for (const flag of ['--version', '-V']) {
    const r = await runCli([flag]);
    assert.equal(r.code, 0, r.stderr);
    // The commit follows where it is known (a git checkout; CHANGELOG.md).
    assert.match(r.stdout.trim(), new RegExp(`^${pkg.version.replace(/\./g, '\\.')}( \\(commit [0-9a-f]{7,}\\))?$`));
  }
  const help = await runCli(['--help']);
  assert.match(help.stdout, /-V, --version/);
});

// Issue 32 item 12. plex_autoscan writes its default config when the file is missing (config.py:287-289)
// and exits after saving (config.py:304-314, exit(0) with exitOnSave).
test('`server --config <missing file>` writes a starter file there, names it, and stops instead of serving a new secret', async () => {
  const dir = tempDir();
  const typo = join(dir, 'conf', 'cnofig.json');
  const r = await runCli(['--config', typo, 'server'], { cwd: dir, env: { SERVER_PORT: '0', SERVER_IP: '"127.0.0.1"' }, timeoutMs: 30_000 });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.match(r.stderr, new RegExp(`^scanrelay: --config ${typo.replace(/[.]/g, '\\.')} did not exist: wrote a starter config there and stopped`));
  assert.match(r.stderr, /check the path/);
  assert.doesNotMatch(r.stdout + r.stderr, /scan URL/, 'nothing was served');
  assert.ok(existsSync(typo), 'the starter file is written, as plex_autoscan writes its default file');
  assert.match(JSON.parse(readFileSync(typo, 'utf8')).SERVER_PASS, /^[0-9a-f]{32}$/);
  // The next start with the same option serves that file: the user has seen its name.
  assert.ok(!existsSync(join(dir, 'config')), 'no other config was written');
});

test('the default path and SCANRELAY_CONFIG (npm start, the Docker image) still write the starter file and start at once', async () => {
  for (const how of ['default', 'environment'] as const) {
    const dir = tempDir();
    const env: NodeJS.ProcessEnv = { SERVER_PORT: '0', SERVER_IP: '"127.0.0.1"', SCANRELAY_CONFIG: undefined, PLEX_AUTOSCAN_CONFIG: undefined, SCANRELAY_LOGLEVEL: 'INFO' };
    if (how === 'environment') env.SCANRELAY_CONFIG = join(dir, 'volume', 'config.json');
    const out = await startUntilUrl([CLI, 'server'], dir, env);
    assert.match(out, /scan URL: http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}/, `${how}: ${out}`);
    assert.ok(existsSync(how === 'default' ? join(dir, 'config', 'config.json') : join(dir, 'volume', 'config.json')));
  }
});

/** The relay until it logs its scan URL (or exits): its output, then "exit <code>". */
async function startUntilUrl(args: string[], cwd: string, env: NodeJS.ProcessEnv, prefix: string[] = []): Promise<string> {
  const [cmd, ...pre] = [...prefix, process.execPath];
  const { code, out } = await runProcess(cmd!, [...pre, ...args], { cwd, env, until: (o) => o.includes('scan URL') });
  return `${out}\nexit ${code}`;
}

// Issue 35 item 2: Docker creates a missing bind-mount folder owned by root; compose runs the relay as 1000:1000.
const root = process.getuid?.() === 0;
test('a config folder the relay cannot write: one line naming the folder, its owner, the relay\'s user and the fix; exit 2; no stack trace', { skip: !root && 'needs root to run the relay as another user' }, async () => {
  const dir = tempDir();
  chmodSync(dir, 0o755);
  const volume = join(dir, 'config');
  mkdirSync(volume, { mode: 0o755 }); // owned by root, as Docker makes it
  const asUser = ['setpriv', '--reuid=1000', '--regid=1000', '--clear-groups', '--'];
  const env: NodeJS.ProcessEnv = { SCANRELAY_CONFIG: join(volume, 'config.json'), SERVER_PORT: '0', SERVER_IP: '"127.0.0.1"', SCANRELAY_LOGLEVEL: 'INFO', HOME: dir };

  // First start: the starter config cannot be written.
  const first = await startUntilUrl([CLI, 'server'], dir, env, asUser);
  const expected = new RegExp(
    `^scanrelay: cannot write in the folder ${volume} \\(EACCES\\): it belongs to uid 0 \\(gid 0\\) and the relay runs as uid 1000 \\(gid 1000\\)\\. ` +
      `Give it to the relay's user \\(sudo chown -R 1000:1000 .*\\), or run the relay as its owner \\(docker run --user 0:0; compose: user: "0:0"\\)$`,
    'm',
  );
  assert.match(first, expected);
  assert.match(first, /\nexit 2$/);
  assert.doesNotMatch(first, /^\s+at /m, 'no stack trace');
  assert.equal(first.split('\n').filter(Boolean).length, 2, first);

  // A config file the user put there, readable: the queue file cannot be created beside it.
  writeFileSync(join(volume, 'config.json'), JSON.stringify({ SERVER_PASS: 'readable-config', PLEX_ENABLED: false }));
  chmodSync(join(volume, 'config.json'), 0o644);
  const second = await startUntilUrl([CLI, 'server'], dir, env, asUser);
  assert.match(second, expected);
  assert.match(second, /\nexit 2$/);
  assert.doesNotMatch(second, /^\s+at /m);
});

// Issue 42 item 6. plex_autoscan's base_config holds a new uuid4 hex SERVER_PASS, and load() saves a config
// that lacked a key with it (config.py:287-314: upgrade_settings, then save); scanrelay writes the secret
// into the file the same way, keeps the file's mode, and goes on serving.
test('a config without SERVER_PASS gets the generated secret written into it (mode kept, one line), and a restart serves the same URL', async () => {
  const dir = tempDir();
  const file = join(dir, 'config.json');
  const text = '{\n    "SERVER_IP": "127.0.0.1",\n    "SERVER_PORT": 0,\n    "PLEX_TOKEN": ""\n}\n';
  writeFileSync(file, text);
  chmodSync(file, 0o640);
  const env = { SCANRELAY_LOGLEVEL: 'INFO', SERVER_PASS: undefined };
  // "scan URL:" is the line the relay logs once it listens; the SERVER_PASS line before it says "scan URL" too.
  const first = await runProcess(process.execPath, [CLI, '--config', file, 'server'], { cwd: dir, env, until: (o) => o.includes('scan URL:') });
  const url = /scan URL: http:\/\/127\.0\.0\.1:\d+\/([0-9a-f]{32})\b/.exec(first.out);
  assert.ok(url, first.out);
  const written = readFileSync(file, 'utf8');
  assert.equal(JSON.parse(written).SERVER_PASS, url[1], 'the file holds the secret of the logged scan URL');
  assert.equal(written, text.replace('{\n', `{\n    "SERVER_PASS": "${url[1]}",\n`), 'the rest of the file is as the user wrote it');
  assert.equal(statSync(file).mode & 0o777, 0o640, "the file's mode is kept");
  const said = first.out.split('\n').filter((l) => l.includes('SERVER_PASS'));
  assert.equal(said.length, 1, first.out);
  assert.match(said[0]!, /SERVER_PASS was not set: wrote a new random one into .*config\.json \(its mode 0640 kept\)/);
  assert.doesNotMatch(first.out, /random one for this run/);
  // The restart reads it from the file: the same secret, nothing written again.
  const second = await runProcess(process.execPath, [CLI, '--config', file, 'server'], { cwd: dir, env, until: (o) => o.includes('scan URL:') });
  assert.match(second.out, new RegExp(`scan URL: http://127\\.0\\.0\\.1:\\d+/${url[1]!.slice(0, 4)}`), second.out);
  assert.doesNotMatch(second.out, /SERVER_PASS was not set/);
  assert.equal(readFileSync(file, 'utf8'), written);
});
