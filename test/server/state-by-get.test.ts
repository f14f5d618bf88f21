// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseConfig } from '../../src/config/load.ts';
import { buildTestApp, SECRET } from '../helpers/app.ts';

describe('state changes by GET (issue 35, item 12)', () => {
  test('GET ?cmd=reset_page_token from another site (an <img>) is refused 403 and resets nothing; from a script, the typed URL or the same site it works', async () => {
    let resets = 0;
    const t = await buildTestApp({}, { drive: { enabled: () => true, resetPageToken: async () => void resets++ } });
    try {
      const get = (headers: Record<string, string>) => t.app.inject({ method: 'GET', url: `/api/${SECRET}?cmd=reset_page_token`, headers: { host: 'relay.lan:3468', ...headers } });
      // What a browser sends for <img src="http://relay.lan:3468/api/<secret>?cmd=reset_page_token"> on another site.
      const crossSite: Array<Record<string, string>> = [{ 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'image' }, { 'sec-fetch-site': 'same-site' }, { origin: 'https://evil.example' }];
      for (const headers of crossSite) {
        const res = await get(headers);
        assert.equal(res.statusCode, 403, JSON.stringify(headers));
        assert.match(res.json().error, /cross-site request refused/);
      }
      assert.equal(resets, 0);
      // plex_autoscan's scripts (curl: no browser headers), a URL typed in the address bar, the relay's own page.
      const fine: Array<Record<string, string>> = [{}, { 'sec-fetch-site': 'none' }, { 'sec-fetch-site': 'same-origin' }, { origin: 'http://relay.lan:3468' }];
      for (const headers of fine) {
        const res = await get(headers);
        assert.equal(res.statusCode, 200, JSON.stringify(headers));
      }
      assert.equal(resets, 4);
      // A read-only command is not a state change: queue_count answers an <img> as before.
      const count = await t.app.inject({ method: 'GET', url: `/api/${SECRET}?cmd=queue_count`, headers: { 'sec-fetch-site': 'cross-site' } });
      assert.equal(count.statusCode, 200);
    } finally {
      await t.close();
    }
  });

  test('a SERVER_PASS that a route of the relay would take is a config error; a short one gets a warning', () => {
    for (const pass of ['metrics', 'healthz', 'health', 'api', 'triggers', 'list', 'stats', 'status', 'status/1', 'api/x', 'triggers/sonarr']) {
      assert.throws(() => parseConfig({ SERVER_PASS: pass }), new RegExp(`SERVER_PASS: "${pass}" would be taken by the relay's own route /${pass.split('/')[0]}`), pass);
    }
    assert.ok(parseConfig({ SERVER_PASS: 'metrics-not' }).config.SERVER_PASS);
    const short = parseConfig({ SERVER_PASS: 'abc123' }).warnings;
    assert.equal(short.filter((w) => /^SERVER_PASS is 6 characters long: anyone who can reach the relay can guess/.test(w)).length, 1, JSON.stringify(short));
    assert.ok(!parseConfig({ SERVER_PASS: '0123456789abcdef' }).warnings.some((w) => /characters long/.test(w)));
  });
});
