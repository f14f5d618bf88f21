import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { looksLikeFile } from '../../src/paths/folder.ts';
import { FakePlex } from '../fakes/plex.ts';
import { postForm, spawnRelay, tempDir, type RelayProcess } from '../helpers/relay.ts';

/*
 * plex_autoscan looked at the disk (plex.py:63-73: os.path.isdir on the file-exists path, then the parent of a
 * file is scanned) and scanned the parent of anything it could not see. scanrelay looks where it may (below a
 * SERVER_FILE_EXIST_PATH_MAPPINGS key, a SERVER_PATH_MAPPINGS key, or a library root as the media server names
 * it) and otherwise reads the name.
 */
describe('a file is a file', () => {
  test('with nothing to look at, every video, audio and subtitle extension Plex reads names a file', () => {
    for (const name of ['clip.mts', 'ep.ogm', 'cam.m2t', 'rec.dvr-ms', 'tv.wtv', 'a.tp', 'b.evo', 'song.opus', 'track.wv', 'x.sup', 'y.smi', 'z.ssa', 'w.psb', 'movie.en.forced.srt']) {
      assert.equal(looksLikeFile(`/data/Movies/X (2000)/${name}`), true, name);
    }
    for (const name of ['Mr. Robot', 'S.W.A.T', 'Movie.2019.1080p.BluRay.x264-GROUP', 'Season 01']) {
      assert.equal(looksLikeFile(`/data/TV/${name}`), false, name);
    }
  });

  describe('below a library root the media server names, the disk decides (no mappings at all)', () => {
    let plex: FakePlex;
    let relay: RelayProcess;
    let movies: string;
    before(async () => {
      const dir = tempDir();
      movies = join(dir, 'media', 'Movies');
      mkdirSync(join(movies, 'Home (2020)'), { recursive: true });
      writeFileSync(join(movies, 'Home (2020)', 'Birthday.mts'), 'x');
      // A name no list knows, and a folder named like a file.
      writeFileSync(join(movies, 'Home (2020)', 'Camcorder.mod'), 'x');
      mkdirSync(join(movies, 'Heat.1995.mkv'), { recursive: true });
      plex = await new FakePlex({ sections: [{ id: '1', title: 'Movies', type: 'movie', locations: [movies] }] }).start();
      relay = await spawnRelay({ dir, config: { PLEX_LOCAL_URL: plex.url, PLEX_TOKEN: plex.token, SERVER_SCAN_DELAY: 600, SERVER_ALLOW_MANUAL_SCAN: true } });
    });
    after(async () => {
      await relay?.kill();
      await plex?.stop();
    });

    test('a manual scan of an existing .mts file, of a file with an unknown extension and of a folder named x.mkv', async () => {
      const folderOf = async (path: string) => {
        const res = await postForm(relay.url, { eventType: 'Manual', filepath: path });
        assert.equal(res.status, 200, res.text);
        return res.body.scans[0].folder as string;
      };
      assert.equal(await folderOf(join(movies, 'Home (2020)', 'Birthday.mts')), join(movies, 'Home (2020)'));
      assert.equal(await folderOf(join(movies, 'Home (2020)', 'Camcorder.mod')), join(movies, 'Home (2020)'));
      assert.equal(await folderOf(join(movies, 'Heat.1995.mkv')), join(movies, 'Heat.1995.mkv'));
    });
  });
});
