import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { NotifyEvent } from '../../src/core/events.ts';
import { DiscordFake } from '../fakes/discord.ts';
import { JsonReceiverFake, type NotifyCall } from '../fakes/notify-services.ts';
import { FakePlex } from '../fakes/plex.ts';
import { mediaTree } from '../helpers/plex-target.ts';
import { postForm, spawnRelay, waitFor, type RelayProcess } from '../helpers/relay.ts';

// Imports through a real relay with a json and a Discord destination: what is told, and when.

const MAPPINGS = { '/data/Movies/': ['/movies/'], '/data/TV/': ['/tv/'], '/data/Music/': ['/music/'] };
type Received = NotifyEvent & { id: number };
const FILMS = Array.from({ length: 200 }, (_, i) => `Film ${String(i).padStart(3, '0')} (2000)`);
const media = mediaTree();
const eventsOf = (calls: NotifyCall[]): Received[] => calls.filter((c) => c.status === 200).flatMap((c) => c.json.events as Received[]);
/** The events a Discord message stands for: each embed's title ends with its count ("Scanned · plex (12)"), or is one. */
const discordCount = (c: NotifyCall, kind: string) =>
  (c.json.embeds as Array<{ title: string }>).filter((e) => e.title.startsWith(kind)).reduce((n, e) => n + Number(/\((\d+)\)$/.exec(e.title)?.[1] ?? 1), 0);
const EPISODE = '/data/TV/Breaking Bad/Season 01/Breaking Bad - S01E02.mkv';

describe('notifications through the relay', () => {
  let plex: FakePlex;
  let json: JsonReceiverFake;
  let discord: DiscordFake;
  let relay: RelayProcess;

  before(async () => {
    plex = await new FakePlex({
      sections: [
        { id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] },
        { id: '2', title: 'TV', type: 'show', locations: ['/data/TV'] },
        { id: '3', title: 'Music', type: 'artist', locations: ['/data/Music'] },
      ],
    }).start();
    // What Plex's scans add, named as its listing names them (a movie by title and year, an episode by show and numbers).
    plex.items.push(
      { ratingKey: '100', sectionId: '2', type: 'show', title: 'Breaking Bad', year: 2008, addedAt: 1 },
      { ratingKey: '101', sectionId: '2', type: 'season', parentRatingKey: '100', title: 'Season 1', index: 1, addedAt: 1 },
    );
    plex.addedByScan.push(
      { ratingKey: '1', sectionId: '1', type: 'movie', title: 'Dune', year: 2021, file: '/data/Movies/Dune (2021)/Dune.mkv', addedAt: 0 },
      { ratingKey: '2', sectionId: '1', type: 'movie', title: 'Heat', year: 1995, file: '/data/Movies/Heat (1995)/Heat.mkv', addedAt: 0 },
      { ratingKey: '102', sectionId: '2', type: 'episode', parentRatingKey: '101', title: "Cat's in the Bag...", year: 2008, index: 2, file: EPISODE, addedAt: 0 },
      ...FILMS.map((f, i) => ({ ratingKey: String(1000 + i), sectionId: '1', type: 'movie' as const, title: f.replace(' (2000)', ''), year: 2000, file: `/data/Movies/${f}/film.mkv`, addedAt: 0 })),
    );
    // The imported files are on disk, but for the album: its scan fails its file check.
    for (const f of ['Dune (2021)/Dune.mkv', 'Heat (1995)/Heat.mkv', ...FILMS.map((f) => `${f}/film.mkv`)]) media.put(`/data/Movies/${f}`);
    media.put(EPISODE);
    // Plex takes a moment to scan, so "sent" and "scanned" are apart. The 200 films' scans are shorter: one at a
    // time, they set the second case's length (at 150 ms each, 32 s of its 36; at 20 ms, 5 s).
    plex.scanActivityMs = 150;
    plex.scanMsFor = (path) => (path.startsWith('/data/Movies/Film ') ? 20 : 150);
    json = await new JsonReceiverFake('json-secret-token').start();
    discord = await new DiscordFake().start();
    relay = await spawnRelay({
      config: {
        PLEX_LOCAL_URL: plex.url,
        PLEX_TOKEN: plex.token,
        SERVER_ALLOW_MANUAL_SCAN: true,
        SERVER_SCAN_DELAY: 0,
        SERVER_PATH_MAPPINGS: MAPPINGS,
        SERVER_IGNORE_LIST: ['/sample/'],
        SERVER_FILE_CHECKS_ENABLED: true,
        SERVER_MAX_FILE_CHECKS: 1,
        SERVER_FILE_CHECK_DELAY: 0,
        SERVER_FILE_EXIST_PATH_MAPPINGS: media.mappings,
        NOTIFICATIONS: {
          hook: { TYPE: 'json', URL: `${json.url}/scanrelay`, TOKEN: 'json-secret-token', BATCH_SECONDS: 2 },
          chat: { TYPE: 'discord', URL: discord.webhookUrl, BATCH_SECONDS: 2, MENTIONS: { ROLES: ['42'] } },
        },
      },
    });
  });
  after(async () => {
    await relay?.kill();
    await plex?.stop();
    await json?.stop();
    await discord?.stop();
  });

  const scan = (path: string) => postForm(relay.url, { eventType: 'Manual', filepath: path });

  test("each folder is told after Plex's scan of it ended, with the items Plex added; a failed scan as failed; nothing for an ignored request", async () => {
    for (const path of ['/movies/Dune (2021)/Dune.mkv', '/movies/Heat (1995)/Heat.mkv', '/movies/Dune (2021)/sample/s.mkv', '/music/Band/Album/01.flac', EPISODE.replace('/data/TV/', '/tv/')]) await scan(path);
    await waitFor(() => eventsOf(json.calls).length >= 4, 60_000, 'four events').catch((err) => {
      throw new Error(`${err.message}: ${JSON.stringify(eventsOf(json.calls).map((e) => [e.kind, e.folder]))}\n${relay.logs.filter((l) => /Music|fail|gnore/.test(l)).slice(-6).join('\n')}`);
    });
    const events = eventsOf(json.calls);
    for (const folder of ['/data/Movies/Dune (2021)', '/data/Movies/Heat (1995)', '/data/TV/Breaking Bad/Season 01']) {
      const e = events.find((x) => x.folder === folder);
      assert.equal(e?.kind, 'scanned', folder);
      assert.equal(e.target, 'plex');
      assert.equal(e.trigger, 'Manual');
      const ended = plex.scans.find((s) => s.path === folder)?.endedAt;
      assert.ok(ended !== undefined, `Plex scanned ${folder}`);
      assert.ok(e.at >= ended, 'told after Plex said the scan ended');
      const call = json.calls.find((c) => c.status === 200 && c.json.events.some((x: Received) => x.folder === folder))!;
      assert.ok(call.at >= ended);
    }
    // Issue 40: `scanned` carries the items the scan added, with title and year where Plex says them.
    assert.deepEqual(events.find((x) => x.folder === '/data/Movies/Dune (2021)')?.items, [{ key: '1', type: 'movie', title: 'Dune', year: 2021 }]);
    assert.deepEqual(events.find((x) => x.folder === '/data/TV/Breaking Bad/Season 01')?.items, [
      { key: '102', type: 'episode', title: "Cat's in the Bag...", year: 2008, show: 'Breaking Bad', season: 1, episode: 2 },
    ]);
    const failed = events.find((x) => x.folder === '/data/Music/Band/Album');
    assert.equal(failed?.kind, 'failed');
    assert.ok(failed.reason);
    assert.ok(!events.some((x) => x.folder?.includes('sample') || x.files?.some((f) => f.includes('sample'))), 'an ignored request is not told');
    await discord.until((c) => c.some((x) => /Failed/.test(JSON.stringify(x.json?.embeds ?? []))));
    assert.ok(discord.calls.every((c) => c.status === 204));
    const withFailure = discord.calls.find((c) => /Failed/.test(JSON.stringify(c.json.embeds)))!;
    assert.equal(withFailure.json.content, '<@&42>');
    // Discord too: each item is named once Plex's scan of it ended, and the ignored request is nowhere.
    await discord.until((c) => ['Dune (2021)', 'Heat (1995)', "Breaking Bad S01E02 — Cat's in the Bag..."].every((name) => c.some((x) => x.raw.includes(name))));
    for (const [name, folder] of [['Dune (2021)', '/data/Movies/Dune (2021)'], ['Breaking Bad S01E02', '/data/TV/Breaking Bad/Season 01']] as const) {
      const message = discord.calls.find((c) => c.raw.includes(name))!;
      assert.ok(message.at >= plex.scans.find((x) => x.path === folder)!.endedAt!, `${name} told after its scan ended`);
      assert.match(message.json.embeds.find((e: { title: string }) => e.title.startsWith('Scanned')).description, new RegExp(`${name.replace(/[()]/g, '\\$&')}.*${folder.replace(/[()]/g, '\\$&')}`));
    }
    assert.ok(!discord.calls.some((c) => c.raw.includes('sample')), 'an ignored request is not told on Discord');
    assert.equal(discord.calls.reduce((n, c) => n + discordCount(c, 'Failed'), 0), 1, 'one failure, told once');
  });

  test('200 scans make a few messages; a destination answering 500 for a while gets everything afterwards', async (t) => {
    const before = { json: json.calls.length, discord: discord.calls.length, told: eventsOf(json.calls).length };
    json.failNext(3, { status: 500, body: 'down' });
    discord.failNext(3, { status: 500, body: JSON.stringify({ message: '500: Internal Server Error', code: 0 }) });
    const folders = FILMS.map((f) => `/data/Movies/${f}`);
    const importAll = async (some: string[]) => {
      for (let i = 0; i < some.length; i += 50) await Promise.all(some.slice(i, i + 50).map((f) => scan(`${f.replace('/data/Movies/', '/movies/')}/film.mkv`)));
    };
    // The first 50 come alone, and the other 150 once both destinations refused their batch three times: those join
    // the batch the relay still holds to try again, as scans do during an outage over a long import (and the case
    // waits for no fixed time to get there).
    await importAll(folders.slice(0, 50));
    const refusals = (calls: NotifyCall[]) => calls.filter((c) => c.status === 500).length;
    await waitFor(() => refusals(json.calls.slice(before.json)) >= 3 && refusals(discord.calls.slice(before.discord)) >= 3, 60_000, 'both destinations to refuse the first 50 three times');
    await importAll(folders.slice(50));
    await waitFor(() => eventsOf(json.calls).length >= before.told + 200, 240_000, 'all 200 told');
    const told = eventsOf(json.calls).slice(before.told);
    assert.deepEqual(told.map((e) => e.folder).sort(), folders, 'every folder, once');
    assert.ok(told.every((e) => e.kind === 'scanned'));
    for (const e of told) {
      const scanned = plex.scans.find((x) => x.path === e.folder)!;
      assert.ok(scanned.endedAt !== undefined && e.at >= scanned.endedAt, `${e.folder} told after its scan ended`);
      assert.deepEqual(e.items?.map((i) => `${i.title} (${i.year})`), [e.folder!.replace('/data/Movies/', '')], `${e.folder}: its movie`);
    }
    // Discord answered 500 for a while, and then got every scan: the embeds' counts add up to 200.
    await discord.until((c) => c.slice(before.discord).reduce((n, x) => n + (x.status === 204 ? discordCount(x, 'Scanned') : 0), 0) >= 200);
    assert.equal(discord.calls.slice(before.discord).reduce((n, x) => n + (x.status === 204 ? discordCount(x, 'Scanned') : 0), 0), 200);
    // Plex was not slowed by the notifications: each folder sent once, one scan at a time, never while another ran.
    const sent = plex.refreshes().map((r) => r.path).filter((p) => folders.includes(p));
    assert.deepEqual([...sent].sort(), folders, 'each folder sent to Plex once');
    assert.ok(plex.scans.filter((x) => folders.includes(x.path)).every((x) => !x.whileBusy), 'never sent while a scan ran');
    const documents = json.calls.slice(before.json).filter((c) => c.status === 200).length;
    const messages = discord.calls.slice(before.discord).filter((c) => c.status === 204).length;
    t.diagnostic(`200 scans: ${documents} json documents, ${messages} Discord messages`);
    assert.ok(documents <= 6, `${documents} json documents`);
    assert.ok(messages <= 6, `${messages} Discord messages`);
    assert.ok(discord.calls.every((c) => c.status === 204 || c.status === 500), 'Discord refused no message (only its outage answered 500)');
    // The webhook's token never reaches the log.
    assert.ok(!relay.logs.some((l) => l.includes(discord.token) || l.includes('json-secret-token')));
  });

  test('the webhook URL and token show nowhere: not in /metrics, the dashboard, the test button\'s answer or the log', async () => {
    const secrets = [discord.token, 'json-secret-token'];
    const metrics = await (await fetch(`${relay.base}/metrics`)).text();
    const page = await (await fetch(relay.url)).text();
    const answer = await fetch(`${relay.base}/api/${relay.secret}/notify-test`, { method: 'POST' });
    assert.equal(answer.status, 200);
    const results = ((await answer.json()) as { results: Array<{ name: string; ok: boolean; answer: string; url: string }> }).results;
    assert.deepEqual(results.map((r) => [r.name, r.ok]).sort(), [['chat', true], ['hook', true]]);
    assert.match(results.find((r) => r.name === 'chat')!.answer, /^204/);
    for (const text of [metrics, page, JSON.stringify(results), relay.logs.join('\n')]) for (const secret of secrets) assert.ok(!text.includes(secret), `${secret} shown`);
  });
});
