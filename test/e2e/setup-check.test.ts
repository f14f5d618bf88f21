import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { scannerFile, scannerProblems } from '../../src/targets/plex/setup-check.ts';
import { FakePlex } from '../fakes/plex.ts';
import { FakeScanner } from '../fakes/scanner.ts';
import { plexSettingsOf, testConfig } from '../helpers/plex-target.ts';
import { spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';

let plex: FakePlex;
before(async () => {
  plex = await new FakePlex().start();
});
after(async () => plex.stop());

async function dashboard(relay: RelayProcess): Promise<string> {
  const res = await fetch(`${relay.url}`, { headers: { accept: 'text/html' } });
  assert.equal(res.status, 200);
  return res.text();
}

/** The start-up check's WARN lines (target plex, one `key` each). */
function problems(relay: RelayProcess): Array<Record<string, any>> {
  return relay.events().filter((e) => e.level === 40 && e.target === 'plex' && typeof e.key === 'string');
}

test('api method without a token: one WARN at start naming PLEX_TOKEN, the relay keeps running, the dashboard shows it', async () => {
  const relay = await spawnRelay({ config: { PLEX_SCAN_METHOD: 'api', PLEX_LOCAL_URL: plex.url, SERVER_ALLOW_MANUAL_SCAN: true } });
  try {
    const line = await relay.waitForLog((e) => e.level === 40 && e.key === 'PLEX_TOKEN');
    assert.match(line.msg, /PLEX_TOKEN is empty/);
    assert.equal(problems(relay).length, 1);
    assert.equal((await fetch(`${relay.base}/healthz`)).status, 200, 'still running');
    const html = await dashboard(relay);
    assert.match(html, /data-setup-key="PLEX_TOKEN"[^>]*>.*PLEX_TOKEN is empty/);
  } finally {
    await relay.kill();
  }
});

test('api method with a wrong token names PLEX_TOKEN; with Plex down names PLEX_LOCAL_URL; a good set-up has no problem line', async () => {
  const wrong = await spawnRelay({ config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: 'not-the-token' } });
  try {
    const line = await wrong.waitForLog((e) => e.level === 40 && e.key === 'PLEX_TOKEN');
    assert.match(line.msg, /Plex refused the token \(401\): check PLEX_TOKEN/);
    assert.doesNotMatch(line.msg, /<html/);
  } finally {
    await wrong.kill();
  }
  await plex.setMode('error503');
  try {
    const down = await spawnRelay({ config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token } });
    try {
      const line = await down.waitForLog((e) => e.level === 40 && e.key === 'PLEX_LOCAL_URL');
      assert.match(line.msg, /cannot read Plex's section list at .*503/);
    } finally {
      await down.kill();
    }
  } finally {
    await plex.setMode('up');
  }
  const before = plex.callsTo('GET', /^\/library\/sections$/).length;
  const good = await spawnRelay({ config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_ALLOW_MANUAL_SCAN: true } });
  try {
    await waitFor(() => plex.callsTo('GET', /^\/library\/sections$/).length > before, 15_000, 'the section list read');
    const html = await dashboard(good);
    assert.doesNotMatch(html, /data-setup-key/);
    assert.deepEqual(problems(good), []);
  } finally {
    await good.kill();
  }
});

test('scanner method: a missing binary, sudo or docker is named at start by its key', async () => {
  const fake = new FakeScanner();
  const dir = tempDir();
  // Without the fake's bin folder on PATH there is no sudo and no docker (this machine has neither).
  const emptyPath = { PATH: tempDir() };
  const sudo = await spawnRelay({
    dir,
    config: { PLEX_SCAN_METHOD: 'scanner', PLEX_SCANNER: '/opt/nowhere/Plex\\ Media\\ Scanner', USE_SUDO: true, PLEX_DATABASE_PATH: join(dir, 'none.db'), SERVER_ALLOW_MANUAL_SCAN: true },
    env: emptyPath,
  });
  try {
    await sudo.waitForLog((e) => e.level === 40 && e.key === 'PLEX_DATABASE_PATH');
    const keys = problems(sudo).map((e) => e.key).sort();
    assert.deepEqual(keys, ['PLEX_DATABASE_PATH', 'PLEX_SCANNER', 'USE_SUDO']);
    assert.match(problems(sudo).find((e) => e.key === 'PLEX_SCANNER')!.msg, /\/opt\/nowhere\/Plex Media Scanner, which does not exist/);
    const html = await dashboard(sudo);
    for (const key of keys) assert.match(html, new RegExp(`data-setup-key="${key}"`));
  } finally {
    await sudo.kill();
  }
  const docker = await spawnRelay({ config: { PLEX_SCAN_METHOD: 'scanner', USE_DOCKER: true, PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url }, env: emptyPath });
  try {
    const line = await docker.waitForLog((e) => e.level === 40 && e.key === 'USE_DOCKER');
    assert.match(line.msg, /no "docker" program is on PATH/);
  } finally {
    await docker.kill();
  }
  // With the fake's sudo and scanner in place, nothing is reported.
  assert.deepEqual(scannerProblems(plexSettingsOf(testConfig({ PLEX_SCANNER: fake.escapedScanner, USE_SUDO: true, PLEX_TOKEN: 't' })), { onPath: (p) => p === 'sudo' }), []);
  assert.equal(scannerFile(fake.escapedScanner), fake.scannerPath);
});

test('first start with the starter file: the missing token is one INFO "next step" line; later starts make it a WARN', async () => {
  const dir = tempDir();
  const configPath = join(dir, 'config', 'config.json');
  // The starter file's port is fixed (3468); the environment moves this test's relay to a free one.
  const env = { SERVER_PORT: '0', SERVER_IP: '"127.0.0.1"', PATH: tempDir() };
  const first = await spawnRelay({ dir, configPath, env });
  try {
    const line = await first.waitForLog((e) => e.key === 'PLEX_TOKEN');
    assert.equal(line.level, 30);
    assert.match(line.msg, /^next step: PLEX_TOKEN is empty and this machine has no Plex Media Scanner/);
    assert.deepEqual(first.events().filter((e) => e.level >= 40), []);
  } finally {
    await first.kill();
  }
  const second = await spawnRelay({ dir, configPath, env });
  try {
    const line = await second.waitForLog((e) => e.key === 'PLEX_TOKEN');
    assert.equal(line.level, 40);
    assert.equal(problems(second).length, 1, 'one line for the token, not one per scanner key');
  } finally {
    await second.kill();
  }
});
