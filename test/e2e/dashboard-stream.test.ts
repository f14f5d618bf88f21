import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FakePlex } from '../fakes/plex.ts';
import { launchChromium } from '../helpers/browser.ts';
import { postForm, spawnRelay, waitFor, type RelayProcess } from '../helpers/relay.ts';

// The dashboard updates itself from the relay's event stream: the scan's row shows Plex's completion because the
// stream told the page of it, with no reload and no polling. Where the stream cannot get through, the page polls.

function row(page: Page, folder: string) {
  return page.locator('#history tr', { has: page.locator('code', { hasText: folder }) });
}

describe('dashboard event stream in a real browser', () => {
  let plex: FakePlex;
  let relay: RelayProcess;
  let browser: Browser;

  before(async () => {
    plex = await new FakePlex().start();
    plex.scanActivityMs = 400;
    [relay, browser] = await Promise.all([
      spawnRelay({ config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_ALLOW_MANUAL_SCAN: true, SERVER_SCAN_DELAY: 1, SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] } } }),
      launchChromium(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await relay?.kill();
    await plex?.stop();
  });

  test("a scan shows as completed once Plex's scan ended, told by the stream, with no reload and no polling", async () => {
    const page = await browser.newPage();
    await page.goto(relay.url);
    await page.locator('#dashboard[data-updates="stream"]').waitFor();
    const loads: string[] = [];
    page.on('framenavigated', (f) => loads.push(f.url()));
    await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/Alien (1979)/Alien.mkv' });
    await waitFor(() => plex.scans.find((s) => s.path === '/data/Movies/Alien (1979)')?.endedAt, 30_000, "Plex's scan to end");
    // The page hears of the scan's end from the stream, then shows it.
    await page.waitForFunction(() => (document.getElementById('dashboard')!.dataset.lastEvent ?? '').startsWith('scanned '), undefined, { timeout: 30_000 });
    const told = JSON.parse((await page.locator('#dashboard').getAttribute('data-last-event'))!.slice('scanned '.length));
    assert.equal(told.folder, '/data/Movies/Alien (1979)');
    assert.ok(told.at >= plex.scans.find((s) => s.path === '/data/Movies/Alien (1979)')!.endedAt!, 'told after Plex said it ended');
    const done = row(page, '/data/Movies/Alien (1979)');
    await done.filter({ hasText: 'completed' }).waitFor({ timeout: 30_000 });
    assert.equal(await done.getAttribute('data-status'), 'done');
    assert.equal(await page.locator('#dashboard').getAttribute('data-updates'), 'stream', 'the page never fell back to polling');
    assert.deepEqual(loads, [], 'no reload');
    await page.close();
  });

  test('where the stream is cut, the page polls every 5 s as before and still shows the scan', async () => {
    const page = await browser.newPage();
    // A proxy that never lets the stream through.
    await page.route('**/events', (r) => r.abort());
    await page.goto(relay.url);
    assert.equal(await page.locator('#dashboard').getAttribute('data-updates'), 'polling');
    await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/Heat (1995)/Heat.mkv' });
    await row(page, '/data/Movies/Heat (1995)').filter({ hasText: 'completed' }).waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('#dashboard').getAttribute('data-updates'), 'polling');
    await page.close();
  });
});
