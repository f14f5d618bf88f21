import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { notificationSchema } from '../../src/config/notifications.ts';
import type { StoredEvent } from '../../src/core/events.ts';
import type { ScanItem } from '../../src/core/scan.ts';
import { postMessage } from '../../src/notify/http.ts';
import { maskUrl, scrub } from '../../src/notify/mask.ts';
import { LINE_MAX } from '../../src/notify/message.ts';
import { discordMessages, escapeMarkdown } from '../../src/notify/services/discord.ts';
import { deliveryEvent } from '../../src/queue/events.ts';
import { DiscordFake } from '../fakes/discord.ts';

const discord = await new DiscordFake().start();
after(() => discord.stop());

test('a batch of many scans on many targets, with lines longer than its limits, is one message Discord takes: an embed per kind', async () => {
  const dest = notificationSchema.parse({ TYPE: 'discord', URL: discord.webhookUrl });
  const long = 'x'.repeat(5000);
  const events: StoredEvent[] = Array.from({ length: 13 * 40 }, (_, i) => ({ id: i + 1, kind: i % 2 ? 'failed' : 'scanned', at: Date.now(), target: `${'t'.repeat(300)}${i % 13}`, folder: `/data/${long}/${i}`, reason: long }));
  const messages = discordMessages(dest, events);
  assert.equal(messages.length, 1, 'two kinds: two embeds');
  for (const m of messages) assert.equal((await postMessage(dest, m)).kind, 'sent');
  assert.ok(discord.calls.every((c) => c.status === 204));
  assert.deepEqual(discord.calls.map((c) => c.json.embeds.map((e: { title: string }) => e.title)), [['Scanned (260)', 'Failed (260)']]);
});

test('a removal scan is told as removed, a failure with its reason, with the time from the request', () => {
  const item: ScanItem = { id: 7, folder: '/data/TV', files: [], moreFiles: 0, source: 'Sonarr', event: 'SeriesDelete', title: null, ids: {}, updateType: 'Deleted', priority: 0, requests: 3, upgrade: false, removal: true, firstAt: 1000, attempt: 1, fileChecks: 0 };
  const removed = deliveryEvent(item, 'plex', { status: 'done', detail: 'completed' }, 4000);
  assert.equal(removed.kind, 'removed');
  assert.equal(removed.requests, 3);
  assert.equal(removed.tookMs, 3000);
  const failed = deliveryEvent({ ...item, removal: false }, 'plex', { status: 'failed', error: 'no section' }, 4000);
  assert.deepEqual([failed.kind, failed.reason, failed.trigger], ['failed', 'no section', 'Sonarr']);
});

test('a URL is shown as scheme and host; its path, query and token are taken out of any text', () => {
  const dest = { URL: 'https://discord.com/api/webhooks/123/s3cretT0ken?wait=true', TOKEN: 'tk_abcdef' };
  assert.equal(maskUrl(dest.URL), 'https://discord.com/…');
  const text = scrub(`POST ${dest.URL} failed; /api/webhooks/123/s3cretT0ken said no to tk_abcdef`, dest);
  assert.ok(!/s3cretT0ken|tk_abcdef/.test(text), text);
});

test('a full disk reads as its reason while waiting, and as its folder when it has room again', async () => {
  const dest = notificationSchema.parse({ TYPE: 'discord', URL: discord.webhookUrl });
  const reason = 'the disk of the media (SERVER_ANCHOR_FILES) (/mnt/unionfs) is full: 52 MB free, below SERVER_DISK_MIN_FREE (100 MB); scans for every target wait until 200 MB is free';
  const events: StoredEvent[] = [
    { id: 1, kind: 'waiting', at: 1000, reason, path: '/mnt/unionfs', freeBytes: 52e6, requestedAt: 1000 },
    { id: 2, kind: 'recovered', at: 181_000, path: '/mnt/unionfs', requestedAt: 1000, tookMs: 180_000 },
  ];
  const [message] = discordMessages(dest, events);
  const embeds = JSON.parse(message!.body).embeds as Array<{ title: string; description: string }>;
  assert.deepEqual(embeds.map((e) => [e.title, e.description]), [['Waiting', escapeMarkdown(reason)], ['Recovered', 'room on /mnt/unionfs back after 3 min']]);
  assert.equal((await postMessage(dest, message!)).kind, 'sent');
});

test('issue 47 item 10: Discord shows titles, paths and reasons as text: no link, no heading, no list, no bare URL link', async () => {
  const dest = notificationSchema.parse({ TYPE: 'discord', URL: discord.webhookUrl });
  const events: StoredEvent[] = [
    { id: 1, kind: 'failed', at: 1000, target: 'plex', title: '[Plex token expired](https://evil.example)', folder: '/data/TV/# Heading', reason: 'see https://evil.example/login' },
    { id: 2, kind: 'failed', at: 1000, target: 'plex', folder: '/data/TV/x', reason: 'line one\n# big heading\n- a list\n1. numbered\n> quote *bold* __under__ `code` ||spoiler||' },
  ];
  const [message] = discordMessages(dest, events);
  const description = (JSON.parse(message!.body).embeds as Array<{ description: string }>)[0]!.description;
  // What Discord's markdown would act on, unescaped: a masked link, a bare URL, a heading, a list, a quote, emphasis.
  const unescaped = (re: RegExp) => new RegExp(`(?<!\\\\)${re.source}`, 'm').test(description);
  assert.ok(!unescaped(/\]\(/) && !unescaped(/\[/), description);
  assert.ok(!unescaped(/https?:\/\//), description);
  assert.ok(!/^\s*(#|[-+] |\d+\. |>)/m.test(description), description);
  assert.ok(!unescaped(/\*/) && !unescaped(/_/) && !unescaped(/`/) && !unescaped(/\|/), description);
  // The words are all still there, in order, once the escapes are dropped as Discord drops them.
  assert.match(description.replace(/\\(.)/g, '$1'), /\[Plex token expired\]\(https:\/\/evil\.example\) — \/data\/TV\/# Heading/);
  assert.equal((await postMessage(dest, message!)).kind, 'sent');
});

test('issue 47 item 10 with one line per scan: a long title of markdown characters is cut, then escaped; the line keeps its limit and its targets, and no escape is split', () => {
  const dest = notificationSchema.parse({ TYPE: 'discord', URL: discord.webhookUrl });
  // 600 characters that each need an escape: escaped before the cut, the line would be twice LINE_MAX and the cut
  // would take the targets off its end, or leave a backslash before the ellipsis.
  const title = '_*'.repeat(300);
  const events: StoredEvent[] = [
    { id: 1, kind: 'scanned', at: 1000, target: 'plex', scan: 5, title, folder: '/data/TV/[x](https://evil.example)' },
    { id: 2, kind: 'scanned', at: 1000, target: 'jellyfin', scan: 5, title, folder: '/data/TV/[x](https://evil.example)' },
  ];
  const [message] = discordMessages(dest, events);
  const description = (JSON.parse(message!.body).embeds as Array<{ description: string }>)[0]!.description;
  assert.ok([...description].length <= LINE_MAX, `${[...description].length} code points`);
  assert.match(description, /done: plex, jellyfin$/);
  // Every backslash escapes the character after it: none is left before the ellipsis or at the end.
  assert.ok(!/\\…/.test(description) && !/(^|[^\\])(\\\\)*\\$/.test(description), description);
  const unescaped = (re: RegExp) => new RegExp(`(?<!\\\\)${re.source}`).test(description);
  assert.ok(!unescaped(/\*/) && !unescaped(/_/) && !unescaped(/\[/), description);
});
