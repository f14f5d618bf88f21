import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FakePlex } from '../fakes/plex.ts';
import { launchChromium } from '../helpers/browser.ts';
import { postJson, spawnRelay, tempDir, waitFor, type RelayProcess } from '../helpers/relay.ts';

const MAPPINGS = {
  '/data/Movies/': ['/movies/', '/mnt/unionfs/Media/Movies/'],
  '/data/TV/': ['/tv/', '/mnt/unionfs/Media/TV/'],
};

async function apiGet(relay: RelayProcess, path: string): Promise<any> {
  return (await fetch(`${relay.base}/api/${relay.secret}/${path}`)).json();
}

/** The queue or history row for a folder, once the page shows it. */
function row(page: Page, region: 'queue' | 'history', folder: string) {
  return page.locator(`#${region} tr`, { has: page.locator('code', { hasText: folder }) });
}

describe('dashboard in a real browser against the real relay', () => {
  let plex: FakePlex;
  let browser: Browser;
  /** Short delay: scans go out by themselves. */
  let quick: RelayProcess;
  /** Long delay: scans stay pending until someone presses "Scan now". */
  let slow: RelayProcess;
  const shots = tempDir('scanrelay-shots-');

  before(async () => {
    plex = await new FakePlex().start();
    const config = { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_ALLOW_MANUAL_SCAN: true, SERVER_PATH_MAPPINGS: MAPPINGS };
    [quick, slow, browser] = await Promise.all([
      spawnRelay({ config: { ...config, SERVER_SCAN_DELAY: 3 } }),
      spawnRelay({ config: { ...config, SERVER_SCAN_DELAY: 600 } }),
      launchChromium(),
    ]);
  });
  after(async () => {
    await browser?.close();
    await quick?.kill();
    await slow?.kill();
    await plex?.stop();
  });

  test('a scan submitted on the page shows as pending, then as delivered once Plex got the refresh', async () => {
    const page = await browser.newPage();
    await page.goto(quick.url);
    await page.getByLabel('Path to scan').fill('/mnt/unionfs/Media/Movies/Alien (1979)/Alien (1979).mkv');
    await page.getByRole('button', { name: 'Scan', exact: true }).click();
    await page.locator('#scan-result', { hasText: 'Queued /data/Movies/Alien (1979)' }).waitFor();
    const pending = row(page, 'queue', '/data/Movies/Alien (1979)');
    await pending.waitFor();
    assert.equal(await pending.getAttribute('data-status'), 'pending');
    assert.match(await pending.innerText(), /Manual/);
    assert.equal(plex.refreshes().filter((r) => r.path === '/data/Movies/Alien (1979)').length, 0, 'not sent before the delay');

    // No reload: the page refreshes by itself.
    const delivered = row(page, 'history', '/data/Movies/Alien (1979)');
    await delivered.waitFor({ timeout: 30_000 });
    assert.equal(await delivered.getAttribute('data-status'), 'done');
    assert.match(await delivered.innerText(), /delivered/);
    assert.match(await delivered.innerText(), /section 1 \(Movies\)/);
    assert.deepEqual(
      plex.refreshes().filter((r) => r.path === '/data/Movies/Alien (1979)').map((r) => r.section),
      ['1'],
    );
    assert.equal(await row(page, 'queue', '/data/Movies/Alien (1979)').count(), 0);
    await page.close();
  });

  test('the mapping preview shows the mapped path, folder and Plex section as the path is typed', async () => {
    const page = await browser.newPage();
    await page.goto(quick.url);
    await page.getByLabel('Path to scan').fill('/tv/Dark/Season 01/Dark - S01E01.mkv');
    const preview = page.locator('#preview');
    await preview.locator('dd', { hasText: 'TV (id 2' }).waitFor();
    const text = await preview.innerText();
    assert.match(text, /\/data\/TV\/Dark\/Season 01\/Dark - S01E01\.mkv/);
    assert.match(text, /Folder\s+\/data\/TV\/Dark\/Season 01\n/);
    assert.match(text, /location \/data\/TV/);

    await page.getByLabel('Path to scan').fill('relative/file.mkv');
    await preview.locator('dd', { hasText: 'not absolute' }).waitFor();
    await page.getByLabel('Path to scan').fill('/music/Band/01.flac');
    await preview.locator('dd', { hasText: 'no Plex section location holds this folder' }).waitFor();
    assert.equal((await apiGet(quick, 'queue')).count, 0, 'the preview queues nothing');
    await page.close();
  });

  test('pending scans can be sent now or deleted from the queue table', async () => {
    const page = await browser.newPage();
    for (const path of ['/movies/Heat (1995)/', '/movies/Jaws (1975)/']) {
      assert.equal((await postJson(`${slow.base}/api/${slow.secret}/scan`, { path })).status, 200);
    }
    await page.goto(slow.url);
    const heat = row(page, 'queue', '/data/Movies/Heat (1995)');
    const jaws = row(page, 'queue', '/data/Movies/Jaws (1975)');
    await heat.waitFor();
    await jaws.waitFor();

    await jaws.getByRole('button', { name: /Delete scan/ }).click();
    await page.locator('#action-result', { hasText: 'deleted' }).waitFor();
    await waitFor(async () => (await jaws.count()) === 0, 10_000, 'Jaws row gone');
    assert.ok(!(await apiGet(slow, 'queue')).items.some((i: any) => i.folder === '/data/Movies/Jaws (1975)'));

    await heat.getByRole('button', { name: /Retry scan/ }).click();
    await row(page, 'history', '/data/Movies/Heat (1995)').waitFor({ timeout: 30_000 });
    assert.ok(plex.refreshes().some((r) => r.path === '/data/Movies/Heat (1995)'));
    assert.ok(!plex.refreshes().some((r) => r.path === '/data/Movies/Jaws (1975)'), 'a deleted scan is never sent');
    await page.close();
  });

  test('a queued refresh says what it asks for; a plain scan of the same folder needs no word (issue 39 items 5 and 6)', async () => {
    const page = await browser.newPage();
    const file = '/movies/Ran (1985)/Ran (1985).mkv';
    assert.equal((await postJson(`${slow.base}/api/${slow.secret}/scan`, { path: file, action: 'refresh' })).status, 200);
    assert.equal((await postJson(`${slow.base}/api/${slow.secret}/scan`, { path: '/movies/Ran (1985)/' })).status, 200);
    await page.goto(slow.url);
    // Two rows for one folder: a refresh never merges with a scan (queue/enqueue-batch.ts).
    const rows = row(page, 'queue', '/data/Movies/Ran (1985)');
    await waitFor(async () => (await rows.count()) === 2, 10_000, 'both Ran rows');
    const asked = rows.locator('[data-action-asked]');
    assert.equal(await asked.count(), 1);
    assert.equal(await asked.getAttribute('data-action-asked'), 'refresh');
    assert.equal(await asked.innerText(), 'refresh the metadata of the items at its files');
    const api = (await apiGet(slow, 'queue')).items.filter((i: any) => i.folder === '/data/Movies/Ran (1985)');
    assert.deepEqual(api.map((i: any) => i.action).sort(), ['refresh', 'scan']);
    // The form asks for one too: an analyze of the file's item.
    await page.getByLabel('Path to scan').fill('/movies/Ran (1985)/Ran (1985).mkv');
    await page.getByLabel('What to ask the targets').selectOption('analyze');
    await page.getByRole('button', { name: 'Scan', exact: true }).click();
    await page.locator('#scan-result', { hasText: 'Queued /data/Movies/Ran (1985)' }).waitFor();
    await waitFor(async () => (await rows.count()) === 3, 10_000, 'the analyze row');
    assert.deepEqual((await rows.locator('[data-action-asked]').evaluateAll((els) => els.map((e) => e.getAttribute('data-action-asked')))).sort(), ['analyze', 'refresh']);
    api.push(...(await apiGet(slow, 'queue')).items.filter((i: any) => i.folder === '/data/Movies/Ran (1985)' && i.action === 'analyze'));
    for (const i of api) assert.equal((await fetch(`${slow.base}/api/${slow.secret}/queue/${i.id}`, { method: 'DELETE' })).status, 200);
    await page.close();
  });

  test('a failed scan can be retried from the history', async () => {
    const page = await browser.newPage();
    // Accepted while Plex is down (its libraries unknown); once Plex answers, the folder is in no section.
    await plex.setMode('down');
    const queued = await postJson(`${slow.base}/api/${slow.secret}/scan`, { path: '/data/Docs/Planet Earth (2006)/' });
    await plex.setMode('up');
    assert.equal(queued.status, 200);
    await page.goto(slow.url);
    await row(page, 'queue', '/data/Docs/Planet Earth (2006)').getByRole('button', { name: /Retry scan/ }).click();
    const failed = page.locator(`#history tr[data-id="${queued.body.scans[0].id}"][data-status="failed"]`);
    await failed.waitFor({ timeout: 30_000 });
    assert.match(await failed.innerText(), /in no Plex section/);

    plex.sections = [...plex.sections, { id: '3', title: 'Docs', type: 'movie', locations: ['/data/Docs'] }];
    await failed.getByRole('button', { name: /Retry scan/ }).click();
    await page.locator(`#history tr[data-id="${queued.body.scans[0].id}"][data-status="done"]`).waitFor({ timeout: 30_000 });
    assert.ok(plex.refreshes().some((r) => r.path === '/data/Docs/Planet Earth (2006)' && r.section === '3'));
    await page.close();
  });

  test('history filters by result, source and path text', async () => {
    const page = await browser.newPage();
    // One scan from the page (Manual), released at once, so the history holds Manual and API, done and failed.
    await page.goto(slow.url);
    await page.getByLabel('Path to scan').fill('/movies/Up (2009)/Up.mkv');
    await page.getByRole('button', { name: 'Scan', exact: true }).click();
    await row(page, 'queue', '/data/Movies/Up (2009)').getByRole('button', { name: /Retry scan/ }).click();
    await row(page, 'history', '/data/Movies/Up (2009)').waitFor({ timeout: 30_000 });

    const sources = async () => (await page.locator('#history tbody tr td[data-label="Source"]').allInnerTexts()).map((s) => s.trim());
    const folders = async () => page.locator('#history tbody tr code').allInnerTexts();

    await page.getByLabel('Source').selectOption('Manual');
    await waitFor(async () => (await sources()).length > 0 && (await sources()).every((s) => s === 'Manual'), 10_000, 'only Manual rows');
    assert.deepEqual(await folders(), ['/data/Movies/Up (2009)']);

    await page.getByLabel('Source').selectOption('API');
    await waitFor(async () => (await sources()).length > 0 && (await sources()).every((s) => s === 'API'), 10_000, 'only API rows');
    await page.getByLabel('Result').selectOption('done');
    await waitFor(async () => (await page.locator('#history tbody tr').count()) > 0 && (await page.locator('#history tbody tr:not([data-status="done"])').count()) === 0, 10_000, 'only done rows');

    await page.getByLabel('Result').selectOption('');
    await page.getByLabel('Source').selectOption('');
    await page.getByLabel('Path contains').fill('heat');
    await waitFor(async () => JSON.stringify(await folders()) === JSON.stringify(['/data/Movies/Heat (1995)']), 10_000, 'text filter');
    assert.match(page.url(), /text=heat/, 'the filter is kept in the address for a reload');

    await page.getByLabel('Path contains').fill('no such folder');
    await page.locator('#history [data-empty="history"]').waitFor();
    await page.close();
  });

  test('with JavaScript disabled the form still submits, and the history filter still works', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(slow.url);
    assert.equal(await page.locator('#preview').isVisible(), false);
    await page.getByLabel('Path to scan').fill('/tv/Dark/Season 02/');
    await Promise.all([page.waitForURL(slow.url), page.getByRole('button', { name: 'Scan', exact: true }).click()]);
    await page.getByText('was added to the scan queue').waitFor();
    assert.ok((await apiGet(slow, 'queue')).items.some((i: any) => i.folder === '/data/TV/Dark/Season 02' && i.source === 'Manual'));

    // The page as served lists the queue; the filter form is a plain GET.
    await page.goto(slow.url);
    await row(page, 'queue', '/data/TV/Dark/Season 02').waitFor();
    await page.getByLabel('Path contains').fill('planet');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/text=planet/);
    assert.deepEqual(await page.locator('#history tbody tr code').allInnerTexts(), ['/data/Docs/Planet Earth (2006)']);
    await context.close();
  });

  // Issue 23, item 8: the dashboard runs under CSP default-src 'self'; an inline script or style would be
  // refused, and Chromium says so on the console.
  test('no Content-Security-Policy violation with JavaScript on and off, and the page cannot be framed', async () => {
    const violations: string[] = [];
    for (const javaScriptEnabled of [true, false]) {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      const res = await page.goto(slow.url);
      assert.match(res!.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
      if (javaScriptEnabled) {
        await page.getByLabel('Path to scan').fill('/movies/Up (2009)/Up.mkv');
        await page.locator('#preview dd', { hasText: 'Movies (id 1' }).waitFor();
      } else {
        assert.equal(await page.locator('button[data-action]').first().isVisible().catch(() => false), false);
      }
      await context.close();
    }
    assert.deepEqual(violations, []);
  });

  test('the page fits a phone screen and a desktop one (screenshots kept for a look)', async () => {
    for (const [name, width, height] of [
      ['desktop', 1280, 900],
      ['phone', 390, 844],
    ] as const) {
      const page = await browser.newPage({ viewport: { width, height } });
      await page.goto(slow.url);
      await page.getByLabel('Path to scan').fill('/movies/Up (2009)/Up.mkv');
      await page.locator('#preview dd', { hasText: 'Movies (id 1' }).waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `${name}: page is ${overflow}px wider than the screen`);
      await page.screenshot({ path: join(shots, `dashboard-${name}.png`), fullPage: true });
      await page.close();
    }
  });
});
