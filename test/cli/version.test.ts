import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildInfo, versionText } from '../../src/core/version.ts';
import { Metrics } from '../../src/metrics/metrics.ts';
import { renderDashboard } from '../../src/server/dashboard/render.ts';
import { ROOT, runCli, runProcess, tempDir } from '../helpers/relay.ts';

// Issue 42 item 4: every release said 0.1.0. The version is package.json's (bumped per release, CHANGELOG.md),
// with the commit where it is known: here, a git checkout, so git's HEAD.
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const COMMIT = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();

test('the version is a release past 0.1.0, with a CHANGELOG section of its own', () => {
  assert.notEqual(VERSION, '0.1.0');
  assert.match(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'), new RegExp(`^## ${VERSION.replace(/\./g, '\\.')} \\(`, 'm'));
  assert.deepEqual(buildInfo(), { version: VERSION, commit: COMMIT });
  assert.equal(versionText(), `${VERSION} (commit ${COMMIT})`);
  assert.equal(versionText({ version: '1.2.3' }), '1.2.3');
});

test('`scanrelay --version` prints the version and the commit', async () => {
  const r = await runCli(['--version']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `${VERSION} (commit ${COMMIT})\n`);
});

test('/metrics: scanrelay_relay_info carries the version and commit, on SQLite too; the dashboard heading shows them', async () => {
  const metrics = new Metrics({ counts: () => ({}) }, { processMetrics: false });
  assert.match(await metrics.text(), new RegExp(`^scanrelay_relay_info\\{version="${VERSION.replace(/\./g, '\\.')}",commit="${COMMIT}"\\} 1$`, 'm'));
  const shared = new Metrics({ counts: () => ({}) }, { processMetrics: false, relay: 'media' });
  assert.match(await shared.text(), new RegExp(`^scanrelay_relay_info\\{version="[^"]+",commit="${COMMIT}",relay="media"\\} 1$`, 'm'));
  const page = renderDashboard('secret', {} as never, { status: '', queue: '', history: '' } as never);
  assert.ok(page.includes(`<h1>scanrelay <small class="muted" id="version" title="the running release (CHANGELOG.md)">${VERSION} (commit ${COMMIT})</small></h1>`), page.slice(0, 800));
});

test('the first log line of a starting relay names the release; a start that fails early is still one line', async () => {
  const dir = tempDir();
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ SERVER_IP: '127.0.0.1', SERVER_PORT: 0, SERVER_PASS: 'version-secret', PLEX_ENABLED: false }));
  const r = await runProcess(process.execPath, [join(ROOT, 'bin', 'scanrelay.js'), '--config', config, '--queuefile', join(dir, 'queue.db'), 'server'], {
    cwd: dir,
    env: { SCANRELAY_LOGLEVEL: 'INFO', SERVER_PORT: '0' },
    until: (out) => out.includes('scan URL'),
  });
  const lines = r.out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; scanrelay?: string; commit?: string });
  assert.equal(lines[0]!.scanrelay, VERSION, r.out);
  assert.equal(lines[0]!.commit, COMMIT);
  assert.equal(lines.filter((l) => l.scanrelay).length, 1, 'the first line only');

  const bad = await runCli(['--config', config, '--queuefile', join(dir, 'queue.db'), 'server'], { env: { SERVER_PORT: '"x"' } });
  assert.equal(bad.code, 2);
  assert.equal((bad.stdout + bad.stderr).split('\n').filter(Boolean).length, 1, bad.stdout + bad.stderr);
});
