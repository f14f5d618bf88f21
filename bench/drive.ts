/**
 * Drive monitoring cost, through the real client, watcher and poller against the fake Drive API:
 * API calls per idle poll (target 1), per 1,000 new files, and the cache's size.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema, type Config, type FileConfig } from '../src/config/schema.ts';
import { relayConfig } from '../src/config/named-targets.ts';
import { FOLDER, FakeGoogle } from '../test/fakes/google.ts';
import { tempDir } from '../test/helpers/relay.ts';
import { drivePollerOn } from './drive-poller.ts';
import { report } from './lib.ts';

export async function benchDrive(): Promise<Record<string, unknown>> {
  const google = await new FakeGoogle().start();
  const dir = tempDir('scanrelay-bench-drive-');
  const root = google.rootName;
  const config = relayConfig(configSchema.parse({
    SERVER_PASS: 'bench',
    SERVER_PATH_MAPPINGS: { '/data/': [`${root}/Media/`] },
    PLEX_DATABASE_PATH: join(dir, 'absent-plex.db'),
    GOOGLE: {
      ENABLED: true,
      ...google.configKeys(),
      ALLOWED: { FILE_PATHS: [`${root}/Media/`], FILE_EXTENSIONS: true, FILE_EXTENSIONS_LIST: ['mkv'], MIME_TYPES: true, MIME_TYPES_LIST: ['video'] },
    },
  }) as FileConfig);
  google.seed({ id: 'media', name: 'Media', parents: [google.rootId], mimeType: FOLDER });
  google.seed({ id: 'tv', name: 'TV', parents: ['media'], mimeType: FOLDER });
  const { poller, store, cachefile, close } = drivePollerOn(google, config, dir);

  const calls = () => google.driveCalls().length;
  const rows: Array<Record<string, unknown>> = [];
  await poller.pollOnce(); // first run: stores the start page token
  const poll = async (name: string) => {
    const before = calls();
    const started = Date.now();
    await poller.pollOnce();
    const made = google.driveCalls().slice(before);
    // Which calls: "changes x2, files.get x3" (a page of changes each, a parent walk each).
    const kinds = new Map<string, number>();
    for (const c of made) {
      const kind = c.path.replace('/drive/v3/', '').replace(/^files\/.*/, 'files.get').replace(/^drives\/.*/, 'drives.get');
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    const which = [...kinds].map(([k, n]) => `${k} x${n}`).join(', ');
    rows.push({ poll: name, 'API calls': made.length, which, 'scans queued': store.countOpen(), ms: Date.now() - started });
  };
  await poll('idle');

  // 1,000 new episodes in 20 new show folders (folders arrive in the same change feed first).
  for (let s = 0; s < 20; s++) {
    google.put({ id: `show${s}`, name: `Show ${s}`, parents: ['tv'], mimeType: FOLDER });
    for (let e = 0; e < 50; e++) google.put({ id: `ep${s}-${e}`, name: `Show ${s} - S01E${String(e + 1).padStart(2, '0')}.mkv`, parents: [`show${s}`], md5Checksum: `md5-${s}-${e}` });
  }
  await poll('1,000 new files');
  await poll('idle again');

  await close();
  const cacheItems = 2 + 20 + 1000;
  const cacheKb = Math.round((statSync(cachefile).size + safeSize(`${cachefile}-wal`)) / 1024);
  await google.stop();
  const summary = { idleCalls: rows[0]!['API calls'], cacheKb, cacheItems, bytesPerItem: Math.round((cacheKb * 1024) / cacheItems) };
  report('drive', rows, summary);
  return summary;
}

function safeSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchDrive();
