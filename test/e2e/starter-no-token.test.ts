import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { PLEX_SCANNER_DEFAULT } from '../../src/config/schema.ts';
import { scannerFile } from '../../src/targets/plex/setup-check.ts';
import { postForm, spawnRelay } from '../helpers/relay.ts';

/*
 * The starter file has no PLEX_TOKEN, so PLEX_SCAN_METHOD "auto" picks the scanner, which plex_autoscan always
 * used: it found the section in Plex's database (utils.py:23-41, get_plex_section; an unreadable database logged an
 * exception and dropped the request, scan.py:116-118) and ran PLEX_SCANNER (plex.py:111-176). On a machine with
 * neither, the key to set is PLEX_TOKEN, and the message says how to get one, not "cannot open the Plex database
 * ... PLEX_DATABASE_PATH".
 */
test('starter config, no token, no Plex on this machine: a queued scan waits with a message naming PLEX_TOKEN and how to get one', { skip: existsSync(scannerFile(PLEX_SCANNER_DEFAULT)) && 'a Plex Media Scanner is installed here' }, async () => {
  // No config file: the relay writes its starter file, as `npm start` does on first start.
  const relay = await spawnRelay({ env: { SERVER_PORT: '0', SERVER_IP: '"127.0.0.1"', SERVER_SCAN_DELAY: '0' } });
  try {
    const start = await relay.waitForLog((e) => e.key === 'PLEX_TOKEN' && /^next step/.test(e.msg));
    assert.match(start.msg, /PLEX_TOKEN is empty and this machine has no Plex Media Scanner/);
    const answer = await postForm(relay.url, { eventType: 'Manual', filepath: '/mnt/unionfs/Media/Movies/Heat (1995)/Heat.mkv' }, { accept: 'application/json' });
    assert.equal(answer.status, 200, answer.body);
    const line = await relay.waitForLog((e) => e.msg === 'scan not delivered yet; will retry');
    assert.match(line.error, /^PLEX_TOKEN is empty/);
    assert.match(line.error, /X-Plex-Token/, 'says how to get a token');
    assert.match(line.error, /PLEX_SCANNER/);
    assert.doesNotMatch(line.error, /PLEX_DATABASE_PATH|cannot open the Plex database/);
    assert.equal(line.retryInMs, 5 * 60_000, 'a setting to change: retried slowly');
    // The dashboard leads with the same cause (issue 42 item 9), not with the scanner check's sudo failure.
    const page = await fetch(`${relay.url}`).then((r) => r.text());
    const strip = /<ul class="strip">(.*?)<\/ul>/s.exec(page)![1]!;
    assert.match(strip, /^<li class="bad" data-setup-key="PLEX_TOKEN">/, strip);
    const count = await fetch(`${relay.base}/api/${relay.secret}?cmd=queue_count`).then((r) => r.json());
    assert.deepEqual(count, { queue_count: 1 }, 'the scan stays queued');
  } finally {
    await relay.kill();
  }
});
