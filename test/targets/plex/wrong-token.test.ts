import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PlexApi } from '../../../src/targets/plex/api.ts';
import { TargetError } from '../../../src/targets/http.ts';
import { FakePlex } from '../../fakes/plex.ts';

// Plex answers a token it does not accept with 401 and an HTML page (the fake answers as Plex does:
// `<html><head><title>Unauthorized</title>...`). The error says what that means, not what the page says.
test('a wrong token: "Plex refused the token (401)... check PLEX_TOKEN", without Plex\'s HTML page', async () => {
  const plex = await new FakePlex({ sections: [{ id: '1', title: 'Movies', type: 'movie', locations: ['/data/Movies'] }] }).start();
  try {
    const api = new PlexApi(plex.url, 'not-the-token');
    const err = await api.sections().then(
      () => assert.fail('a wrong token must be refused'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof TargetError && err.kind === 'auth', String(err));
    assert.match(err.message, /^Plex refused the token \(401\): check PLEX_TOKEN; it is wrong, or it was signed out; copy the X-Plex-Token .* \(asked for: Plex section list\)$/);
    assert.doesNotMatch(err.message, /<html|Unauthorized<|<title>/i);
    assert.equal(plex.calls.at(-1)!.status, 401, 'the fake refused it as Plex does');
  } finally {
    await plex.stop();
  }
});
