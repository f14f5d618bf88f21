import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import pino from 'pino';
import { rotatingLogFile } from '../../src/log-file.ts';
import { CLI, HANG_MS, tempDir } from '../helpers/relay.ts';

/** Runs `scanrelay server` until `done(output)` says enough, then stops it; bounded by a timeout. */
function runServer(command: string, args: string[], done: (out: string) => boolean, env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, { env: { ...process.env, SCANRELAY_LOGLEVEL: '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`timed out; output so far:\n${out}`));
    }, HANG_MS);
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
  assert.match(line, /http:\/\/127\.0\.0\.1:\d+\/log-…/);
});

// plex_autoscan: RotatingFileHandler(logfile, maxBytes=2 MiB, backupCount=5) (scan.py:53-58).
test('--logfile rotates at 2 MB and keeps 5 old files beside the current one, all 0600', async () => {
  const dir = tempDir();
  const path = join(dir, 'scanrelay.log');
  // The file stream createLogger adds beside stdout (stdout would only repeat 16 MB of filler here).
  const log = pino({ level: 'info' }, (await rotatingLogFile(path)).stream);
  const chunk = 'x'.repeat(100 * 1024);
  // About 20 MB: ten files' worth.
  const numbered = () => readdirSync(dir).filter((f) => /^scanrelay\.\d+\.log$/.test(f)).sort((a, b) => num(a) - num(b));
  const num = (f: string) => Number(f.split('.')[1]);
  // Each line is written, and the file rolled, before log.info returns.
  for (let i = 0; i < 160; i++) log.info({ chunk, n: i }, 'filler');
  log.info('the last line');
  const files = numbered();
  assert.equal(files.length, 6, `current + 5 kept: ${files.join(', ')}`);
  assert.ok(num(files[0]!) > 1, 'the oldest files were removed');
  assert.deepEqual(files.map(num), Array.from({ length: 6 }, (_, i) => num(files[0]!) + i), 'consecutive numbers, the highest is current');
  assert.ok(!existsSync(path), 'the current file is numbered too');
  for (const f of files.slice(0, -1)) {
    const size = statSync(join(dir, f)).size;
    // A file rolls once the line that crossed 2 MiB is written: about 2 MB, give or take a line.
    assert.ok(size >= 1.9 * 1024 * 1024 && size < 2.5 * 1024 * 1024, `${f}: ${size} bytes`);
  }
  for (const f of files) assert.equal(statSync(join(dir, f)).mode & 0o777, 0o600, f);
  assert.match(readFileSync(join(dir, files.at(-1)!), 'utf8'), /the last line/);
});

test('--logfile on the real server: the file is 0600 from the start, an existing wider one is narrowed, and a restart appends', async () => {
  const config = writeConfig();
  const dir = tempDir();
  const logfile = join(dir, 'relay.log');
  // A file of ours from before (numbered as the relay numbers them), readable by everyone.
  writeFileSync(join(dir, 'relay.1.log'), '{"msg":"old line"}\n', { mode: 0o644 });
  chmodSync(join(dir, 'relay.1.log'), 0o644);
  const out = await runServer(process.execPath, [CLI, '--config', config, '--loglevel', 'INFO', '--logfile', logfile, 'server'], (o) => o.includes('scan URL'));
  assert.match(out, /narrowed to 0600/);
  const text = readFileSync(join(dir, 'relay.1.log'), 'utf8');
  assert.deepEqual(readdirSync(dir), ['relay.1.log'], out);
  assert.match(text, /old line/);
  assert.match(text, /scan URL/, out);
  assert.equal(statSync(join(dir, 'relay.1.log')).mode & 0o777, 0o600);
  // PLEX_AUTOSCAN_LOGFILE names it too; a new file is created 0600.
  const fresh = join(tempDir(), 'fresh.log');
  await runServer(process.execPath, [CLI, '--config', config, '--loglevel', 'INFO', 'server'], (o) => o.includes('scan URL'), { PLEX_AUTOSCAN_LOGFILE: fresh });
  const created = join(dirname(fresh), 'fresh.1.log');
  assert.match(readFileSync(created, 'utf8'), /scan URL/);
  assert.equal(statSync(created).mode & 0o777, 0o600);
});

test('--logfile numbers its files from their own name only: an unrelated wt2.log in the folder is not file 2', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'wt2.log'), 'another program\n');
  writeFileSync(join(dir, 'x7.log'), 'another program\n');
  const log = pino({ level: 'info' }, (await rotatingLogFile(join(dir, 'x.log'))).stream);
  log.info('first line');
  assert.deepEqual(readdirSync(dir).sort(), ['wt2.log', 'x.1.log', 'x7.log']);
  assert.match(readFileSync(join(dir, 'x.1.log'), 'utf8'), /first line/);
  // A restart appends to the highest of its own files.
  writeFileSync(join(dir, 'x.3.log'), '');
  const again = pino({ level: 'info' }, (await rotatingLogFile(join(dir, 'x.log'))).stream);
  again.info('after restart');
  assert.match(readFileSync(join(dir, 'x.3.log'), 'utf8'), /after restart/);
  assert.equal(readFileSync(join(dir, 'wt2.log'), 'utf8'), 'another program\n');
});
