import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { FakeArrManage } from '../fakes/arr-manage.ts';
import { FakePlex } from '../fakes/plex.ts';
import { launchChromium } from '../helpers/browser.ts';
import { postJson, spawnRelay, waitFor, type RelayProcess } from '../helpers/relay.ts';

/**
 * The dashboard's Connect page in Chromium against the real relay, a fake Plex, a fake Sonarr (typed in on the page)
 * and a fake Radarr (a TARGETS entry): pairings with sample paths, one Webhook per *arr registered and tested.
 */
describe('the Connect page in a real browser', () => {
  let plex: FakePlex;
  let sonarr: FakeArrManage;
  let radarr: FakeArrManage;
  let relay: RelayProcess;
  let browser: Browser;

  before(async () => {
    plex = await new FakePlex({
      sections: [
        { id: '1', title: 'Movies', type: 'movie', locations: ['/data/media/Movies'] },
        { id: '2', title: 'TV Shows', type: 'show', locations: ['/data/media/TV'] },
      ],
    }).start();
    sonarr = await new FakeArrManage('sonarr').start();
    radarr = await new FakeArrManage('radarr').start();
    sonarr.rootFolders = ['/tv', '/anime'];
    sonarr.items = [{ id: 1, title: 'Show', path: '/tv/Show (2020)' }];
    radarr.rootFolders = ['/movies'];
    radarr.items = [{ id: 7, title: 'Film', path: '/movies/Film (2020)' }];
    [relay, browser] = await Promise.all([
      spawnRelay({
        config: {
          PLEX_LOCAL_URL: plex.url,
          PLEX_TOKEN: plex.token,
          SERVER_ALLOW_MANUAL_SCAN: true,
          SERVER_SCAN_DELAY: 1,
          // An autoscan user's relay: /triggers/ is on, and every page asks for these (Basic auth).
          SERVER_AUTH_USER: 'relay',
          SERVER_AUTH_PASS: 'relay-pass',
          TARGETS: { 'radarr-main': { TYPE: 'radarr', URL: radarr.url, API_KEY: radarr.apiKey } },
        },
      }),
      launchChromium(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await relay?.kill();
    await Promise.all([plex?.stop(), sonarr?.stop(), radarr?.stop()]);
  });

  test('shows the pairings with a sample path before and after, then registers one webhook per *arr and runs the test', async () => {
    const context = await browser.newContext({ httpCredentials: { username: 'relay', password: 'relay-pass' } });
    const page = await context.newPage();
    await page.goto(relay.url);
    await page.getByRole('link', { name: 'Connect' }).click();
    await page.locator('#servers', { hasText: `Plex at ${plex.url}` }).waitFor();
    assert.equal(await page.getByLabel(/radarr-main: radarr at/).isChecked(), true);
    await page.getByLabel('Kind').selectOption('sonarr');
    await page.getByLabel('URL', { exact: true }).fill(sonarr.url);
    await page.getByLabel('API key').fill(sonarr.apiKey);
    assert.equal(await page.getByLabel('How the *arrs reach this relay').inputValue(), relay.base);

    await page.getByRole('button', { name: 'Show pairings' }).click();
    await page.locator('#connect-result', { hasText: 'nothing was changed yet' }).waitFor();
    const rows = await page.locator('#pairings tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    assert.deepEqual(rows, [
      ['Radarr (/triggers/radarr)', '/movies', 'Movies /data/media/Movies', '/movies/Film (2020)', '/data/media/Movies/Film (2020)'],
      ['Sonarr (/triggers/sonarr)', '/tv', 'TV Shows /data/media/TV', '/tv/Show (2020)', '/data/media/TV/Show (2020)'],
      ['Sonarr (/triggers/sonarr)', '/anime', 'no library holds it: no rewrite', '', ''],
    ]);
    assert.deepEqual([...sonarr.calls, ...radarr.calls].filter((c) => c.method !== 'GET'), [], 'showing the pairings changes nothing');

    await page.getByRole('button', { name: 'Register webhooks and test' }).click();
    await page.locator('#connect-result', { hasText: 'Sonarr: webhook added' }).waitFor({ timeout: 60_000 });
    assert.match(await page.locator('#connect-result').innerText(), /Radarr: webhook added \(http:\/\/127\.0\.0\.1:\d+\/triggers\/radarr\), test received/);
    assert.equal(sonarr.webhooks().length, 1);
    assert.equal(radarr.webhooks().length, 1);
    for (const arr of [sonarr, radarr]) assert.ok(arr.sent.filter((s) => s.payload.eventType === 'Test').every((s) => s.status === 200) && arr.sent.length === 2, JSON.stringify(arr.sent));
    const config = JSON.parse(readFileSync(relay.configPath, 'utf8'));
    assert.deepEqual(config.SERVER_AUTOSCAN_TRIGGERS.sonarr.REWRITE, [{ from: '^/tv(/|$)', to: '/data/media/TV${1}' }]);
    assert.match(await page.locator('#connect-log').innerText(), /a real import of \/tv\/Show \(2020\) would scan \/data\/media\/TV\/Show \(2020\) in library TV Shows/);

    // Again: the connections are found by their URL and updated, never added twice.
    await page.getByRole('button', { name: 'Register webhooks and test' }).click();
    await page.locator('#connect-result', { hasText: 'Sonarr: webhook updated' }).waitFor({ timeout: 60_000 });
    assert.equal(sonarr.webhooks().length, 1);
    assert.equal(radarr.webhooks().length, 1);

    // A real Download from Sonarr now scans Plex's folder.
    const mark = plex.refreshes().length;
    assert.deepEqual((await sonarr.importFile(1, 'Season 01/Show - S01E01.mkv')).map((s) => s.status), [200]);
    await waitFor(() => plex.refreshes().length > mark, 60_000, 'the Plex scan');
    assert.deepEqual(plex.refreshes().slice(mark).map((r) => [r.section, r.path]), [['2', '/data/media/TV/Show (2020)/Season 01']]);
    await context.close();
  });

  test('the actions need the secret and a same-origin request', async () => {
    const body = { relayUrl: relay.base, arrs: [{ target: 'radarr-main' }] };
    const auth = { authorization: `Basic ${Buffer.from('relay:relay-pass').toString('base64')}` };
    const cross = await postJson(`${relay.base}/api/${relay.secret}/connect/apply`, body, { ...auth, 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' });
    assert.equal(cross.status, 403);
    const wrong = await postJson(`${relay.base}/api/not-the-secret/connect/apply`, body, auth);
    assert.equal(wrong.status, 404);
    const noAuth = await postJson(`${relay.base}/api/${relay.secret}/connect/plan`, body);
    assert.equal(noAuth.status, 401);
    assert.deepEqual(radarr.calls.filter((c) => c.method !== 'GET' && c.path === '/api/v3/notification').length, 1, 'no refused request reached Radarr');
  });
});
