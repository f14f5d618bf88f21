import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pino } from 'pino';
import { importAutopulse } from '../../src/peers/autopulse/import.ts';
import { notificationSchema, type NotificationConfig } from '../../src/config/notifications.ts';
import type { StoredEvent } from '../../src/core/events.ts';
import type { DeliveryResult, Target } from '../../src/core/scan.ts';
import { postMessage } from '../../src/notify/http.ts';
import { wants, type OutMessage } from '../../src/notify/message.ts';
import { discordMessages } from '../../src/notify/services/discord.ts';
import { FORMATS } from '../../src/notify/services/index.ts';
import { Scheduler } from '../../src/queue/scheduler.ts';
import { bothStores } from '../helpers/both-stores.ts';
import { waitFor } from '../helpers/relay.ts';
import { DiscordFake } from '../fakes/discord.ts';
import { AppriseFake, GotifyFake, HookshotFake, NtfyFake, fakesStoppedAfter, type NotifyFake } from '../fakes/notify-services.ts';

/*
 * People's messages (Discord, hookshot, ntfy, Apprise, Gotify) tell a batch one line per scan, naming the targets
 * that took it and those that failed it, never one line per target; they end on whole lines within each service's
 * limits. Discord mentions follow each MENTIONS entry's own ON (autopulse: crates/service/src/settings/webhooks/
 * discord.rs:228-287, the `on` test at 239-241), and the sender's name and picture stay autopulse's after
 * import-autopulse (discord.rs:159-167: username "autopulse", avatar_url autopulse's logo unless set).
 */

const fake = fakesStoppedAfter();

const TEN = ['plex', 'plex-4k', 'jellyfin', 'emby', 'audiobookshelf', 'tdarr', 'fileflows', 'command', 'forward', 'kodi'];

/** Every service's destination at the fakes, each taking every kind. */
async function destinations(): Promise<Record<string, { dest: NotificationConfig; fake: NotifyFake }>> {
  const d = await fake(new DiscordFake());
  const h = await fake(new HookshotFake());
  const a = await fake(new AppriseFake());
  const n = await fake(new NtfyFake('scans', 'tk_abc123'));
  const g = await fake(new GotifyFake('AppTokenXYZ'));
  const p = (x: Record<string, unknown>) => notificationSchema.parse({ EVENTS: ['scanned', 'removed', 'failed', 'retrying', 'waiting', 'recovered'], ...x });
  return {
    discord: { dest: p({ TYPE: 'discord', URL: d.webhookUrl }), fake: d },
    hookshot: { dest: p({ TYPE: 'hookshot', URL: `${h.url}/webhook/${h.hookId}` }), fake: h },
    apprise: { dest: p({ TYPE: 'apprise', URL: `${a.url}/notify/${a.key}` }), fake: a },
    ntfy: { dest: p({ TYPE: 'ntfy', URL: `${n.url}/scans`, TOKEN: 'tk_abc123' }), fake: n },
    gotify: { dest: p({ TYPE: 'gotify', URL: g.url, TOKEN: 'AppTokenXYZ' }), fake: g },
  };
}

/** The text people read in a message, whatever the service. */
function readable(type: string, m: OutMessage): string {
  if (type === 'ntfy') return m.body;
  const j = JSON.parse(m.body);
  if (type === 'discord') return (j.embeds as Array<{ title: string; description: string }>).map((e) => `${e.title}\n${e.description}`).join('\n');
  if (type === 'hookshot') return j.text;
  if (type === 'apprise') return j.body;
  return j.message;
}

const count = (text: string, what: string) => text.split(what).length - 1;

describe("people's messages group by scan, not by target", () => {
  test('ten targets took three folders, one failed on two: each folder is one line naming its targets', () => {
    const folders = ['/movies/Dune (2021)', '/movies/Heat (1995)', '/tv/Show/Season 01'];
    let id = 0;
    const events: StoredEvent[] = folders.flatMap((folder, scan) =>
      TEN.map((target): StoredEvent => {
        const failed = scan === 2 && (target === 'emby' || target === 'kodi');
        return { id: ++id, kind: failed ? 'failed' : 'scanned', at: 1000, scan: scan + 1, target, folder, trigger: 'Radarr', tookMs: 2000, ...(failed ? { reason: 'connection refused' } : {}) };
      }),
    );
    for (const type of ['discord', 'hookshot', 'apprise', 'ntfy', 'gotify'] as const) {
      const dest = notificationSchema.parse({ TYPE: type, URL: 'http://127.0.0.1:9/x', ...(type === 'gotify' ? { TOKEN: 't' } : {}) });
      const text = FORMATS[type](dest, events).map((m) => readable(type, m)).join('\n');
      for (const f of folders) assert.equal(count(text, f), 1, `${type}: ${f} once\n${text}`);
      const showLine = text.split('\n').find((l) => l.includes('/tv/Show/Season 01'))!;
      assert.match(showLine, /done: plex, plex-4k, jellyfin, audiobookshelf, tdarr, fileflows, command, forward/, type);
      assert.match(showLine, /failed: emby, kodi \(connection refused\)/, type);
      assert.match(text, /^Failed:?$/m, `${type}: the scan that failed somewhere is under Failed`);
    }
  });

  test('a message ends on whole lines within each service\'s limits, long names and emoji included', async () => {
    const all = await destinations();
    const long = `🎬 ${'Ä very long_folder *name* '.repeat(40)}`;
    let id = 0;
    const events: StoredEvent[] = Array.from({ length: 300 }, (_, scan) =>
      TEN.map((target): StoredEvent => ({ id: ++id, kind: 'scanned', at: 1000, scan, target, folder: `/movies/${long} ${scan}`, trigger: 'Radarr', tookMs: 1000 })),
    ).flat();
    for (const [type, { dest, fake: f }] of Object.entries(all)) {
      const messages = FORMATS[dest.TYPE](dest, events);
      for (const m of messages) assert.equal((await postMessage(dest, m)).kind, 'sent', `${type} took it`);
      assert.ok(f.calls.every((c) => c.status < 300), type);
      for (const m of messages) {
        assert.ok(!/\\ud[89a-f][0-9a-f]{2}/i.test(m.body), `${type}: no half of a character (JSON escapes only a lone surrogate)`);
        const lines = readable(type, m).split('\n');
        for (const line of lines) {
          if (!line.includes('/movies/')) continue;
          // Every scan's line still ends with the targets that took it: the folder gave way, not the line's end.
          assert.match(line, /done: plex, plex-4k, jellyfin, emby, audiobookshelf, tdarr, fileflows, command, forward, kodi$/, `${type}: ${line}`);
        }
        assert.match(lines.at(-1)!, /(… and \d+ more|kodi)$/, `${type} ends on a whole line`);
      }
      if (type === 'ntfy') assert.ok(messages.every((m) => Buffer.byteLength(m.body) <= 4096));
      if (type === 'hookshot') assert.ok(messages.every((m) => Buffer.byteLength(m.body) < 65_536));
    }
  });
});

const { stores } = bothStores();
for (const [name, open] of stores) {
  describe(`a scan's targets told together, from the outbox on ${name}`, () => {
    test('three targets, one failing: one line for the folder in every service, with who took it and who failed', async () => {
      const s = await open();
      const answer = (r: DeliveryResult): Target => ({ name: '', deliver: async () => r, available: async () => ({ ok: true }) });
      const targets: Target[] = [
        { ...answer({ outcome: 'done', detail: 'sent' }), name: 'plex' },
        { ...answer({ outcome: 'done', detail: 'refreshed' }), name: 'jellyfin' },
        { ...answer({ outcome: 'failed', error: 'no library holds this folder' }), name: 'emby' },
      ];
      const scheduler = new Scheduler(s, targets, pino({ level: 'silent' }), { retryBaseMs: 10 });
      await scheduler.start();
      try {
        const [r] = await s.enqueueMany([{ folder: '/movies/Heat (1995)', files: ['/movies/Heat (1995)/Heat.mkv'], source: 'Radarr', event: 'Download', updateType: 'Modified', priority: 0 }], { delayMs: 0, maxMs: 0 });
        scheduler.poke();
        await waitFor(async () => (await s.view.get(r!.id))?.status === 'failed', 20_000, 'the scan settled');
      } finally {
        await scheduler.stop();
      }
      const events = await s.outbox.after(0, 100);
      assert.equal(events.length, 3, 'an event per target in the outbox');
      for (const [type, { dest, fake: f }] of Object.entries(await destinations())) {
        const messages = FORMATS[dest.TYPE](dest, events.filter((e) => wants(dest, e)));
        for (const m of messages) assert.equal((await postMessage(dest, m)).kind, 'sent', type);
        assert.ok(f.calls.length >= 1);
        const text = messages.map((m) => readable(type, m)).join('\n');
        assert.equal(count(text, '/movies/Heat (1995)'), 1, `${type}\n${text}`);
        assert.match(text, /Heat \(1995\) \(1 file\) · Radarr · .* · done: (plex, jellyfin|jellyfin, plex) · failed: emby \(no library holds this folder\)/, type);
      }
    });
  });
}

describe('Discord: mentions per entry, the sender\'s name and picture', () => {
  const scanned: StoredEvent = { id: 1, kind: 'scanned', at: 1000, scan: 1, target: 'plex', folder: '/movies/A' };
  const failed: StoredEvent = { id: 2, kind: 'failed', at: 1000, scan: 2, target: 'plex', folder: '/movies/B', reason: 'no section' };
  const body = (dest: NotificationConfig, events: StoredEvent[]) => JSON.parse(discordMessages(dest, events)[0]!.body);

  test('an imported autopulse webhook: @here on failed only, a user on every event; autopulse\'s name and avatar', () => {
    const yaml = `
webhooks:
  chat:
    type: discord
    url: "https://discord.com/api/webhooks/1/abc"
    mentions:
      - targets: [here]
        on: [failed]
      - targets: [{ user: "9876543210" }]
  styled:
    type: discord
    url: "https://discord.com/api/webhooks/2/def"
    username: "Scans"
    avatar_url: "https://example.com/me.png"
`;
    const { config } = importAutopulse(yaml, 'config.yaml', {});
    const n = config.NOTIFICATIONS as Record<string, unknown>;
    const chat = notificationSchema.parse(n.chat);
    const ok = body(chat, [scanned]);
    assert.equal(ok.content, '<@9876543210>', 'a successful scan pings the user, not @here');
    assert.deepEqual(ok.allowed_mentions, { parse: [], users: ['9876543210'], roles: [] });
    const bad = body(chat, [scanned, failed]);
    assert.equal(bad.content, '<@9876543210> @here');
    assert.deepEqual(bad.allowed_mentions.parse, ['everyone']);
    // discord.rs:159-167: "autopulse" and its logo when not set; what the user set otherwise.
    assert.equal(ok.username, 'autopulse');
    assert.equal(ok.avatar_url, 'https://raw.githubusercontent.com/dan-online/autopulse/main/assets/logo.webp');
    const styled = body(notificationSchema.parse(n.styled), [scanned]);
    assert.deepEqual([styled.username, styled.avatar_url], ['Scans', 'https://example.com/me.png']);
    assert.deepEqual(styled.allowed_mentions, { parse: [] });
  });

  test('MENTIONS as a list: each entry on its own ON; one entry as before; scanrelay\'s own default name', () => {
    const dest = notificationSchema.parse({
      TYPE: 'discord',
      URL: 'https://discord.com/api/webhooks/1/abc',
      MENTIONS: [
        { HERE: true, ON: ['failed'] },
        { ROLES: ['42'], ON: ['scanned'] },
      ],
    });
    assert.equal(body(dest, [scanned]).content, '<@&42>');
    assert.equal(body(dest, [failed]).content, '@here');
    const one = notificationSchema.parse({ TYPE: 'discord', URL: 'https://discord.com/api/webhooks/1/abc', MENTIONS: { USERS: ['7'] } });
    assert.equal(body(one, [scanned]).content, undefined, 'ON defaults to failed');
    assert.equal(body(one, [failed]).content, '<@7>');
    assert.equal(body(one, [scanned]).username, 'scanrelay');
    assert.equal(body(one, [scanned]).avatar_url, undefined);
  });

  test('a hundred users and a hundred roles: the content holds whole mentions only, and Discord takes it', async () => {
    const d = await fake(new DiscordFake());
    // Snowflakes of 20 digits (a 64-bit id): 83 and a third mentions in 2,000 characters.
    const ids = (first: string) => Array.from({ length: 100 }, (_, i) => `${first}${String(i).padStart(19, '0')}`);
    const dest = notificationSchema.parse({ TYPE: 'discord', URL: d.webhookUrl, MENTIONS: { USERS: ids('1'), ROLES: ids('2') } });
    const [m] = discordMessages(dest, [failed]);
    const content = JSON.parse(m!.body).content as string;
    assert.ok(content.length <= 2000);
    assert.match(content, /^(<@&?\d+>)( <@&?\d+>)*$/, 'no mention cut in half');
    assert.equal((await postMessage(dest, m!)).kind, 'sent');
  });
});
