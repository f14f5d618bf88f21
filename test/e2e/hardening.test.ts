import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, runCli, spawnRelay, tempDir } from '../helpers/relay.ts';

const sonarr = readFileSync(join(ROOT, 'test', 'fixtures', 'arr', 'sonarr', 'download.json'), 'utf8');
const JSON_TYPE = { 'content-type': 'application/json', accept: 'application/json' };

/** The real sqlite3 CLI holding BEGIN EXCLUSIVE on a file until released. */
async function holdExclusive(file: string): Promise<{ release(): Promise<void> }> {
  const proc = spawn('sqlite3', [file], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  proc.stdin.write(`BEGIN EXCLUSIVE;\nINSERT INTO meta (key, value) VALUES ('lock-test', 'x');\nSELECT 'locked';\n`);
  await new Promise<void>((resolve, reject) => {
    const check = () => (out.includes('locked') ? resolve() : proc.exitCode !== null ? reject(new Error(out)) : setTimeout(check, 20));
    check();
  });
  const exited = new Promise((r) => proc.on('exit', r));
  return {
    async release() {
      proc.stdin.end('ROLLBACK;\n.quit\n');
      await exited;
    },
  };
}

// Issue 23, item 7: an outside BEGIN EXCLUSIVE made a POST wait 5 s and /healthz with it (busy_timeout
// blocked the event loop). Now the POST is answered 503 with Retry-After and /healthz says why.
test('a queue file locked by another process: 503 with Retry-After, /healthz reports it; afterwards all is queued again', async () => {
  const relay = await spawnRelay({ config: {} });
  try {
    const lock = await holdExclusive(relay.queuefile);
    try {
      const [hook, health] = await Promise.all([
        fetch(relay.url, { method: 'POST', headers: JSON_TYPE, body: sonarr }),
        fetch(`${relay.base}/healthz`),
      ]);
      assert.equal(health.status, 503);
      assert.deepEqual(await health.json(), { status: 'unavailable', queue: 'the queue file is locked by another process' });
      assert.equal(hook.status, 503);
      assert.match(hook.headers.get('retry-after') ?? '', /^\d+$/);
      assert.match((await hook.json()).error, /locked by another process: nothing was queued/);
    } finally {
      await lock.release();
    }
    const again = await fetch(relay.url, { method: 'POST', headers: JSON_TYPE, body: sonarr });
    assert.equal(again.status, 200);
    assert.equal((await again.json()).status, 'queued');
    assert.deepEqual(await (await fetch(`${relay.base}/healthz`)).json(), { status: 'ok' });
    assert.equal(relay.proc.exitCode, null);
  } finally {
    await relay.kill();
  }
});

// Issue 23, item 9: the queue names every path the relay was asked about.
test('queue.db and its -wal and -shm files are 0600', async () => {
  const relay = await spawnRelay({ config: {} });
  try {
    const hook = await fetch(relay.url, { method: 'POST', headers: JSON_TYPE, body: sonarr });
    assert.equal(hook.status, 200);
    for (const f of [relay.queuefile, `${relay.queuefile}-wal`, `${relay.queuefile}-shm`]) {
      assert.equal(statSync(f).mode & 0o777, 0o600, f);
    }
  } finally {
    await relay.kill();
  }
});

// Issue 23, item 10.
test('a busy port is one line on stderr and exit status 2, no stack trace', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    const dir = tempDir();
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ SERVER_IP: '127.0.0.1', SERVER_PORT: port, SERVER_PASS: 'p', PLEX_ENABLED: false }));
    const res = await runCli(['--config', config, '--queuefile', join(dir, 'queue.db'), 'server'], { cwd: dir });
    assert.equal(res.code, 2);
    assert.equal(res.stderr, `scanrelay: port ${port} (SERVER_PORT) is in use: another relay or plex_autoscan may be running\n`);
    assert.doesNotMatch(res.stdout + res.stderr, /\n\s+at /, 'no stack trace');
  } finally {
    blocker.close();
  }
});
