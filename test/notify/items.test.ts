import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { notificationSchema } from '../../src/config/notifications.ts';
import { EVENT_ITEMS, type ScannedItem, type StoredEvent } from '../../src/core/events.ts';
import { postMessage } from '../../src/notify/http.ts';
import { eventLine, itemLabel, scannedWanted } from '../../src/notify/message.ts';
import { FORMATS } from '../../src/notify/services/index.ts';
import { NTFY_MAX_BYTES } from '../../src/notify/services/text.ts';
import { DiscordFake } from '../fakes/discord.ts';

// Issue 40: `scanned` names the items Plex added or updated, with title and year, in every service's message.
// No peer does: autopulse's Discord embed is "[event] - [trigger] - N files" with the paths in a Files field
// (crates/service/src/settings/webhooks/discord.rs:173-224), and its Plex item lookup decodes key, type and Media only
// (settings/targets/plex.rs:58-65), right after sending the scan, for refresh/analyze (plex.rs:393-430).

const discord = await new DiscordFake().start();
after(() => discord.stop());

const DUNE: ScannedItem = { key: '7', type: 'movie', title: 'Dune', year: 2021 };
const EPISODE: ScannedItem = { key: '9', type: 'episode', title: 'Pilot', year: 2008, show: 'Breaking Bad', season: 1, episode: 2 };
const scanned = (id: number, items: ScannedItem[], extra: Partial<StoredEvent> = {}): StoredEvent => ({
  id,
  kind: 'scanned',
  at: 1_700_000_000_000,
  target: 'plex',
  scan: id,
  folder: `/data/Movies/${id}`,
  trigger: 'Radarr',
  tookMs: 3200,
  items,
  ...extra,
});

test('an item is named as people name it: "Dune (2021)", "Show S01E02 — Title", a track by its artist', () => {
  assert.equal(itemLabel(DUNE), 'Dune (2021)');
  assert.equal(itemLabel(EPISODE), 'Breaking Bad S01E02 — Pilot');
  assert.equal(itemLabel({ type: 'episode', title: 'Special', show: 'Show' }), 'Show — Special');
  assert.equal(itemLabel({ type: 'track', title: 'Song', artist: 'Band', album: 'Album' }), 'Band — Song');
  assert.equal(itemLabel({ type: 'movie', title: 'No Year' }), 'No Year');
});

test("a scanned line names Plex's items before the folder; without items it names the request's title", () => {
  assert.equal(eventLine(scanned(1, [DUNE], { folder: '/data/Movies/Dune (2021)', title: 'Dune.2021.2160p' })), 'Dune (2021) — /data/Movies/Dune (2021) · Radarr · 3.2 s after the request');
  const next = { ...EPISODE, title: "Cat's in the Bag...", episode: 3 };
  assert.equal(eventLine(scanned(2, [EPISODE, next, DUNE], { moreItems: 3 })).split(' — /data')[0], "Breaking Bad S01E02 — Pilot; S01E03 — Cat's in the Bag...; Dune (2021) and 3 more");
  assert.equal(eventLine(scanned(3, [], { items: undefined, title: 'Heat' })), 'Heat — /data/Movies/3 · Radarr · 3.2 s after the request');
});

test('200 scans of 20 long-named items each: Discord takes every message, and the items are in them', async () => {
  const dest = notificationSchema.parse({ TYPE: 'discord', URL: discord.webhookUrl });
  const long = (n: number) => ({ ...EPISODE, title: `${'Épisode '.repeat(40)}${n}`, show: 'S'.repeat(300) });
  const events = Array.from({ length: 200 }, (_, i) => scanned(i + 1, [DUNE, ...Array.from({ length: EVENT_ITEMS - 1 }, (_, n) => long(n))], { moreItems: 40 }));
  const messages = FORMATS.discord(dest, events);
  assert.equal(messages.length, 1, 'one group: one message');
  for (const m of messages) assert.equal((await postMessage(dest, m)).kind, 'sent');
  assert.ok(discord.calls.every((c) => c.status === 204), JSON.stringify(discord.calls.map((c) => c.status)));
  assert.match(discord.calls[0]!.json.embeds[0].description, /^Dune \(2021\); /);
});

test('the json document carries the items as fields; ntfy, gotify, apprise and hookshot name them', () => {
  const events = [scanned(1, [DUNE]), scanned(2, [EPISODE])];
  for (const type of ['json', 'ntfy', 'gotify', 'apprise', 'hookshot'] as const) {
    const dest = notificationSchema.parse({ TYPE: type, URL: 'http://127.0.0.1:9/x', ...(type === 'gotify' ? { TOKEN: 't' } : {}) });
    const [m] = FORMATS[type](dest, events);
    if (type === 'json') {
      assert.deepEqual(JSON.parse(m!.body).events.map((e: StoredEvent) => e.items), [[DUNE], [EPISODE]]);
      continue;
    }
    const text = type === 'ntfy' ? m!.body : JSON.stringify(JSON.parse(m!.body));
    assert.ok(text.includes('Dune (2021)') && text.includes('Breaking Bad S01E02 — Pilot'), `${type}: ${text}`);
  }
  const many = Array.from({ length: 300 }, (_, i) => scanned(i, [DUNE, EPISODE]));
  const dest = notificationSchema.parse({ TYPE: 'ntfy', URL: 'http://127.0.0.1:9/x' });
  assert.ok(Buffer.byteLength(FORMATS.ntfy(dest, many)[0]!.body) <= NTFY_MAX_BYTES);
});

test("Plex is asked for a scan's items only when a destination takes that target's and trigger's scanned events", () => {
  const dest = (extra: Record<string, unknown>) => notificationSchema.parse({ TYPE: 'json', URL: 'http://127.0.0.1:9/x', ...extra });
  assert.equal(scannedWanted([], 'plex', 'Radarr'), false, 'no NOTIFICATIONS');
  assert.equal(scannedWanted([dest({})], 'plex', 'Radarr'), true);
  assert.equal(scannedWanted([dest({ EVENTS: ['failed'] })], 'plex', 'Radarr'), false);
  assert.equal(scannedWanted([dest({ TARGETS: ['jellyfin'] })], 'plex', 'Radarr'), false);
  assert.equal(scannedWanted([dest({ TRIGGERS: ['sonarr'] })], 'plex', 'Radarr'), false);
  assert.equal(scannedWanted([dest({ TRIGGERS: ['sonarr'] }), dest({ TARGETS: ['PLEX'] })], 'plex', 'Radarr'), true);
});
