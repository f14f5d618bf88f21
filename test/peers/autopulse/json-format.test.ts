// unit set (npm run test:unit): in process; no child process, no port, no database
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { autopulseJsonDocument } from '../../../src/peers/autopulse/json-format.ts';

/* autopulse's json webhook document: crates/service/src/settings/webhooks/json.rs:5-42 and its test (json.rs:58-100). */
describe('FORMAT "autopulse": the document autopulse\'s json receivers parse', () => {
  test('one entry per event and trigger, with files, file_count and one timestamp', () => {
    const now = Date.parse('2026-11-26T10:00:00Z');
    const doc = autopulseJsonDocument(
      [
        { kind: 'scanned', trigger: 'sonarr', folder: '/tv/A', files: ['/tv/A/e1.mkv'] },
        { kind: 'scanned', trigger: 'sonarr', folder: '/tv/B' },
        { kind: 'failed', folder: '/movies/X' },
        { kind: 'recovered' },
        { kind: 'waiting', trigger: 'radarr', files: ['/movies/Y/y.mkv'] },
      ],
      now,
    );
    assert.deepEqual(doc, {
      events: [
        { event: 'processed', action: 'processed', trigger: 'sonarr', files: ['/tv/A/e1.mkv', '/tv/B'], file_count: 2, timestamp: '2026-11-26T10:00:00.000Z' },
        { event: 'failed', action: 'failed', trigger: null, files: ['/movies/X'], file_count: 1, timestamp: '2026-11-26T10:00:00.000Z' },
        { event: 'retrying', action: 'retrying', trigger: 'radarr', files: ['/movies/Y/y.mkv'], file_count: 1, timestamp: '2026-11-26T10:00:00.000Z' },
      ],
    });
  });
});

describe('a json destination with FORMAT "autopulse" posts that document; FORMAT belongs to json alone', () => {
  test('jsonMessages renders the batch as autopulse does, and the schema refuses FORMAT on another TYPE', async () => {
    const { notificationSchema } = await import('../../../src/config/notifications.ts');
    const { jsonMessages } = await import('../../../src/notify/services/json.ts');
    const now = Date.parse('2026-11-26T10:00:00Z');
    const dest = notificationSchema.parse({ TYPE: 'json', URL: 'http://127.0.0.1:9/hook', FORMAT: 'autopulse' });
    const [message] = jsonMessages(dest, [{ id: 1, kind: 'scanned', at: now, target: 'plex', trigger: 'radarr', folder: '/movies/Heat (1995)' }], now);
    assert.deepEqual(JSON.parse(message!.body), {
      events: [{ event: 'processed', action: 'processed', trigger: 'radarr', files: ['/movies/Heat (1995)'], file_count: 1, timestamp: '2026-11-26T10:00:00.000Z' }],
    });
    const plain = jsonMessages(notificationSchema.parse({ TYPE: 'json', URL: 'http://127.0.0.1:9/hook' }), [{ id: 1, kind: 'scanned', at: now, target: 'plex' }], now);
    assert.equal(JSON.parse(plain[0]!.body).version, 1);
    const refused = notificationSchema.safeParse({ TYPE: 'discord', URL: 'http://127.0.0.1:9/hook', FORMAT: 'autopulse' });
    assert.equal(refused.success, false);
    assert.match(refused.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'), /FORMAT: FORMAT is for json destinations/);
  });
});
