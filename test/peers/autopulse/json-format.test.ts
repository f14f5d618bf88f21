// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { notificationSchema } from '../../../src/config/notifications.ts';
import type { StoredEvent } from '../../../src/core/events.ts';
import { autopulseJsonDocument } from '../../../src/peers/autopulse/json-format.ts';
import { jsonMessages } from '../../../src/notify/services/json.ts';

/*
 * FORMAT "autopulse": the document autopulse's json webhook posts (dan-online/autopulse 55124fd):
 * crates/service/src/settings/webhooks/json.rs:27-42 builds {events: [{event, action, trigger, files, file_count,
 * timestamp}]}, one entry per (event, trigger) of the batch (manager.rs:82-102). runner.rs:173-239 adds each file
 * once to the event it ended in: `processed` once every target took it (process_events, runner.rs:246-326: a retry
 * goes only to the targets not yet hit, runner.rs:257, and the file is `processed` only when none failed this round),
 * `retrying` each round a target failed it, `failed` once retries ran out. `trigger` is the event's event_source:
 * the name of the trigger under `triggers:` (runner.rs:192), e.g. "radarr4k".
 */

const NOW = Date.parse('2026-11-26T10:00:00Z');
const ev = (id: number, e: Omit<StoredEvent, 'id' | 'at'>): StoredEvent => ({ id, at: NOW, ...e });

describe('FORMAT "autopulse": the document autopulse\'s json receivers parse', () => {
  test("autopulse's own payload test (json.rs:63-101): fields, one timestamp, trigger null without a trigger", () => {
    const doc = autopulseJsonDocument(
      [
        ev(1, { kind: 'scanned', scan: 1, target: 'plex', trigger: 'Sonarr', title: 'autopulse trigger sonarr', files: ['/media/tv/show-01.mkv'], scanOpen: 0, scanFailed: 0 }),
        ev(2, { kind: 'failed', scan: 2, target: 'plex', folder: '/media/tv/show-02.mkv', reason: 'no section', scanOpen: 0, scanFailed: 1 }),
      ],
      NOW,
    );
    assert.deepEqual(doc, {
      events: [
        { event: 'processed', action: 'processed', trigger: 'sonarr', files: ['/media/tv/show-01.mkv'], file_count: 1, timestamp: '2026-11-26T10:00:00.000Z' },
        { event: 'failed', action: 'failed', trigger: null, files: ['/media/tv/show-02.mkv'], file_count: 1, timestamp: '2026-11-26T10:00:00.000Z' },
      ],
    });
  });

  test('three targets of one scan: its file once, under the trigger\'s name, only from the event that settled the scan', () => {
    const scan = { scan: 7, trigger: 'Radarr', title: 'autopulse trigger radarr4k', folder: '/movies/Heat (1995)', files: ['/movies/Heat (1995)/Heat.mkv'] };
    const events = [
      ev(1, { kind: 'scanned', target: 'plex', ...scan, scanOpen: 2, scanFailed: 0 }),
      ev(2, { kind: 'retrying', target: 'jellyfin', ...scan, reason: '503' }),
      ev(3, { kind: 'retrying', target: 'emby', ...scan, reason: '503' }),
      ev(4, { kind: 'scanned', target: 'emby', ...scan, scanOpen: 1, scanFailed: 0 }),
      ev(5, { kind: 'scanned', target: 'jellyfin', ...scan, scanOpen: 0, scanFailed: 0 }),
    ];
    // All in one batch, and each event in a batch of its own (autopulse's interval passed between them).
    const together = autopulseJsonDocument(events, NOW).events;
    assert.deepEqual(
      together.map((e) => [e.event, e.trigger, e.files]),
      [
        ['retrying', 'radarr4k', ['/movies/Heat (1995)/Heat.mkv']],
        ['processed', 'radarr4k', ['/movies/Heat (1995)/Heat.mkv']],
      ],
    );
    const apart = events.flatMap((e) => autopulseJsonDocument([e], NOW).events.map((d) => d.event));
    assert.deepEqual(apart, ['retrying', 'retrying', 'processed'], 'processed once, after the last target took it');
  });

  test('a scan one target failed is failed once, never processed; waiting and recovered have no autopulse event', () => {
    const scan = { scan: 3, trigger: 'Sonarr', title: 'autopulse trigger my_sonarr', folder: '/tv/A' };
    const doc = autopulseJsonDocument(
      [
        ev(1, { kind: 'failed', target: 'jellyfin', ...scan, reason: 'refused', scanOpen: 1, scanFailed: 1 }),
        ev(2, { kind: 'scanned', target: 'plex', ...scan, scanOpen: 0, scanFailed: 1 }),
        ev(3, { kind: 'waiting', target: 'plex', reason: 'plex does not answer' }),
        ev(4, { kind: 'recovered', target: 'plex' }),
      ],
      NOW,
    );
    assert.deepEqual(doc.events.map((e) => [e.event, e.trigger, e.files]), [['failed', 'my_sonarr', ['/tv/A']]]);
  });

  test('a json destination with FORMAT "autopulse" posts that document; FORMAT belongs to json alone', () => {
    const dest = notificationSchema.parse({ TYPE: 'json', URL: 'http://127.0.0.1:9/hook', FORMAT: 'autopulse' });
    const [message] = jsonMessages(dest, [ev(1, { kind: 'scanned', target: 'plex', trigger: 'Radarr', folder: '/movies/Heat (1995)' })], NOW);
    assert.deepEqual(JSON.parse(message!.body), {
      events: [{ event: 'processed', action: 'processed', trigger: 'radarr', files: ['/movies/Heat (1995)'], file_count: 1, timestamp: '2026-11-26T10:00:00.000Z' }],
    });
    const plain = jsonMessages(notificationSchema.parse({ TYPE: 'json', URL: 'http://127.0.0.1:9/hook' }), [ev(1, { kind: 'scanned', target: 'plex' })], NOW);
    assert.equal(JSON.parse(plain[0]!.body).version, 1);
    const refused = notificationSchema.safeParse({ TYPE: 'discord', URL: 'http://127.0.0.1:9/hook', FORMAT: 'autopulse' });
    assert.equal(refused.success, false);
    assert.match(refused.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'), /FORMAT: FORMAT is for json destinations/);
  });
});
