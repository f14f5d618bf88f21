// Draws docs/img/discord-message.png: a batch as the relay formats it, taken by the Discord fake (so it keeps to
// Discord's limits), rendered the way Discord lays out a webhook message, and photographed with chromium.
//   node --import tsx test/helpers/discord-figure.ts docs/img/discord-message.png
import { notificationSchema } from '../../src/config/notifications.ts';
import type { StoredEvent } from '../../src/core/events.ts';
import { discordMessages } from '../../src/notify/services/discord.ts';
import { postMessage } from '../../src/notify/http.ts';
import { DiscordFake } from '../fakes/discord.ts';
import { launchChromium } from './browser.ts';

const out = process.argv[2] ?? 'docs/img/discord-message.png';
const now = Date.parse('2026-11-26T10:15:03Z');
const ev = (id: number, e: Omit<StoredEvent, 'id' | 'at'>): StoredEvent => ({ id, at: now + id * 1000, ...e });
const events: StoredEvent[] = [
  ev(1, { kind: 'scanned', scan: 1, target: 'plex', folder: '/data/Movies/Dune (2021)', title: 'Dune', files: ['Dune.mkv'], trigger: 'Radarr', tookMs: 3200, items: [{ type: 'movie', title: 'Dune', year: 2021 }] }),
  ev(2, {
    kind: 'scanned', scan: 2, target: 'plex', folder: '/data/TV/Severance/Season 02', title: 'Severance', files: ['S02E01.mkv', 'S02E02.mkv'], trigger: 'Sonarr', tookMs: 4100,
    items: [{ type: 'episode', title: 'Hello, Ms. Cobel', show: 'Severance', season: 2, episode: 1 }, { type: 'episode', title: 'Goodbye, Mrs. Selvig', show: 'Severance', season: 2, episode: 2 }],
  }),
  ev(3, { kind: 'scanned', scan: 1, target: 'jellyfin', folder: '/data/Movies/Dune (2021)', title: 'Dune', files: ['Dune.mkv'], trigger: 'Radarr', tookMs: 900 }),
  ev(4, { kind: 'failed', scan: 3, target: 'plex', folder: '/data/Music/Band/Album', files: ['01.flac'], trigger: 'Lidarr', reason: 'not scanned: 01.flac did not appear after 10 file check(s)' }),
];

const fake = await new DiscordFake().start();
const dest = notificationSchema.parse({ TYPE: 'discord', URL: fake.webhookUrl, MENTIONS: { ROLES: ['1'] } });
for (const m of discordMessages(dest, events)) {
  const r = await postMessage(dest, m);
  if (r.kind !== 'sent') throw new Error(`the Discord fake refused the message: ${r.answer}`);
}
const body = fake.calls[0]!.json;
await fake.stop();

// Discord drops a markdown escape's backslash when it shows the text (notify/services/discord.ts escapes).
const esc = (s: string) => s.replace(/\\(.)/g, '$1').replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
const hex = (n: number) => `#${n.toString(16).padStart(6, '0')}`;
const embeds = (body.embeds as Array<{ title: string; description: string; color: number; timestamp: string }>)
  .map((e) => `<div class="embed" style="border-color:${hex(e.color)}"><div class="title">${esc(e.title)}</div><div class="desc">${esc(e.description).replace(/\n/g, '<br>')}</div><div class="foot">${new Date(e.timestamp).toUTCString()}</div></div>`)
  .join('');
const html = `<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body{margin:0;background:#313338;font:15px/1.4 "DejaVu Sans",sans-serif;color:#dbdee1;padding:16px 20px;width:760px}
.head{display:flex;align-items:center;gap:12px}.avatar{width:40px;height:40px;border-radius:50%;background:#5865f2;color:#fff;display:flex;align-items:center;justify-content:center;font-weight:bold}
.name{color:#f2f3f5;font-weight:600}.bot{background:#5865f2;color:#fff;font-size:10px;border-radius:3px;padding:1px 4px;margin-left:4px}
.mention{background:rgba(88,101,242,.3);color:#c9cdfb;border-radius:3px;padding:0 2px}
.body{margin-left:52px}.embed{background:#2b2d31;border-left:4px solid;border-radius:4px;padding:8px 16px 10px 12px;margin-top:6px;max-width:520px}
.title{color:#f2f3f5;font-weight:600;margin-bottom:4px}.desc{font-size:14px}.foot{font-size:12px;color:#949ba4;margin-top:6px}
</style></head><body><div class="head"><div class="avatar">s</div><div><span class="name">${esc(body.username)}</span><span class="bot">APP</span></div></div>
<div class="body">${body.content ? `<div><span class="mention">@storage-admins</span></div>` : ''}${embeds}</div></body></html>`;

const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 800, height: 200 }, deviceScaleFactor: 1 });
await page.setContent(html);
await page.screenshot({ path: out, fullPage: true });
await browser.close();
process.stdout.write(`wrote ${out}\n`);
