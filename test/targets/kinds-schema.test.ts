// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { audiobookshelfTargetSchema } from '../../src/targets/audiobookshelf/schema.ts';
import { commandTargetSchema } from '../../src/targets/command/schema.ts';
import { fileflowsTargetSchema } from '../../src/targets/fileflows/schema.ts';
import { radarrTargetSchema } from '../../src/targets/radarr/schema.ts';
import { relayTargetSchema } from '../../src/targets/relay/schema.ts';
import { sonarrTargetSchema } from '../../src/targets/sonarr/schema.ts';
import { tdarrTargetSchema } from '../../src/targets/tdarr/schema.ts';

const problems = (r: { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } }) =>
  r.success ? [] : r.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);

test('every new kind takes a worked entry with the shared defaults (REWRITE, INCLUDE, EXCLUDE, REQUEST)', () => {
  const abs = audiobookshelfTargetSchema.parse({ TYPE: 'audiobookshelf', URL: 'http://abs:13378', TOKEN: 't' });
  assert.deepEqual([abs.REWRITE, abs.INCLUDE, abs.EXCLUDE, abs.REQUEST], [[], [], [], { TIMEOUT: 30, VERIFY_SSL: true, HEADERS: {} }]);
  assert.equal(tdarrTargetSchema.parse({ TYPE: 'tdarr', URL: 'http://tdarr:8265', DB_ID: 'lib1' }).API_KEY, undefined);
  assert.ok(fileflowsTargetSchema.parse({ TYPE: 'fileflows', URL: 'https://ff.example' }));
  assert.ok(sonarrTargetSchema.parse({ TYPE: 'sonarr', URL: 'http://sonarr:8989/sonarr', API_KEY: 'k' }));
  assert.ok(radarrTargetSchema.parse({ TYPE: 'radarr', URL: 'http://radarr:7878', API_KEY: 'k' }));
  assert.equal(commandTargetSchema.parse({ TYPE: 'command', COMMAND: ['/bin/true'] }).TIMEOUT, 120);
  const relay = relayTargetSchema.parse({ TYPE: 'relay', URL: 'http://other:3468', SECRET: 's' });
  assert.deepEqual([relay.PEER, relay.TRIGGER], ['scanrelay', 'manual']);
});

test('bad entries are refused with the key and a clear reason', () => {
  const table: Array<[schema: { safeParse(v: unknown): never }, entry: unknown, expected: RegExp]> = [
    [sonarrTargetSchema as never, { TYPE: 'sonarr', URL: 'sonarr:8989', API_KEY: 'k' }, /^URL: must be an http:\/\/ or https:\/\/ URL/],
    [radarrTargetSchema as never, { TYPE: 'radarr', URL: 'ftp://radarr', API_KEY: 'k' }, /^URL: must be an http/],
    [audiobookshelfTargetSchema as never, { TYPE: 'audiobookshelf', URL: 'http://abs', TOKEN: ' ' }, /^TOKEN: must not be empty/],
    [tdarrTargetSchema as never, { TYPE: 'tdarr', URL: 'http://tdarr' }, /^DB_ID: /],
    [commandTargetSchema as never, { TYPE: 'command', COMMAND: 'echo $FILE_PATH >> list.log' }, /^COMMAND: /],
    [commandTargetSchema as never, { TYPE: 'command', COMMAND: [] }, /^COMMAND: must name the program/],
    [relayTargetSchema as never, { TYPE: 'relay', URL: 'http://other' }, /^SECRET: a scanrelay peer needs SECRET/],
    [relayTargetSchema as never, { TYPE: 'relay', URL: 'http://ap', PEER: 'autopulse', USERNAME: 'admin' }, /^PASSWORD: USERNAME and PASSWORD go together/],
    [relayTargetSchema as never, { TYPE: 'relay', URL: 'http://ap', PEER: 'autopulse', TRIGGER: 'a/b' }, /^TRIGGER: must be one URL path segment/],
    [sonarrTargetSchema as never, { TYPE: 'sonarr', URL: 'http://s', API_KEY: 'k', INCLUDE: ['(unclosed'] }, /^INCLUDE\.0: /],
  ];
  for (const [schema, entry, expected] of table) {
    const found = problems(schema.safeParse(entry) as never);
    assert.ok(found.some((p) => expected.test(p)), `${JSON.stringify(entry)}: ${found.join('; ')}`);
  }
});

test('a kind is one folder: the registry gives each TYPE of the list of kinds its module, with the very schema the config reads', async () => {
  const { TARGET_KINDS } = await import('../../src/targets/registry.ts');
  const { targetSchema, TARGET_TYPES } = await import('../../src/config/targets.ts');
  assert.deepEqual(Object.keys(TARGET_KINDS).sort(), [...TARGET_TYPES].sort());
  for (const option of targetSchema.options) {
    const kind = await TARGET_KINDS[option.shape.TYPE.value]();
    assert.equal(kind.type, option.shape.TYPE.value);
    assert.equal(kind.schema, option, `${kind.type}: the kind's schema is the union's`);
    assert.equal(typeof kind.create, 'function');
  }
  // The message for an unknown TYPE still names every kind, in the list's order.
  assert.deepEqual(TARGET_TYPES, ['plex', 'jellyfin', 'emby', 'audiobookshelf', 'tdarr', 'fileflows', 'sonarr', 'radarr', 'command', 'relay']);
});
