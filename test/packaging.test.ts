import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir, waitFor } from './helpers/relay.ts';

const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const compose = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const unit = readFileSync(join(ROOT, 'system', 'scanrelay.service'), 'utf8');

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

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; until?: (out: string) => boolean } = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const proc = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
    const onData = (d: Buffer) => {
      out += d;
      if (opts.until?.(out)) proc.kill('SIGTERM');
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

test('the Dockerfile copies files that exist, runs `bin/scanrelay.js server` as a non-root user with /config as the volume', () => {
  const ins = instructions(dockerfile);
  const froms = ins.filter((i) => i.op === 'FROM').map((i) => i.args);
  assert.ok(froms.length === 2 && froms.every((f) => f.startsWith('node:20-slim')), `two node:20-slim stages: ${froms}`);
  for (const copy of ins.filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))) {
    const parts = copy.args.split(/\s+/);
    for (const src of parts.slice(0, -1)) assert.ok(existsSync(join(ROOT, src)), `COPY source ${src} exists`);
  }
  const cmd = JSON.parse(ins.find((i) => i.op === 'CMD')!.args);
  assert.deepEqual(cmd, ['node', 'bin/scanrelay.js', 'server']);
  assert.ok(existsSync(join(ROOT, cmd[1])));
  // The build stage compiles dist/ (npm ci's prepare script) and the final stage takes it.
  assert.match(dockerfile, /COPY --from=build \/app\/dist \.\/dist/);
  assert.match(dockerfile, /RUN npm ci && npm prune --omit=dev/);
  const user = ins.filter((i) => i.op === 'USER').at(-1)?.args;
  assert.ok(user && user !== 'root' && user !== '0', `non-root USER: ${user}`);
  assert.match(ins.find((i) => i.op === 'VOLUME')!.args, /\/config/);
  assert.match(ins.find((i) => i.op === 'ENV')!.args, /SCANRELAY_CONFIG=\/config\/config\.json/);
  // better-sqlite3 is built in the first stage, whose compilers do not reach the final image.
  const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  assert.ok(!/g\+\+|make /.test(finalStage));
  assert.ok(existsSync(join(ROOT, 'package-lock.json')));
});

test('with only SCANRELAY_CONFIG set, the relay keeps config.json and queue.db together in that folder, and the HEALTHCHECK one-liner passes against it', async () => {
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
    const ok = await run(process.execPath, health.slice(1), { env: { SERVER_PORT: String(port) } });
    assert.equal(ok.code, 0, ok.out);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
  }
  const health = JSON.parse(instructions(dockerfile).find((i) => i.op === 'HEALTHCHECK')!.args.replace(/^.*?CMD\s+/, ''));
  const down = await run(process.execPath, health.slice(1), { env: { SERVER_PORT: String(port) } });
  assert.equal(down.code, 1, 'unhealthy once the relay is gone');
});

test('the compose example builds this Dockerfile and mounts /config as the Dockerfile expects', () => {
  assert.match(compose, /^\s+build: \.\s*$/m);
  assert.match(compose, /:\/config\s*$/m);
  assert.match(compose, /SCANRELAY_CONFIG=\/config\/config\.json/);
  for (const service of ['scanrelay', 'plex', 'sonarr']) assert.match(compose, new RegExp(`^  ${service}:\\s*$`, 'm'));
  assert.match(compose, /"3467:3467"/);
});

test('the systemd unit starts the server with options the CLI accepts', async () => {
  const exec = /^ExecStart=(.*)$/m.exec(unit)![1]!.split(/\s+/);
  assert.equal(exec[0], '/usr/bin/node');
  assert.equal(exec[1], '/opt/scanrelay/bin/scanrelay.js');
  assert.equal(exec[2], 'server');
  assert.match(unit, /^WorkingDirectory=\/opt\/scanrelay\/$/m);
  assert.match(unit, /^Restart=always$/m);

  // The same command with /opt/scanrelay standing for this checkout and a temp config.
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ SERVER_IP: '127.0.0.1', SERVER_PORT: 0, SERVER_PASS: 'unit-secret', PLEX_ENABLED: false }));
  const args = exec.slice(1).map((a) => a.replace('/opt/scanrelay/config/config.json', config).replace('/opt/scanrelay/', `${ROOT}/`));
  args.push(`--queuefile=${join(dir, 'queue.db')}`);
  const res = await run(process.execPath, args, { cwd: dir, env: { SCANRELAY_LOGLEVEL: '' }, until: (o) => o.includes('scan URL') });
  assert.match(res.out, /"level":30.*scan URL: http:\/\/127\.0\.0\.1:\d+\/unit-secret/);
});
