import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import pino from 'pino';
import { parseConfig } from '../../src/config/load.ts';
import type { NotifyEvent } from '../../src/core/events.ts';
import { startRelay } from '../../src/server/run.ts';
import { JsonReceiverFake, type NotifyCall } from '../fakes/notify-services.ts';
import { FakePlex } from '../fakes/plex.ts';
import { postForm, tempDir, waitFor } from '../helpers/relay.ts';

const MB = 1e6;
const eventsOf = (calls: NotifyCall[]): NotifyEvent[] => calls.filter((c) => c.status === 200).flatMap((c) => c.json.events as NotifyEvent[]);

/** A debug logger that keeps every line, to wait on log events. */
function capturingLogger() {
  const lines: Array<Record<string, any>> = [];
  const log = pino({ level: 'debug', base: undefined }, { write: (l: string) => void lines.push(JSON.parse(l)) });
  return { log, lines };
}

/**
 * A relay in this process against a fake Plex and a json destination, its disks' free space set by the test
 * (`free`, by file; statfs is the seam). Scans are due at once; the guard looks on every claim.
 */
async function relayWithDisks(free: Map<string, number>, extra: Record<string, unknown>) {
  const dir = tempDir();
  const plex = await new FakePlex().start();
  const json = await new JsonReceiverFake().start();
  const cap = capturingLogger();
  const queuefile = join(dir, 'queue.db');
  const { config } = parseConfig({
    SERVER_IP: '127.0.0.1',
    SERVER_PORT: 0,
    SERVER_PASS: 'disk-secret',
    SERVER_FILE_CHECKS_ENABLED: false,
    SERVER_ALLOW_MANUAL_SCAN: true,
    PLEX_LOCAL_URL: plex.url,
    PLEX_TOKEN: plex.token,
    SERVER_SCAN_DELAY: 0,
    SERVER_PATH_MAPPINGS: { '/data/Movies/': ['/movies/'] },
    SERVER_DISK_MIN_FREE: 100,
    PLEX_ANALYZE_TYPE: 'off',
    NOTIFICATIONS: { hook: { TYPE: 'json', URL: `${json.url}/hook`, BATCH_SECONDS: 0.05 } },
    ...extra,
  });
  const relay = await startRelay({
    config,
    log: cap.log,
    queuefile,
    scheduler: { heldRecheckMs: 50 },
    diskSpace: { intervalMs: 50, maxAgeMs: 0, room: (file) => ({ bytes: free.get(file) ?? 10_000 * MB, inodes: 1000 }) },
    notify: { pollMs: 20 },
  });
  const stop = async () => {
    await relay.close();
    await plex.stop();
    await json.stop();
  };
  return { relay, plex, json, cap, queuefile, stop };
}

describe('a full disk (SERVER_DISK_MIN_FREE) is told as waiting and recovered', () => {
  test("the media's disk (an anchor's): scans wait while it is full, one waiting with the folder and free bytes, one recovered", async () => {
    const media = tempDir();
    const anchor = join(media, 'mounted.bin');
    writeFileSync(anchor, '');
    const free = new Map<string, number>();
    const { relay, plex, json, cap, stop } = await relayWithDisks(free, { SERVER_ANCHOR_FILES: [anchor] });
    const scan = (name: string) => postForm(relay.url, { eventType: 'Manual', filepath: `/movies/${name}/film.mkv` });
    try {
      // The destination has looked at the outbox (it is sent what comes after its first look).
      assert.equal((await scan('Heat (1995)')).status, 200);
      await waitFor(() => eventsOf(json.calls).some((e) => e.kind === 'scanned'), 15_000, 'the first scan told');

      free.set(anchor, 50 * MB);
      await waitFor(() => eventsOf(json.calls).some((e) => e.kind === 'waiting'), 15_000, 'waiting sent');
      const waiting = eventsOf(json.calls).find((e) => e.kind === 'waiting')!;
      assert.equal(waiting.path, media);
      assert.equal(waiting.freeBytes, 50 * MB);
      assert.equal(waiting.target, undefined, 'every target waits');
      assert.equal(waiting.hold, 'disk-full');
      assert.match(waiting.reason ?? '', /is full: 50 MB free, below SERVER_DISK_MIN_FREE \(100 MB\)/);

      // A request is still taken and queued, and not sent; hovering above the line does not release it.
      const mark = cap.lines.length;
      const answer = await scan('Dune (2021)');
      assert.equal(answer.status, 200);
      assert.equal(answer.body.status, 'queued');
      free.set(anchor, 150 * MB);
      await waitFor(() => cap.lines.slice(mark).filter((l) => l.msg === 'deliveries held').length >= 3, 15_000, 'looks while held');
      assert.ok(!plex.refreshes().some((r) => r.path === '/data/Movies/Dune (2021)'), 'nothing sent while the disk is full');
      const origin = new URL(relay.url).origin;
      assert.match(await (await fetch(`${origin}/metrics`)).text(), /^scanrelay_held\{reason="disk_full"\} 1$/m);
      const page = await (await fetch(relay.url, { headers: { accept: 'text/html' } })).text();
      assert.match(page, /held: disk full<\/strong> <span class="why">[^<]*: 150 MB free/);

      free.set(anchor, 250 * MB);
      await waitFor(() => plex.refreshes().some((r) => r.path === '/data/Movies/Dune (2021)'), 15_000, 'the held scan sent');
      await waitFor(() => eventsOf(json.calls).some((e) => e.kind === 'recovered'), 15_000, 'recovered sent');
      const events = eventsOf(json.calls);
      assert.equal(events.filter((e) => e.kind === 'waiting').length, 1);
      const recovered = events.filter((e) => e.kind === 'recovered');
      assert.equal(recovered.length, 1);
      assert.equal(recovered[0]!.path, media);
      assert.equal(recovered[0]!.hold, 'disk-full');
      assert.ok(typeof recovered[0]!.tookMs === 'number');
      assert.match(await (await fetch(`${origin}/metrics`)).text(), /^scanrelay_held\{reason="disk_full"\} 0$/m);
      assert.doesNotMatch(await (await fetch(relay.url, { headers: { accept: 'text/html' } })).text(), /disk full/);
    } finally {
      await stop();
    }
  });

  test("the queue file's disk: told, and scans go on (holding them would free nothing)", async () => {
    const free = new Map<string, number>();
    const { relay, plex, json, queuefile, stop } = await relayWithDisks(free, {});
    const scan = (name: string) => postForm(relay.url, { eventType: 'Manual', filepath: `/movies/${name}/film.mkv` });
    try {
      assert.equal((await scan('Heat (1995)')).status, 200);
      await waitFor(() => eventsOf(json.calls).some((e) => e.kind === 'scanned'), 15_000, 'the first scan told');
      free.set(queuefile, 20 * MB);
      await waitFor(() => eventsOf(json.calls).some((e) => e.kind === 'waiting'), 15_000, 'waiting sent');
      const waiting = eventsOf(json.calls).find((e) => e.kind === 'waiting')!;
      assert.equal(waiting.path, dirname(queuefile));
      assert.match(waiting.reason ?? '', /the disk of the queue file .* is full: 20 MB free.*scan requests are refused \(503\) once no room is left/);

      assert.equal((await scan('Dune (2021)')).status, 200);
      await waitFor(() => plex.refreshes().some((r) => r.path === '/data/Movies/Dune (2021)'), 15_000, 'sent while the queue disk is low');
      assert.match(await (await fetch(relay.url, { headers: { accept: 'text/html' } })).text(), /queue file's disk full<\/strong>/);
      assert.match(await (await fetch(`${new URL(relay.url).origin}/metrics`)).text(), /^scanrelay_held\{reason="disk_full"\} 0$/m, 'nothing is held');

      free.set(queuefile, 300 * MB);
      await waitFor(() => eventsOf(json.calls).some((e) => e.kind === 'recovered'), 15_000, 'recovered sent');
      assert.equal(eventsOf(json.calls).filter((e) => e.kind === 'waiting').length, 1);
    } finally {
      await stop();
    }
  });
});
