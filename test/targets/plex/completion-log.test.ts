import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pino from 'pino';
import { FakePlex } from '../../fakes/plex.ts';
import { makePlexTarget, runQueue, testConfig } from '../../helpers/plex-target.ts';
import { waitFor } from '../../helpers/relay.ts';

let plex: FakePlex;
before(async () => {
  plex = await new FakePlex().start();
});
after(async () => plex.stop());

/** Raw log lines as a user reads them (JSON.parse would hide a repeated key). */
async function scanLines(activityMs: number, skipped = false): Promise<string[]> {
  const raw: string[] = [];
  const log = pino({ level: 'info', base: undefined }, { write: (s: string) => void raw.push(s) });
  const config = testConfig({ PLEX_TOKEN: plex.token, PLEX_LOCAL_URL: plex.url, PLEX_ANALYZE_TYPE: 'off', PLEX_WAIT_FOR_EXTERNAL_SCANNERS: false, SERVER_FILE_CHECKS_ENABLED: false, PLEX_DATABASE_PATH: '/nonexistent/plex.db' });
  plex.scanActivityMs = activityMs;
  plex.skipsPath = () => skipped;
  const q = runQueue([makePlexTarget(plex, config, { log, timings: { completionPollMs: 30, completionAppearMs: 150, activitiesMaxAgeMs: 0 } })]);
  try {
    const id = q.enqueue('/data/Movies/Heat (1995)', ['/data/Movies/Heat (1995)/Heat.mkv']);
    await waitFor(() => q.store.view.get(id)!.status === 'done', 10_000, 'delivery');
    await q.scheduler.afterStepsSettled();
  } finally {
    plex.scanActivityMs = 0;
    plex.skipsPath = () => false;
    await q.close();
  }
  return raw;
}

test('the completion line names the section once, and "completed" only when Plex showed the scan', async () => {
  const seen = await scanLines(300);
  const done = seen.find((l) => l.includes('Plex scan completed'));
  assert.ok(done, seen.join(''));
  assert.equal(done.match(/"section":/g)?.length, 1, done);
  assert.doesNotMatch(done, /scanSeen/);

  // A path Plex skips shows no activity at all.
  const unseen = await scanLines(0, true);
  assert.ok(!unseen.some((l) => l.includes('Plex scan completed')), unseen.join(''));
  const line = unseen.find((l) => l.includes('no scan activity'));
  assert.ok(line, unseen.join(''));
  assert.equal(line.match(/"section":/g)?.length, 1, line);
  assert.match(line, /taking the scan as already finished/);
});
