import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FakePlex } from '../fakes/plex.ts';
import { spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';

/*
 * Issue 47 item 1 through the real relay process: the libraries that bound `?hash=` are the ones its Plex names
 * (GET /library/sections, each section's Location paths), reached through PLEX_REWRITE as a scan of the path would
 * be. autopulse's manual route: crates/server/src/routes/triggers.rs; its hash check service/src/runner.rs:53-100.
 */
const AUTH = { authorization: `Basic ${Buffer.from('pulse:s3cret-word').toString('base64')}` };
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe("?hash= on the real relay: inside Plex's sections only", () => {
  let plex: FakePlex;
  let relay: RelayProcess;
  const lib = tempDir('hash-e2e-lib-');
  const other = tempDir('hash-e2e-other-');

  before(async () => {
    mkdirSync(join(lib, 'Movies', 'Heat (1995)'), { recursive: true });
    writeFileSync(join(lib, 'Movies', 'Heat (1995)', 'Heat.mkv'), 'heat');
    execFileSync('mkfifo', [join(lib, 'Movies', 'pipe.mkv')]);
    writeFileSync(join(other, 'hostname'), 'relay-host\n');
    plex = await new FakePlex({ sections: [{ id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] }] }).start();
    relay = await spawnRelay({
      config: {
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        // Plex sees the relay's folder as /data.
        PLEX_REWRITE: [{ from: `^${lib}/`, to: '/data/' }],
        PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false,
        SERVER_AUTH_USER: 'pulse',
        SERVER_AUTH_PASS: 's3cret-word',
        SERVER_FILE_CHECKS_ENABLED: true,
        SERVER_FILE_CHECK_DELAY: 3600,
        SERVER_SCAN_DELAY: 3600,
        SERVER_AUTOPULSE_TRIGGERS: { manual: { TYPE: 'manual' } },
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await plex?.stop();
  });

  const ask = async (path: string, hash: string) => {
    const res = await fetch(`${relay.base}/triggers/manual?path=${encodeURIComponent(path)}&hash=${hash}`, { headers: AUTH, signal: AbortSignal.timeout(30_000) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  test("a file in a Plex section matches and is queued; /etc/passwd, /etc/nope, a file beside the sections and a FIFO in one are all 'not found'", async () => {
    // Plex's sections are read once the relay asks; until then the section is unknown and nothing is read.
    const inside = await waitFor(async () => {
      const r = await ask(join(lib, 'Movies', 'Heat (1995)', 'Heat.mkv'), sha('heat'));
      return r.body.found_status === 'found' ? r : undefined;
    }, 30_000, 'the file in the Movies section to match');
    assert.equal(inside?.status, 200);
    const answers = await Promise.all([ask('/etc/passwd', '00'), ask('/etc/nope', '00'), ask(join(other, 'hostname'), sha('relay-host\n')), ask(join(lib, 'Movies', 'pipe.mkv'), '00')]);
    assert.deepEqual(
      answers.map((a) => [a.status, a.body.found_status, a.body.process_status]),
      Array(4).fill([200, 'not_found', 'pending']),
    );
    const health = await fetch(`${relay.base}/health`, { signal: AbortSignal.timeout(10_000) });
    assert.equal(health.status, 200, 'the relay answers on');
  });
});
