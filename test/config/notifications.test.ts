import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configSchema } from '../../src/config/schema.ts';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { notDiscordWebhooks, unknownNotificationTargets } from '../../src/config/notifications.ts';
import { runCli, tempDir } from '../helpers/relay.ts';

const parse = (NOTIFICATIONS: unknown) => configSchema.safeParse({ SERVER_PASS: 'x'.repeat(32), NOTIFICATIONS });
const issue = (r: ReturnType<typeof parse>) => (r.success ? '' : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));

test('NOTIFICATIONS: a destination gets every event, every target and trigger, 10 s batches by default', () => {
  const r = parse({ chat: { TYPE: 'discord', URL: 'https://discord.com/api/webhooks/1/abc' } });
  assert.ok(r.success, issue(r));
  assert.deepEqual(r.data.NOTIFICATIONS.chat, {
    TYPE: 'discord',
    URL: 'https://discord.com/api/webhooks/1/abc',
    TOKEN: '',
    EVENTS: ['scanned', 'failed', 'waiting', 'recovered', 'removed'],
    TARGETS: [],
    TRIGGERS: [],
    BATCH_SECONDS: 10,
    GIVE_UP_AFTER: 21600,
    USERNAME: 'scanrelay',
    FORMAT: 'scanrelay',
  });
  const none = configSchema.parse({ SERVER_PASS: 'x'.repeat(32) });
  assert.deepEqual(none.NOTIFICATIONS, {});
});

test('NOTIFICATIONS: clear errors for what a service cannot take', () => {
  assert.match(issue(parse({ g: { TYPE: 'gotify', URL: 'https://gotify.example.com' } })), /NOTIFICATIONS\.g\.TOKEN: gotify needs the application token/);
  assert.match(issue(parse({ n: { TYPE: 'ntfy', URL: 'ntfy.sh/topic' } })), /NOTIFICATIONS\.n\.URL: URL must be an http/);
  assert.match(issue(parse({ n: { TYPE: 'slack', URL: 'https://x.example' } })), /NOTIFICATIONS\.n\.TYPE/);
  assert.match(issue(parse({ n: { TYPE: 'ntfy', URL: 'https://ntfy.sh/t', MENTIONS: { HERE: true } } })), /MENTIONS is for discord/);
  assert.match(issue(parse({ n: { TYPE: 'json', URL: 'https://x.example', EVENTS: ['done'] } })), /NOTIFICATIONS\.n\.EVENTS\.0/);
  assert.match(issue(parse({ n: { TYPE: 'json', URL: 'https://x.example', BATCH: 5 } })), /BATCH/, 'a misspelt key is an error, not ignored');
  assert.match(issue(parse({ d: { TYPE: 'discord', URL: 'https://discord.com/api/webhooks/1/abc', USERNAME: 'Plex Discord bot' } })), /NOTIFICATIONS\.d\.USERNAME: Discord refuses a name with "discord" or "clyde" in it/);
  assert.equal(issue(parse({ h: { TYPE: 'hookshot', URL: 'https://hookshot.example.com/webhook/1', USERNAME: 'discord relay' } })), '', 'only Discord minds');
  const ids = Array.from({ length: 101 }, (_, i) => String(1000 + i));
  assert.match(issue(parse({ d: { TYPE: 'discord', URL: 'https://discord.com/api/webhooks/1/abc', MENTIONS: { USERS: ids } } })), /NOTIFICATIONS\.d\.MENTIONS\.0\.USERS: Discord mentions at most 100 users in one message/);
  assert.match(issue(parse({ d: { TYPE: 'discord', URL: 'https://discord.com/api/webhooks/1/abc', MENTIONS: { ROLES: ids } } })), /MENTIONS\.0\.ROLES: Discord mentions at most 100 roles/);
  assert.match(issue(parse({ 'my chat': { TYPE: 'json', URL: 'https://x.example' } })), /NOTIFICATIONS\.my chat: Invalid key/);
});

test('NOTIFICATIONS: a TARGETS name no target has is warned about (any case matches)', () => {
  const r = parse({ chat: { TYPE: 'json', URL: 'https://x.example', TARGETS: ['Plex', 'plx'] }, all: { TYPE: 'json', URL: 'https://y.example' } });
  assert.ok(r.success, issue(r));
  assert.deepEqual(unknownNotificationTargets(r.data.NOTIFICATIONS, ['plex', 'jellyfin']), [
    'NOTIFICATIONS.chat.TARGETS: no target of this relay is named "plx" (targets: plex, jellyfin); its events reach this destination only from a relay sharing the queue that has it',
  ]);
});

test('NOTIFICATIONS: GIVE_UP_AFTER 0 would drop every event: refused; the relay stops with exit 2 and one line', async () => {
  assert.match(issue(parse({ n: { TYPE: 'json', URL: 'https://x.example', GIVE_UP_AFTER: 0 } })), /NOTIFICATIONS\.n\.GIVE_UP_AFTER: must be above 0 seconds: 0 would drop every event/);
  assert.equal(issue(parse({ n: { TYPE: 'json', URL: 'https://x.example', GIVE_UP_AFTER: 1 } })), '');
  const dir = tempDir();
  try {
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ SERVER_PASS: 'x'.repeat(32), SERVER_PORT: 0, PLEX_ENABLED: false, NOTIFICATIONS: { chat: { TYPE: 'json', URL: 'http://127.0.0.1:9/hook', GIVE_UP_AFTER: 0 } } }),
    );
    const r = await runCli(['--config', join(dir, 'config.json'), '--queuefile', join(dir, 'queue.db'), 'server'], { cwd: dir, timeoutMs: 60_000 });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    const lines = (r.stdout + r.stderr).trim().split('\n');
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /NOTIFICATIONS\.chat\.GIVE_UP_AFTER: must be above 0 seconds/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('NOTIFICATIONS: a discord destination whose URL is not a Discord webhook URL is warned about, by host only', () => {
  const good = parse({
    a: { TYPE: 'discord', URL: 'https://discord.com/api/webhooks/123/tok-EN_1' },
    b: { TYPE: 'discord', URL: 'https://discordapp.com/api/webhooks/123/tok' },
    c: { TYPE: 'discord', URL: 'https://ptb.discord.com/api/v10/webhooks/123/tok?wait=true' },
    local: { TYPE: 'discord', URL: 'http://127.0.0.1:8099/api/webhooks/123/secret-token' },
    channel: { TYPE: 'discord', URL: 'https://discord.com/channels/123/456' },
    lookalike: { TYPE: 'discord', URL: 'https://discord.com.example.net/api/webhooks/123/tok' },
    json: { TYPE: 'json', URL: 'https://example.net/hook' },
  });
  assert.ok(good.success, issue(good));
  const warnings = notDiscordWebhooks(good.data.NOTIFICATIONS);
  assert.deepEqual(
    warnings.map((w) => w.slice(0, w.indexOf(' is not'))),
    ['NOTIFICATIONS.local.URL: http://127.0.0.1:8099/…', 'NOTIFICATIONS.channel.URL: https://discord.com/…', 'NOTIFICATIONS.lookalike.URL: https://discord.com.example.net/…'],
  );
  assert.ok(!warnings.some((w) => w.includes('secret-token') || w.includes('456')), 'the URL is a credential: host only');
});
