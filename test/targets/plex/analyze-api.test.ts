import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { FakePlex, type FakeItem } from '../../fakes/plex.ts';
import { makePlexTarget, plexSettingsOf, recordingLogger, runQueue, testConfig } from '../../helpers/plex-target.ts';
import { tempDir, waitFor } from '../../helpers/relay.ts';

let plex: FakePlex;
beforeEach(async () => {
  plex = await new FakePlex().start();
  // Section 1 Movies, section 2 TV (the fake's defaults). Old items first, so a listing newest-first pages.
  const items: FakeItem[] = [];
  for (let i = 0; i < 450; i++) items.push({ ratingKey: String(1000 + i), sectionId: '1', type: 'movie', file: `/data/Movies/Old ${i}/old.mkv`, addedAt: 1_600_000_000 + i });
  items.push({ ratingKey: '5', sectionId: '1', type: 'movie', file: '/data/Movies/Heat (1995)/Heat.mkv', addedAt: 1_600_000_000 });
  items.push({ ratingKey: '20', sectionId: '2', type: 'show', addedAt: 1_700_000_000 });
  items.push({ ratingKey: '21', sectionId: '2', type: 'season', parentRatingKey: '20', addedAt: 1_700_000_000 });
  items.push({ ratingKey: '22', sectionId: '2', type: 'episode', parentRatingKey: '21', file: '/data/TV/Dark/Season 01/e1.mkv', addedAt: 1_700_000_001 });
  items.push({ ratingKey: '23', sectionId: '2', type: 'episode', parentRatingKey: '21', file: '/data/TV/Dark/Season 01/e2.mkv', addedAt: 1_700_000_002 });
  plex.items = items;
});
afterEach(async () => plex.stop());

/** An API-only relay: a token, and a Plex database path this machine cannot read. */
function apiOnly(o: Record<string, unknown> = {}) {
  return testConfig({
    PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, PLEX_DATABASE_PATH: join(tempDir(), 'no', 'com.plexapp.plugins.library.db'),
    PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, SERVER_FILE_CHECKS_ENABLED: false, PLEX_ANALYZE_TYPE: 'basic', PLEX_ANALYZE_DIRECTORY: true, ...o,
  });
}

const analyzed = () => plex.callsTo('PUT', /^\/library\/metadata\/[\d,]+\/analyze$/).map((c) => c.path.split('/')[3]);

async function scanFiles(config: ReturnType<typeof testConfig>, files: string[][]) {
  const { log, lines } = recordingLogger();
  const q = runQueue([makePlexTarget(plex, config, { log, timings: { lookupTries: 2, lookupDelayMs: 20, completionAppearMs: 50, completionPollMs: 20, activitiesMaxAgeMs: 0 } })]);
  const details: string[] = [];
  try {
    for (const group of files) {
      const folder = group[0]!.slice(0, group[0]!.lastIndexOf('/'));
      const id = q.enqueue(folder, group);
      await waitFor(() => q.store.view.get(id)!.status === 'done', 10_000, 'delivery');
      await q.scheduler.afterStepsSettled();
      details.push(q.store.view.get(id)!.deliveries[0]!.detail!);
    }
  } finally {
    await q.close();
  }
  return { lines, details };
}

test('without a readable database, the item to analyze is found through the HTTP API; no WARN per scan', async () => {
  const { lines, details } = await scanFiles(apiOnly(), [['/data/Movies/Heat (1995)/Heat.mkv'], ['/data/TV/Dark/Season 01/e1.mkv'], ['/data/Movies/Heat (1995)/Heat.mkv']]);
  // The movie (no parent) alone, found on the third page of a newest-first listing; the episode's season (basic).
  assert.match(details[0]!, /analyzed 5$/);
  assert.match(details[1]!, /analyzed 21$/);
  assert.deepEqual(analyzed().slice(-3), ['5', '21', '5']);
  const listing = plex.callsTo('GET', /^\/library\/sections\/1\/all$/).at(-1)!;
  assert.equal(listing.query.type, '1');
  assert.equal(listing.query.sort, 'addedAt:desc');
  assert.equal(lines.filter((l) => l.level >= 40).length, 0, JSON.stringify(lines.filter((l) => l.level >= 40)));
  // Said once (per database), at INFO.
  assert.equal(lines.filter((l) => /cannot read the Plex database/.test(l.msg)).length, 1);
});

test('deep analyzes every item under the parent, through /library/metadata/{id}/children', async () => {
  const { details } = await scanFiles(apiOnly({ PLEX_ANALYZE_TYPE: 'deep' }), [['/data/TV/Dark/Season 01/e2.mkv']]);
  assert.match(details[0]!, /analyzed 22,23$/);
  assert.equal(analyzed().at(-1), '22,23');
});

test('a file Plex does not list is not analyzed, said in the history and at INFO', async () => {
  const before = analyzed().length;
  const { lines, details } = await scanFiles(apiOnly(), [['/data/Movies/Nope (2000)/nope.mkv']]);
  assert.match(details[0]!, /not analyzed: file not in Plex \(HTTP API\)$/);
  assert.equal(analyzed().length, before);
  assert.ok(lines.some((l) => l.level === 30 && /not found in its Plex section/.test(l.msg)));
});

test('with neither a readable database nor the API (scanner method, no token), one WARN for the whole run', async () => {
  const { FakeScanner } = await import('../../fakes/scanner.ts');
  const fake = new FakeScanner();
  const config = testConfig({
    PLEX_SCAN_METHOD: 'scanner', PLEX_SCANNER: fake.escapedScanner, USE_SUDO: false, PLEX_TOKEN: '', PLEX_DATABASE_PATH: join(tempDir(), 'none.db'),
    PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, SERVER_FILE_CHECKS_ENABLED: false, PLEX_ANALYZE_TYPE: 'basic',
  });
  const { log, lines } = recordingLogger();
  const { analyzeFiles } = await import('../../../src/targets/plex/analyze.ts');
  const { PlexDatabase } = await import('../../../src/targets/plex/database.ts');
  const { PlexScannerBackend } = await import('../../../src/targets/plex/backends/scanner/backend.ts');
  const db = new PlexDatabase(config.PLEX_DATABASE_PATH);
  const settings = plexSettingsOf(config);
  const backend = PlexScannerBackend.fromSettings(settings);
  const deps = { config: settings, db, backend, log, retry: { tries: 1, delayMs: 1 } };
  for (let i = 0; i < 3; i++) assert.equal(await analyzeFiles(deps, ['/data/Movies/X/x.mkv'], new AbortController().signal), 'not analyzed: Plex database unreadable');
  assert.equal(lines.filter((l) => l.level === 40).length, 1);
});
