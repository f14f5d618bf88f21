import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DiscordFake } from '../fakes/discord.ts';
import { GotifyFake } from '../fakes/notify-services.ts';
import { runCli, tempDir } from '../helpers/relay.ts';

describe('scanrelay notify-test', () => {
  const discord = new DiscordFake();
  const gotify = new GotifyFake('right-token-abc');
  let configPath: string;
  before(async () => {
    await discord.start();
    await gotify.start();
    configPath = join(tempDir(), 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        SERVER_PASS: 'abcdefghijklmnopqrstuvwxyz012345',
        NOTIFICATIONS: {
          chat: { TYPE: 'discord', URL: discord.webhookUrl },
          phone: { TYPE: 'gotify', URL: gotify.url, TOKEN: 'wrong-token-xyz' },
        },
      }),
    );
  });
  after(async () => {
    await discord.stop();
    await gotify.stop();
  });

  test("each destination gets one message and its service's answer is printed, secrets masked; a refusal exits 1", async () => {
    const res = await runCli(['--config', configPath, 'notify-test']);
    assert.equal(res.code, 1);
    assert.match(res.stdout, /chat \(discord, http:\/\/127\.0\.0\.1:\d+\/…\): sent: 204/);
    assert.match(res.stderr, /phone \(gotify, .*\): refused: 401 .*valid access token/);
    assert.equal(discord.calls.length, 1);
    assert.match(discord.calls[0]!.json.embeds[0].description, /scanrelay test message/);
    for (const secret of [discord.token, 'wrong-token-xyz']) assert.ok(!`${res.stdout}${res.stderr}`.includes(secret), `${secret} is masked`);
  });

  test('one destination by name; an unknown name is a clear error', async () => {
    const one = await runCli(['--config', configPath, 'notify-test', 'chat']);
    assert.equal(one.code, 0);
    assert.doesNotMatch(one.stdout + one.stderr, /phone/);
    const unknown = await runCli(['--config', configPath, 'notify-test', 'pager']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no notification named "pager": the config has chat, phone/);
  });
});
