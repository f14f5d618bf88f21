import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pino from 'pino';
import { commandTargetSchema } from '../../src/targets/command/schema.ts';
import { tdarrTargetSchema } from '../../src/targets/tdarr/schema.ts';
import type { NotifyEvent } from '../../src/core/events.ts';
import { scanRequestSchema, type Target } from '../../src/core/scan.ts';
import { Scheduler, type SchedulerOptions } from '../../src/queue/scheduler.ts';
import { QueueStore } from '../../src/queue/store.ts';
import { createCommandTarget } from '../../src/targets/command/target.ts';
import { mediaBrowserTarget } from '../../src/targets/media-browser/target.ts';
import { createTdarrTarget } from '../../src/targets/tdarr/target.ts';
import { FakeMediaServer } from '../fakes/jellyfin.ts';
import { FakeTdarr } from '../fakes/tdarr.ts';
import { processAlive, tempDir, waitFor } from '../helpers/relay.ts';

// Issue 52 item 4: one target never blocks another (a Tdarr that accepts and never answers, a command that never
// exits), and a stop ends within its grace period whatever hangs. Item 8: a dead target is logged once a minute,
// told as `waiting` once it failed for a minute, and its back-off ends when it answers again.

const dir = tempDir('scanrelay-isolation-');

/** A program that writes its pid and its child's to `pids`, then waits for ever (its child sleeps). */
function neverExits(name: string): { path: string; pids: () => number[] } {
  const path = join(dir, `${name}.sh`);
  const pids = join(dir, `${name}.pids`);
  writeFileSync(path, `#!/bin/sh\necho $$ >> "${pids}"\nsleep 3600 &\necho $! >> "${pids}"\nwait\n`);
  chmodSync(path, 0o755);
  return { path, pids: () => (existsSync(pids) ? readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number) : []) };
}


function capture() {
  const lines: Array<Record<string, any>> = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { lines, log };
}

function queue(targets: Target[], opts: SchedulerOptions, log = pino({ level: 'silent' })) {
  const store = new QueueStore(':memory:');
  const scheduler = new Scheduler(store, targets, log, opts);
  const enqueue = (folders: string[]) => {
    const ids = store.enqueueMany(folders.map((folder) => scanRequestSchema.parse({ folder, source: 'Manual' })), { delayMs: 0, maxMs: 0 }).map((r) => r.id);
    scheduler.poke();
    return ids;
  };
  const deliveries = (target: string) => store.db.prepare<[string], { status: string; n: number }>(`SELECT status, count(*) AS n FROM deliveries WHERE target = ? GROUP BY status`).all(target);
  const count = (target: string, status: string) => deliveries(target).find((d) => d.status === status)?.n ?? 0;
  const events = () => store.outbox.after(0, 10_000).map((e) => e as unknown as NotifyEvent);
  return { store, scheduler, enqueue, count, events };
}

const folders = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `/data/Movies/${prefix} ${i}`);

describe('targets never block each other', { skip: process.platform === 'win32' }, () => {
  test('a command that never exits and a Tdarr that never answers fill only their own slots; Jellyfin drains; stop ends within its grace period and kills the programs', async () => {
    const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
    const tdarr = await new FakeTdarr().start();
    await tdarr.setMode('hang');
    const prog = neverExits('hung');
    const targets = [
      createCommandTarget('hook', commandTargetSchema.parse({ TYPE: 'command', COMMAND: [prog.path], TIMEOUT: 3600 }), pino({ level: 'silent' })),
      createTdarrTarget('tdarr', tdarrTargetSchema.parse({ TYPE: 'tdarr', URL: tdarr.url, DB_ID: 'lib', REQUEST: { TIMEOUT: 3600 } }), pino({ level: 'silent' })),
      mediaBrowserTarget('jellyfin', jellyfin.url, 'jf-key', pino({ level: 'silent' }), undefined, 'jf'),
    ];
    const q = queue(targets, { concurrency: 4, stopGraceMs: 300 });
    await q.scheduler.start();
    let stopped = false;
    try {
      // Scans one at a time until the hung targets hold all their slots (a backlog would go to Tdarr in one batch).
      for (const folder of folders('First', 4)) {
        q.enqueue([folder]);
        await waitFor(() => q.count('hook', 'sending') + q.count('tdarr', 'sending') >= 2 * (folders('First', 4).indexOf(folder) + 1) || undefined, 20_000, 'the hung targets took the scan');
      }
      await waitFor(() => prog.pids().length === 8 || undefined, 20_000, 'four programs running');
      // The hung targets' slots are full; Jellyfin's are its own.
      q.enqueue(folders('Later', 30));
      await waitFor(() => q.count('jf', 'done') === 34 || undefined, 20_000, 'Jellyfin delivered every scan while the others hang');
      assert.equal(q.count('hook', 'sending'), 4);
      assert.equal(q.count('tdarr', 'sending'), 4);
      // Stopping: the hung deliveries are let go after the grace period, and the programs die with their children.
      const stop = q.scheduler.stop().then(() => (stopped = true));
      await waitFor(() => stopped || undefined, 30_000, 'stop ended with a program and a server hanging');
      await stop;
      await waitFor(() => prog.pids().every((p) => !processAlive(p)) || undefined, 20_000, 'the programs and their children are gone');
    } finally {
      if (!stopped) await Promise.race([q.scheduler.stop(), new Promise((r) => setTimeout(r, 1000))]);
      for (const p of prog.pids()) if (processAlive(p)) process.kill(p, 'SIGKILL');
      q.store.close();
      await Promise.all([jellyfin.stop(), tdarr.stop()]);
    }
  });
});

describe('a target that does not answer', () => {
  test('one WARN line per target per minute, with counts, instead of one per scan per attempt; one line when it answers again', async () => {
    const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
    await jellyfin.setMode('error503');
    const { lines, log } = capture();
    let offset = 0;
    let attempts = 0;
    const q = queue([mediaBrowserTarget('jellyfin', jellyfin.url, 'jf-key', pino({ level: 'silent' }), undefined, 'jf')], {
      retryBaseMs: 5,
      retryMaxMs: 20,
      clock: () => Date.now() + offset,
      onDelivery: () => void attempts++,
    }, log);
    await q.scheduler.start();
    try {
      q.enqueue(folders('Dead', 20));
      await waitFor(() => attempts >= 100 || undefined, 30_000, '100 failed attempts');
      const warns = () => lines.filter((l) => l.level === 40 && l.target === 'jf');
      assert.equal(warns().length, 1, JSON.stringify(warns().slice(0, 3)));
      assert.equal(warns()[0]!.msg, 'scan not delivered yet; will retry');
      // A minute later (this relay's clock): the next attempt writes one line with what happened since.
      offset += 61_000;
      await waitFor(() => warns().length === 2 || undefined, 30_000, 'the minute\'s line');
      const summary = warns()[1]!;
      assert.ok(summary.failedAttempts >= 99, JSON.stringify(summary));
      assert.equal(summary.scans, 20);
      assert.match(summary.msg, /^jf still does not answer: \d+ attempts for 20 scans failed since the last line; each is retried$/);
      await jellyfin.setMode('up');
      await waitFor(() => q.count('jf', 'done') === 20 || undefined, 30_000, 'delivered once it answers');
      const back = warns().filter((l) => /answers again/.test(l.msg));
      assert.equal(back.length, 1, JSON.stringify(back));
      assert.ok(warns().length <= 3, `${warns().length} WARN lines`);
    } finally {
      await q.scheduler.stop();
      q.store.close();
      await jellyfin.stop();
    }
  });

  test('`waiting` is told once it failed for the hold time, without waiting for a retry to land', async () => {
    const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
    await jellyfin.setMode('down');
    // The back-off is far longer than the hold: no attempt lands meanwhile.
    const q = queue([mediaBrowserTarget('jellyfin', jellyfin.url, 'jf-key', pino({ level: 'silent' }), undefined, 'jf')], { retryBaseMs: 600_000, retryMaxMs: 600_000, waitingAfterMs: 300 });
    await q.scheduler.start();
    try {
      q.enqueue(folders('Held', 1));
      const waiting = await waitFor(() => q.events().find((e) => e.kind === 'waiting'), 20_000, 'waiting told');
      assert.equal(waiting?.target, 'jf');
      assert.equal(q.events().filter((e) => e.kind === 'waiting').length, 1);
    } finally {
      await q.scheduler.stop();
      q.store.close();
      await jellyfin.stop();
    }
  });

  test('the default hold before `waiting` is a minute', () => {
    const q = queue([], {});
    try {
      assert.equal((q.scheduler as unknown as { holds: { afterMs: number } }).holds.afterMs, 60_000);
    } finally {
      q.store.close();
    }
  });

  test('when it answers again, the scans in back-off for it are retried at once', async () => {
    const jellyfin = await new FakeMediaServer({ apiKey: 'jf-key' }).start();
    await jellyfin.setMode('error503');
    const q = queue([mediaBrowserTarget('jellyfin', jellyfin.url, 'jf-key', pino({ level: 'silent' }), undefined, 'jf')], { retryBaseMs: 600_000, retryMaxMs: 600_000 });
    await q.scheduler.start();
    try {
      const backlog = q.enqueue(folders('Backlog', 5));
      const failedOnce = () => (q.store.db.prepare(`SELECT count(*) AS n FROM deliveries WHERE status = 'waiting' AND last_error IS NOT NULL`).get() as { n: number }).n;
      await waitFor(() => failedOnce() === 5 || undefined, 20_000, 'every scan failed once and waits out a 10-minute back-off');
      await jellyfin.setMode('up');
      // A new scan gets through: the target answers again.
      q.enqueue(folders('New', 1));
      await waitFor(() => q.count('jf', 'done') === 6 || undefined, 20_000, 'the backlog went at once, not after its back-off');
      for (const id of backlog) assert.equal(q.store.view.get(id)!.status, 'done');
    } finally {
      await q.scheduler.stop();
      q.store.close();
      await jellyfin.stop();
    }
  });
});
