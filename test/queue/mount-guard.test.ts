import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pino from 'pino';
import { parseConfig } from '../../src/config/load.ts';
import { MountGuard } from '../../src/paths/anchors.ts';
import { startRelay } from '../../src/server/run.ts';
import { FakePlex } from '../fakes/plex.ts';
import { postForm, tempDir, waitFor } from '../helpers/relay.ts';

/** A debug logger that keeps every line, to wait on and count log events. */
function capturingLogger() {
  const lines: Array<Record<string, any>> = [];
  const waiters = new Set<() => void>();
  const log = pino({ level: 'debug', base: undefined }, {
    write(line: string) {
      lines.push(JSON.parse(line));
      for (const w of waiters) w();
    },
  });
  const waitForLog = (pred: (e: Record<string, any>) => boolean, from = 0, timeoutMs = 10_000) =>
    new Promise<Record<string, any>>((resolve, reject) => {
      const check = () => {
        const hit = lines.slice(from).find(pred);
        if (!hit) return false;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(hit);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error('log line did not come'));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  const count = (msg: string) => lines.filter((l) => l.msg === msg).length;
  return { log, lines, waitForLog, count };
}

describe('mount guard (SERVER_ANCHOR_FILES)', () => {
  test('holds while an anchor is missing, logs each disappearance and return once, releases when it is back', () => {
    const dir = tempDir();
    const a = join(dir, 'a.bin');
    const b = join(dir, 'b.bin');
    writeFileSync(a, '');
    const cap = capturingLogger();
    let released = 0;
    let now = 0;
    const guard = new MountGuard([a, b], cap.log, { maxAgeMs: 1000, now: () => now, onRelease: () => released++ });
    assert.equal(guard.held(), true, 'b is missing');
    assert.deepEqual(guard.status(), { held: true, missing: [b] });
    for (let i = 0; i < 5; i++) guard.check();
    assert.equal(cap.count('anchor file is missing (is the mount down?): holding every scan until it is back'), 1);

    rmSync(a);
    guard.check();
    assert.deepEqual(guard.status().missing, [a, b]);
    writeFileSync(a, '');
    writeFileSync(b, '');
    // held() trusts a check younger than maxAgeMs and looks again once it is older.
    now = 500;
    assert.equal(guard.held(), true);
    now = 1600;
    assert.equal(guard.held(), false);
    guard.check();
    assert.equal(released, 1);
    assert.equal(cap.count('anchor file is missing (is the mount down?): holding every scan until it is back'), 2);
    assert.equal(cap.count('anchor file is back'), 2);
    assert.equal(cap.count('every anchor file is present: scans resume'), 1);
  });

  test('a request is accepted and queued while held; the scan reaches Plex only once the anchor is back', async () => {
    const dir = tempDir();
    const anchor = join(dir, 'mounted.bin');
    const plex = await new FakePlex().start();
    const cap = capturingLogger();
    const { config } = parseConfig({
      SERVER_IP: '127.0.0.1',
      SERVER_PORT: 0,
      SERVER_PASS: 'guard-secret',
      SERVER_FILE_CHECKS_ENABLED: false,
      SERVER_ALLOW_MANUAL_SCAN: true,
      PLEX_LOCAL_URL: plex.url,
      PLEX_TOKEN: plex.token,
      SERVER_SCAN_DELAY: 0,
      SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] },
      SERVER_ANCHOR_FILES: [anchor],
    });
    const relay = await startRelay({ config, log: cap.log, queuefile: join(dir, 'queue.db'), mountGuard: { intervalMs: 100 } });
    const origin = new URL(relay.url).origin;
    try {
      await cap.waitForLog((e) => e.anchor === anchor && /anchor file is missing/.test(e.msg));
      const mark = cap.lines.length;
      const answer = await postForm(relay.url, { eventType: 'Manual', filepath: '/movies/Heat (1995)/Heat.mkv' });
      assert.equal(answer.status, 200);
      assert.equal(answer.body.status, 'queued');
      // The commit wakes the scheduler, which declines to send anything.
      await cap.waitForLog((e) => e.msg === 'deliveries held', mark);
      assert.equal(plex.refreshes().length, 0);
      assert.equal(relay.store.countOpen(), 1);

      const metrics = await (await fetch(`${origin}/metrics`)).text();
      assert.match(metrics, /^scanrelay_held\{reason="mount_guard"\} 1$/m);
      const page = await (await fetch(relay.url, { headers: { accept: 'text/html' } })).text();
      assert.match(page, /held: mount guard/);
      assert.ok(page.includes(anchor), 'the dashboard names the missing anchor');

      writeFileSync(anchor, '');
      await waitFor(() => plex.refreshes().length === 1, 10_000, 'the held scan delivered');
      assert.equal(plex.refreshes()[0]!.path, '/data/Movies/Heat (1995)');
      // Told once as waiting (every target: no target named) and once as recovered, for NOTIFICATIONS.
      await waitFor(async () => (await relay.store.outbox.after(0, 100)).some((e) => e.kind === 'recovered'), 10_000, 'recovered told');
      const holds = (await relay.store.outbox.after(0, 100)).filter((e) => e.kind === 'waiting' || e.kind === 'recovered');
      assert.deepEqual(holds.map((e) => [e.kind, e.target, e.hold]), [['waiting', undefined, 'mount-guard'], ['recovered', undefined, 'mount-guard']]);
      assert.match(holds[0]!.reason ?? '', /a mount is down \(SERVER_ANCHOR_FILES\)/);
      assert.match(await (await fetch(`${origin}/metrics`)).text(), /^scanrelay_held\{reason="mount_guard"\} 0$/m);
      assert.doesNotMatch(await (await fetch(relay.url, { headers: { accept: 'text/html' } })).text(), /held: mount guard/);
      assert.equal(cap.count('anchor file is missing (is the mount down?): holding every scan until it is back'), 1);
      assert.equal(cap.count('anchor file is back'), 1);
    } finally {
      await relay.close();
      await plex.stop();
    }
  });

  test('SERVER_ANCHOR_FILES must be a list of paths', () => {
    assert.throws(() => parseConfig({ SERVER_ANCHOR_FILES: '/mnt/unionfs/mounted.bin' }), /SERVER_ANCHOR_FILES/);
  });
});
