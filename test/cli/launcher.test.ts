import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { postForm, ROOT, spawnRelay, tempDir, waitFor } from '../helpers/relay.ts';

const PROBE = join(ROOT, 'test', 'helpers', 'turbofan-probe.mjs');
/** V8's OptimizationStatus bit for "this function runs optimized code" (kOptimized). */
const OPTIMIZED = 1 << 4;

// bin/scanrelay.js turns TurboFan off while a command starts (its compile memory stays with the process) and
// back on once the server listens. Left off, intake runs at about a third of its speed (bench/README.md).
test('once the server listens, hot code is optimized again (the launcher turned TurboFan back on)', async () => {
  const dir = tempDir();
  const probe = join(dir, 'turbofan.txt');
  const relay = await spawnRelay({
    dir,
    config: { SERVER_ALLOW_MANUAL_SCAN: true, PLEX_TOKEN: 'token', PLEX_LOCAL_URL: 'http://127.0.0.1:9' },
    nodeArgs: ['--allow-natives-syntax', '--import', PROBE],
    env: { SCANRELAY_TURBOFAN_PROBE: probe },
  });
  try {
    assert.equal((await postForm(relay.url, { eventType: 'Manual', filepath: '/data/Movies/Heat (1995)/Heat.mkv' })).status, 200);
    relay.proc.kill('SIGUSR2');
    const status = Number(await waitFor(() => (existsSync(probe) ? readFileSync(probe, 'utf8').trim() || undefined : undefined), 10_000, 'the probe'));
    assert.ok(status & OPTIMIZED, `V8 optimization status ${status.toString(2)} has no "optimized" bit: TurboFan is still off`);
  } finally {
    await relay.kill();
  }
});
