import assert from 'node:assert/strict';
import { test } from 'node:test';
import { relayConfig } from '../../src/config/named-targets.ts';
import { configSchema, type FileConfig } from '../../src/config/schema.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Target } from '../../src/core/scan.ts';
import { redactorFor, redactTargetErrors } from '../../src/targets/redact.ts';
import { createTarget } from '../../src/targets/registry.ts';

/*
 * The target model's own texts (Target.describe, setupProblems, sections) pass through the same redaction of the
 * target's secrets as its deliveries and checks (issue 47 item 6): the CLI, the start-up log and the dashboard's
 * map preview show them.
 */

const SECRET = 'tok-Secret-4242';

test("a target's description shows its URL without the password in it", async () => {
  const config = relayConfig(
    configSchema.parse({ SERVER_PASS: 'x', TARGETS: { peer: { TYPE: 'relay', PEER: 'autoscan', URL: `http://relayuser:${SECRET}@127.0.0.1:9/` } } }) as FileConfig,
  );
  const target = await createTarget('peer', config.targets.get('peer')!, silentLogger(), config);
  const described = target.describe!();
  assert.equal(described.type, 'relay');
  assert.ok(described.url, 'the URL is described');
  assert.ok(!described.url.includes(SECRET), described.url);
  assert.match(described.url, /127\.0\.0\.1:9/);
});

test("a set-up problem's message and a section look-up's error carry no secret", async () => {
  const echoed = `Plex answered 401 to GET /library/sections?X-Plex-Token=${SECRET}`;
  const target: Target = {
    name: 'plex',
    deliver: async () => ({ outcome: 'done' }),
    available: async () => ({ ok: true }),
    setupProblems: async () => [{ key: 'PLEX_TOKEN', message: echoed }],
    sections: {
      find: async () => {
        throw new Error(echoed);
      },
    },
  };
  const redacted = redactTargetErrors(target, redactorFor([SECRET]));
  const problems = await redacted.setupProblems!();
  assert.equal(problems.length, 1);
  assert.equal(problems[0]!.key, 'PLEX_TOKEN');
  assert.ok(!problems[0]!.message.includes(SECRET), problems[0]!.message);
  assert.match(problems[0]!.message, /answered 401/);
  await assert.rejects(redacted.sections!.find('/data/TV'), (err: Error) => !err.message.includes(SECRET) && /answered 401/.test(err.message));
});
