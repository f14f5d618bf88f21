import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, runProcess, startNodeFlags, tempDir, waitFor } from './helpers/relay.ts';

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const unit = readFileSync(join(ROOT, 'system', 'scanrelay.service'), 'utf8');
/** The node flags `npm start` runs the relay with (the young generation's ceiling: bin/scanrelay.js). */
const START_FLAGS = startNodeFlags();

/** Dockerfile instructions with continuation lines joined. */
function instructions(text: string): Array<{ op: string; args: string }> {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op!.toUpperCase(), args: rest.join(' ') };
    });
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const run = runProcess;

test('the Dockerfile copies files that exist, runs `bin/scanrelay.js server` as a non-root user with /config as the volume', () => {
  const ins = instructions(dockerfile);
  const froms = ins.filter((i) => i.op === 'FROM').map((i) => i.args);
  assert.ok(froms.length === 2 && froms.every((f) => f.startsWith('node:20-slim')), `two node:20-slim stages: ${froms}`);
  for (const copy of ins.filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))) {
    const parts = copy.args.split(/\s+/);
    for (const src of parts.slice(0, -1)) assert.ok(existsSync(join(ROOT, src)), `COPY source ${src} exists`);
  }
  const cmd = JSON.parse(ins.find((i) => i.op === 'CMD')!.args);
  assert.deepEqual(cmd, ['node', ...START_FLAGS, 'bin/scanrelay.js', 'server']);
  assert.ok(existsSync(join(ROOT, cmd.at(-2)!)));
  // The build stage compiles dist/ (npm ci's prepare script) and the final stage takes it.
  assert.match(dockerfile, /COPY --from=build \/app\/dist \.\/dist/);
  assert.match(dockerfile, /RUN (?:\w+="\$\w+" )?npm ci && npm prune --omit=dev/);
  // The run stage has no source tree: the launcher runs the bundle (no tsx there).
  assert.ok(!/^COPY src\b/m.test(dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))), 'no src/ in the final image');
  const user = ins.filter((i) => i.op === 'USER').at(-1)?.args;
  assert.ok(user && user !== 'root' && user !== '0', `non-root USER: ${user}`);
  assert.match(ins.find((i) => i.op === 'VOLUME')!.args, /\/config/);
  assert.match(ins.find((i) => i.op === 'ENV')!.args, /SCANRELAY_CONFIG=\/config\/config\.json/);
  // better-sqlite3 is built in the first stage, whose compilers do not reach the final image.
  const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  assert.ok(!/g\+\+|make /.test(finalStage));
  assert.ok(existsSync(join(ROOT, 'package-lock.json')));
});

test('with only SCANRELAY_CONFIG set, the relay keeps config.json and queue.db together in that folder, and the HEALTHCHECK command passes against it', async () => {
  const volume = tempDir('scanrelay-volume-');
  const workdir = tempDir('scanrelay-app-');
  const port = await freePort();
  const env = { SCANRELAY_CONFIG: join(volume, 'config.json'), SCANRELAY_LOGLEVEL: 'INFO', SERVER_PORT: String(port), SERVER_IP: '"127.0.0.1"' };
  const proc = spawn(process.execPath, [join(ROOT, 'bin', 'scanrelay.js'), 'server'], { cwd: workdir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  try {
    await waitFor(() => out.includes('scan URL') || proc.exitCode !== null, 30_000, 'relay start');
    assert.match(out, new RegExp(`:${port}/`), out);
    assert.ok(existsSync(join(volume, 'config.json')), 'starter config written into the volume');
    assert.ok(existsSync(join(volume, 'queue.db')), 'queue beside the config');

    const health = JSON.parse(instructions(dockerfile).find((i) => i.op === 'HEALTHCHECK')!.args.replace(/^.*?CMD\s+/, ''));
    assert.equal(health[0], 'node', 'the check needs no curl in a slim image');
    const ok = await run(process.execPath, health.slice(1), { env });
    assert.equal(ok.code, 0, ok.out);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
  }
  const health = JSON.parse(instructions(dockerfile).find((i) => i.op === 'HEALTHCHECK')!.args.replace(/^.*?CMD\s+/, ''));
  const down = await run(process.execPath, health.slice(1), { env });
  assert.notEqual(down.code, 0, 'unhealthy once the relay is gone');
  assert.match(down.out, new RegExp(`unhealthy: .*127\\.0\\.0\\.1:${port}/healthz`), down.out);
});

test('`scanrelay health` reads the port from config.json alone (a user who changed only the file is still checked)', async () => {
  const dir = tempDir();
  const port = await freePort();
  const config = join(dir, 'config.json');
  // No SERVER_PORT in the environment: only the file names the port.
  writeFileSync(config, JSON.stringify({ SERVER_IP: '127.0.0.1', SERVER_PORT: port, SERVER_PASS: 'health-secret', PLEX_ENABLED: false }));
  const env = { SCANRELAY_CONFIG: config, SERVER_PORT: undefined, SERVER_IP: undefined };
  const before = await run(process.execPath, [join(ROOT, 'bin', 'scanrelay.js'), 'health'], { env });
  assert.equal(before.code, 1, before.out);
  assert.match(before.out, new RegExp(`unhealthy: .*:${port}/healthz unreachable: ECONNREFUSED`));
  const proc = spawn(process.execPath, [join(ROOT, 'bin', 'scanrelay.js'), 'server', `--queuefile=${join(dir, 'queue.db')}`], { cwd: dir, env: { ...process.env, ...env } as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  try {
    await waitFor(() => out.includes('scan URL') || proc.exitCode !== null, 30_000, 'relay start');
    const ok = await run(process.execPath, [join(ROOT, 'bin', 'scanrelay.js'), 'health'], { env });
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, new RegExp(`healthy: http://127\\.0\\.0\\.1:${port}/healthz answered 200`));
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
  }
  const missing = await run(process.execPath, [join(ROOT, 'bin', 'scanrelay.js'), 'health'], { env: { SCANRELAY_CONFIG: join(dir, 'nope.json') } });
  assert.equal(missing.code, 2);
  assert.match(missing.out, /nope\.json does not exist/);
});

test('the Dockerfile, compose file, docs and starter file all name the same port (3468)', async () => {
  const { starterConfig } = await import('../src/config/defaults.ts');
  const starter = starterConfig().SERVER_PORT;
  assert.equal(starter, 3468);
  const ins = instructions(dockerfile);
  assert.deepEqual(ins.filter((i) => i.op === 'EXPOSE').map((i) => i.args), [String(starter)]);
  // Every port-looking number in the Docker files and the user docs that show URLs or -p flags.
  const ports = (text: string) => [...text.matchAll(/(?:localhost|127\.0\.0\.1|scanrelay|ipaddress|<host>):(\d{4,5})\b|-p (\d{4,5}):(\d{4,5})|- "(\d{4,5}):(\d{4,5})"|EXPOSE (\d+)/g)]
    .flatMap((m) => m.slice(1).filter(Boolean).map(Number));
  const files = { Dockerfile: dockerfile, 'docker-compose.yml': compose, 'docs/docker.md': 0, 'docs/dashboard.md': 0, 'docs/webhooks.md': 0, 'README.md': 0 } as Record<string, string | number>;
  for (const [name, given] of Object.entries(files)) {
    const text = typeof given === 'string' ? given : readFileSync(join(ROOT, name), 'utf8');
    const found = ports(text).filter((p) => p !== 32400 && p !== 8989);
    assert.ok(found.length > 0 || name === 'README.md', `${name} names the relay's port`);
    assert.deepEqual([...new Set(found)], found.length ? [starter] : [], `${name}: ${found}`);
  }
  // A file without the key keeps plex_autoscan's 3467 (config.py:45 base_config SERVER_PORT).
  const { parseConfig } = await import('../src/config/load.ts');
  assert.equal(parseConfig({}).config.SERVER_PORT, 3467);
  assert.match(dockerfile, /HEALTHCHECK[^\n]*\\\n\s*CMD \["node", "bin\/scanrelay\.js", "health"\]/);
});

test('the compose example builds this Dockerfile and mounts /config as the Dockerfile expects', () => {
  assert.match(compose, /^\s+build: \.\s*$/m);
  assert.match(compose, /:\/config\s*$/m);
  assert.match(compose, /SCANRELAY_CONFIG=\/config\/config\.json/);
  for (const service of ['scanrelay', 'plex', 'sonarr']) assert.match(compose, new RegExp(`^  ${service}:\\s*$`, 'm'));
  assert.match(compose, /"3468:3468"/);
});

// V8 reads the young generation's ceiling only from the command line, so every way the relay is started
// names it; with V8's default (16 MB semi-spaces) a relay holds about 20 MB more after a burst (bench/README.md).
test('npm start, the Dockerfile and the systemd unit start node with the same flags, a 4 MB young-generation ceiling among them', () => {
  assert.deepEqual(START_FLAGS, ['--max-semi-space-size=4']);
  assert.deepEqual(JSON.parse(instructions(dockerfile).find((i) => i.op === 'CMD')!.args).slice(1, -2), START_FLAGS);
  assert.deepEqual(/^ExecStart=\S+ ((?:--\S+ )*)/m.exec(unit)![1]!.trim().split(' '), START_FLAGS);
});

test('the systemd unit starts the server with options the CLI accepts', async () => {
  const exec = /^ExecStart=(.*)$/m.exec(unit)![1]!.split(/\s+/);
  assert.equal(exec[0], '/usr/bin/node');
  assert.deepEqual(exec.slice(1, 1 + START_FLAGS.length), START_FLAGS);
  assert.equal(exec[1 + START_FLAGS.length], '/opt/scanrelay/bin/scanrelay.js');
  assert.equal(exec[2 + START_FLAGS.length], 'server');
  assert.match(unit, /^WorkingDirectory=\/opt\/scanrelay\/$/m);
  assert.match(unit, /^Restart=always$/m);
  // Issue 23: systemd's default soft limit of 1,024 open files is what slow clients exhausted.
  assert.ok(Number(/^LimitNOFILE=(\d+)$/m.exec(unit)?.[1]) >= 65536, 'LimitNOFILE raised');

  // The same command with /opt/scanrelay standing for this checkout and a temp config.
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ SERVER_IP: '127.0.0.1', SERVER_PORT: 0, SERVER_PASS: 'unit-secret', PLEX_ENABLED: false }));
  const args = exec.slice(1).map((a) => a.replace('/opt/scanrelay/config/config.json', config).replace('/opt/scanrelay/', `${ROOT}/`));
  args.push(`--queuefile=${join(dir, 'queue.db')}`);
  const res = await run(process.execPath, args, { cwd: dir, env: { SCANRELAY_LOGLEVEL: '' }, until: (o) => o.includes('scan URL') });
  // An existing config: the secret is shown shortened, with where to find it (issue 23).
  assert.match(res.out, /"level":30.*scan URL: http:\/\/127\.0\.0\.1:\d+\/unit…/);
  assert.ok(!res.out.includes('unit-secret'));
});

test('every package npm ci installs runs on the Node versions package.json promises (no EBADENGINE on Node 20)', async () => {
  const semver = (await import('semver')).default;
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const floor = semver.minVersion(pkg.engines.node)!.version;
  assert.equal(floor, '20.19.0');
  const bad = Object.entries(lock.packages as Record<string, { version?: string; engines?: { node?: string } }>)
    .filter(([name, p]) => name && p.engines?.node && !(semver.satisfies(floor, p.engines.node) && semver.satisfies(process.versions.node, p.engines.node)))
    .map(([name, p]) => `${name}@${p.version} wants node ${p.engines!.node}`);
  assert.deepEqual(bad, []);
  // The README says which Node versions are tested.
  assert.match(readFileSync(join(ROOT, 'README.md'), 'utf8'), /tested on Node 20\.x/i);
});

test('the shared-queue compose example runs PostgreSQL and two relays on the same SERVER_QUEUE_URL, each with its own config and name', () => {
  const shared = readFileSync(join(ROOT, 'examples', 'docker-compose.postgres.yml'), 'utf8');
  for (const service of ['postgres', 'relay-a', 'relay-b']) assert.match(shared, new RegExp(`^  ${service}:\\s*$`, 'm'));
  const urls = [...shared.matchAll(/SERVER_QUEUE_URL=(\S+)/g)].map((m) => m[1]);
  assert.equal(urls.length, 2);
  assert.equal(urls[0], urls[1]);
  assert.match(urls[0]!, /^postgres:\/\/scanrelay:change-me@postgres:5432\/scanrelay$/);
  assert.match(shared, /POSTGRES_PASSWORD=change-me/);
  assert.deepEqual([...shared.matchAll(/- \.\/(relay-[ab]):\/config/g)].map((m) => m[1]), ['relay-a', 'relay-b']);
  assert.deepEqual([...shared.matchAll(/SERVER_RELAY_ID="(relay-[ab])"/g)].map((m) => m[1]), ['relay-a', 'relay-b']);
  assert.match(shared, /^\s+build: \.\.\s*$/m, 'built from the repository root');
});

// Issue 42 item 10. npm runs a script through `sh -c`; without `exec` the shell stays between npm and node, and
// a process manager that stops npm (SIGTERM to the pid it started) ended npm and the shell, while the relay
// went on holding the port. With `exec` node is npm's own child, and npm passes the signal on to it.
test('`npm start` under a process manager: the relay is npm\'s direct child, and a SIGTERM to npm stops it', async () => {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ SERVER_IP: '127.0.0.1', SERVER_PORT: 0, SERVER_PASS: 'npm-start-secret', PLEX_ENABLED: false }));
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { ...process.env, SCANRELAY_CONFIG: config, SCANRELAY_QUEUEFILE: join(dir, 'queue.db'), SCANRELAY_LOGLEVEL: 'INFO' },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that a failed test can end npm and whatever it started, and nothing else.
    detached: true,
  });
  let out = '';
  let ended = false;
  const listening = new Promise<void>((resolve) => {
    const onData = (d: Buffer) => {
      out += d;
      if (out.includes('scan URL')) resolve();
    };
    npm.stdout.on('data', onData);
    npm.stderr.on('data', onData);
  });
  // Every process holding the output pipes has exited: npm, and the relay (an orphaned relay keeps them open).
  const closed = new Promise<void>((resolve) => npm.on('close', () => resolve((ended = true) && undefined)));
  try {
    await listening;
    const children = await runProcess('ps', ['-o', 'args=', '--ppid', String(npm.pid)]);
    const child = children.out.trim().split('\n');
    assert.equal(child.length, 1, children.out);
    assert.match(child[0]!, /^node (--\S+ )*bin\/scanrelay\.js server$/, 'npm\'s child is the relay itself, not a shell');
    npm.kill('SIGTERM');
    await closed;
    assert.match(out, /stopping: queued scans stay in the queue/, 'the relay got the signal and stopped in order');
  } finally {
    // Only if the test failed: the relay must not outlive it.
    if (!ended) process.kill(-npm.pid!, 'SIGKILL');
  }
});
