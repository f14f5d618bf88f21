// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/load.ts';

// Issue 49 item 9 (bench/README.md "Memory"): zod compiles an object schema's fast path with `new Function` the
// first time it parses one, and keeps it. A config is parsed once, so that code (the config's: ~100 KB of source,
// and its generator kept TurboFan busy at an idle relay) was never used again. Its own process: no parse before.
test('reading a config compiles no zod fast path, and a second config reads the same', () => {
  const compiled: string[] = [];
  const original = globalThis.Function;
  globalThis.Function = new Proxy(original, {
    construct(target, args, newTarget) {
      compiled.push(String(args.at(-1)).slice(0, 120));
      return Reflect.construct(target, args, newTarget) as object;
    },
  });
  try {
    const config = { SERVER_PASS: 'a-long-enough-secret-1234', PLEX_TOKEN: 'token', PLEX_EMPTY_TRASH: 1, TARGETS: { kids: { TYPE: 'jellyfin', URL: 'http://127.0.0.1:9', API_KEY: 'k' } }, GOOGLE: { ENABLED: false } };
    const first = parseConfig(config);
    assert.equal(first.file.PLEX_EMPTY_TRASH, true, 'the loose value is repaired as before');
    assert.deepEqual(parseConfig(config).file, first.file);
    assert.equal(first.config.targets.get('plex')?.TYPE, 'plex');
  } finally {
    globalThis.Function = original;
  }
  assert.deepEqual(compiled, [], 'zod compiled a fast path while reading the config');
});
