import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, spawnRelay } from '../helpers/relay.ts';
import { openSlowClients } from '../helpers/slow-clients.ts';

const sonarr = readFileSync(join(ROOT, 'test', 'fixtures', 'arr', 'sonarr', 'download.json'), 'utf8');

// Issue 23, item 1: under systemd's default soft limit of 1,024 open files, 1,100 slow clients filled the
// file table and a real webhook got an empty reply. The time it takes now is in bench/slow-clients.ts.
// Slow headers are the hard case: a slow body to a wrong path is answered 404 and closed at once.
test('1,100 slow clients under a 1,024-file limit leave a real webhook answered and /healthz up', async () => {
  const relay = await spawnRelay({ config: {}, prefix: ['prlimit', '--nofile=1024:1024', '--'] });
  const slow = await openSlowClients(relay.port, 1100, 'headers');
  try {
    const hook = await fetch(relay.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: sonarr });
    assert.equal(hook.status, 200, await hook.clone().text());
    assert.equal((await hook.json()).status, 'queued');
    const health = await fetch(`${relay.base}/healthz`);
    assert.equal(health.status, 200);
    assert.ok(slow.closedByServer() > 0, 'the relay shed slow connections to stay below its file limit');
    assert.equal(relay.proc.exitCode, null);
  } finally {
    slow.stop();
    await relay.kill();
  }
});
