/**
 * RCLONE.CRYPT_MAPPINGS cost: one poll of 1,000 new encrypted files through the real poller, with
 * Debian's rclone decoding (through a wrapper that counts its runs), against the same poll without
 * crypt. Names are encrypted beforehand with `rclone cryptdecode --reverse` (not timed).
 */
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema, type Config, type FileConfig } from '../src/config/schema.ts';
import { relayConfig } from '../src/config/named-targets.ts';
import { FOLDER, FakeGoogle } from '../test/fakes/google.ts';
import { cryptConf, cryptEncode, RCLONE } from '../test/helpers/rclone.ts';
import { tempDir } from '../test/helpers/relay.ts';
import { drivePollerOn } from './drive-poller.ts';
import { report } from './lib.ts';

const FILES = 1000;

async function pollOf(crypt: boolean): Promise<Record<string, unknown>> {
  const google = await new FakeGoogle().start();
  const dir = tempDir('scanrelay-bench-crypt-');
  const conf = join(dir, 'rclone.conf');
  cryptConf(conf, { secret: 'bench-password' });
  const runs = join(dir, 'runs.log');
  const wrapper = join(dir, 'rclone-counting');
  writeFileSync(runs, '');
  writeFileSync(wrapper, `#!/bin/sh\necho run >> '${runs}'\nexec ${RCLONE} "$@"\n`);
  chmodSync(wrapper, 0o755);
  const clear = Array.from({ length: FILES }, (_, i) => `Show ${Math.floor(i / 50)} - S01E${String((i % 50) + 1).padStart(2, '0')}.mkv`);
  const names = crypt ? cryptEncode(conf, 'secret:', clear) : clear;
  const root = google.rootName;
  const config = relayConfig(configSchema.parse({
    SERVER_PASS: 'bench',
    SERVER_PATH_MAPPINGS: { '/data/': [`${root}/crypt/`] },
    PLEX_DATABASE_PATH: join(dir, 'absent-plex.db'),
    RCLONE: crypt ? { BINARY: wrapper, CONFIG: conf, CRYPT_MAPPINGS: { [`${root}/crypt/`]: ['secret:'] } } : {},
    GOOGLE: { ENABLED: true, ...google.configKeys(), ALLOWED: { FILE_PATHS: [`${root}/crypt/`], FILE_EXTENSIONS: true, FILE_EXTENSIONS_LIST: ['mkv'] } },
  }) as FileConfig);
  google.seed({ id: 'crypt', name: 'crypt', parents: [google.rootId], mimeType: FOLDER });
  const { poller, store, close } = drivePollerOn(google, config, dir);
  await poller.pollOnce();
  names.forEach((name, i) => google.put({ id: `f${i}`, name, parents: ['crypt'], md5Checksum: `m${i}`, mimeType: crypt ? 'application/octet-stream' : 'video/x-matroska' }));
  const started = Date.now();
  await poller.pollOnce();
  const ms = Date.now() - started;
  const row = { poll: `${FILES} new files${crypt ? ', encrypted' : ''}`, 'rclone runs': readFileSync(runs, 'utf8').split('\n').filter(Boolean).length, 'files queued': store.view.listOpen().reduce((n, e) => n + e.files.length, 0), ms };
  await close();
  await google.stop();
  return row;
}

export async function benchCrypt(): Promise<Record<string, unknown>> {
  const rows = [await pollOf(false), await pollOf(true)];
  const summary = { plainMs: rows[0]!.ms, cryptMs: rows[1]!.ms, rcloneRuns: rows[1]!['rclone runs'] };
  report('crypt', rows, summary);
  return summary;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCrypt();
