import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, tempDir } from '../helpers/relay.ts';

/** Runs `scanrelay server` until `done(output)` says enough, then stops it; bounded by a timeout. */
function runServer(command: string, args: string[], done: (out: string) => boolean, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, { env: { ...process.env, SCANRELAY_LOGLEVEL: '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`timed out; output so far:\n${out}`));
    }, 30_000);
    const onData = (d: Buffer) => {
      out += d.toString('utf8');
      if (done(out)) proc.kill('SIGTERM');
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

function writeConfig(extra: Record<string, unknown> = {}): string {
  const dir = tempDir();
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify({ SERVER_IP: '127.0.0.1', SERVER_PORT: 0, SERVER_PASS: 'log-secret', PLEX_ENABLED: false, ...extra }));
  return path;
}

test('--loglevel WARN keeps info lines out; each line is one JSON object when stdout is not a terminal', async () => {
  const config = writeConfig();
  // With no target enabled the relay warns once at start.
  const out = await runServer(process.execPath, [CLI, '--config', config, '--loglevel', 'WARN', 'server'], (o) => o.includes('no target is enabled'));
  const lines = out.split('\n').filter(Boolean);
  assert.ok(lines.length >= 1);
  for (const line of lines) {
    const event = JSON.parse(line);
    assert.ok(event.level >= 40, `only warn and above: ${line}`);
    assert.equal(typeof event.time, 'string');
  }
  assert.ok(!out.includes('scan URL'));
});

test('an unknown --loglevel is a one-line error with exit status 2', async () => {
  const config = writeConfig();
  const proc = spawn(process.execPath, [CLI, '--config', config, '--loglevel', 'LOUD', 'server'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => proc.on('exit', r));
  assert.equal(code, 2);
  assert.match(err, /--loglevel: expected one of/);
});

test('human-readable lines when stdout is a terminal', async () => {
  const config = writeConfig();
  const cmd = [process.execPath, CLI, '--config', config, '--loglevel', 'INFO', 'server'].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  // util-linux `script` gives the relay a pseudo-terminal as stdout.
  const out = await runServer('script', ['-qec', cmd, '/dev/null'], (o) => o.includes('scan URL'));
  const line = out.split(/\r?\n/).find((l) => l.includes('scan URL'))!;
  assert.ok(line, out);
  assert.throws(() => JSON.parse(line), 'not a JSON line');
  assert.match(line, /INFO/);
  assert.match(line, /http:\/\/127\.0\.0\.1:\d+\/log-secret/);
});
