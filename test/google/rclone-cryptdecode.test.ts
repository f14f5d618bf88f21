import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { configSchema } from '../../src/config/schema.ts';
import { CryptDecodeError, CryptDecoder, parseCryptdecode } from '../../src/google/rclone-crypt.ts';
import { rcloneBinaryOf } from '../../src/triggers/drive/index.ts';
import { cryptConf, cryptEncode, RCLONE } from '../helpers/rclone.ts';
import { tempDir } from '../helpers/relay.ts';

/**
 * RCLONE.CRYPT_MAPPINGS with Debian's real rclone. Checked against plex_autoscan rclone.py:17-44: a
 * path starting (case-insensitively) with a mapped drive folder loses that folder, the rest goes to
 * `rclone --config <RCLONE.CONFIG> cryptdecode <remote:> <rest>`, and the decoded rest is joined back.
 */
function setup() {
  const dir = tempDir('scanrelay-crypt-');
  const conf = join(dir, 'rclone.conf');
  cryptConf(conf, { secret: 'pass-one', other: 'pass-two' });
  return { dir, conf };
}

describe('rclone cryptdecode', () => {
  it('decodes paths below a mapped folder and leaves other paths alone; an undecodable name is reported', async () => {
    const { conf } = setup();
    const [film, show] = cryptEncode(conf, 'secret:', ['Movies/Film (2020)/Film (2020).mkv', 'TV/Show 100%/S01E01.mkv']);
    const decoder = new CryptDecoder({ binary: RCLONE, configFile: conf, mappings: { 'My Drive/crypt/': ['secret:'], 'Team/enc': ['secret:'] } });
    const paths = [`My Drive/crypt/${film}`, `my drive/CRYPT/${show}`, `Team/enc/${film}`, 'My Drive/Media/Plain.mkv', 'My Drive/crypt/not-encrypted.mkv'];
    const out = await decoder.decode(paths);
    assert.deepEqual(out.get(paths[0]!), { path: 'My Drive/crypt/Movies/Film (2020)/Film (2020).mkv' });
    // The folder is matched case-insensitively (rclone.py:22) and joined back in the config's spelling (rclone.py:39).
    assert.deepEqual(out.get(paths[1]!), { path: 'My Drive/crypt/TV/Show 100%/S01E01.mkv' });
    // A folder written without its trailing "/" still gives one separator.
    assert.deepEqual(out.get(paths[2]!), { path: 'Team/enc/Movies/Film (2020)/Film (2020).mkv' });
    assert.deepEqual(out.get(paths[3]!), { path: 'My Drive/Media/Plain.mkv' });
    assert.match((out.get(paths[4]!) as { failed: string }).failed, /could not decrypt "not-encrypted\.mkv"/);
  });

  it('tries the next remote of a folder when the first cannot decrypt the name', async () => {
    const { conf } = setup();
    const [a] = cryptEncode(conf, 'other:', ['Movies/A.mkv']);
    const decoder = new CryptDecoder({ binary: RCLONE, configFile: conf, mappings: { 'My Drive/crypt/': ['secret:', 'other:'] } });
    const out = await decoder.decode([`My Drive/crypt/${a}`]);
    assert.deepEqual(out.get(`My Drive/crypt/${a}`), { path: 'My Drive/crypt/Movies/A.mkv' });
  });

  it('names are decoded 10 to a run (the most rclone 1.60 takes), not one process each', async () => {
    const { dir, conf } = setup();
    const clear = Array.from({ length: 95 }, (_, i) => `Movies/Film ${i}/Film ${i}.mkv`);
    const encrypted = cryptEncode(conf, 'secret:', clear);
    // A wrapper that records each run, then runs the real rclone.
    const runs = join(dir, 'runs.log');
    const wrapper = join(dir, 'rclone-wrapper');
    writeFileSync(wrapper, `#!/bin/sh\necho run >> '${runs}'\nexec ${RCLONE} "$@"\n`);
    chmodSync(wrapper, 0o755);
    writeFileSync(runs, '');
    const decoder = new CryptDecoder({ binary: wrapper, configFile: conf, mappings: { 'My Drive/crypt/': ['secret:'] } });
    const out = await decoder.decode(encrypted.map((e) => `My Drive/crypt/${e}`));
    assert.deepEqual(
      encrypted.map((e) => out.get(`My Drive/crypt/${e}`)),
      clear.map((c) => ({ path: `My Drive/crypt/${c}` })),
    );
    const count = readFileSync(runs, 'utf8').split('\n').filter(Boolean).length;
    assert.equal(count, 10);
  });

  it('names that look like flags are passed as names', async () => {
    const dir = tempDir('scanrelay-crypt-');
    const conf = join(dir, 'rclone.conf');
    writeFileSync(conf, `[plain]\ntype = crypt\nremote = /nonexistent\nfilename_encryption = off\npassword = ${cryptPassword()}\n`);
    const decoder = new CryptDecoder({ binary: RCLONE, configFile: conf, mappings: { 'crypt/': ['plain:'] } });
    const out = await decoder.decode(['crypt/-Film.mkv.bin']);
    assert.deepEqual(out.get('crypt/-Film.mkv.bin'), { path: 'crypt/-Film.mkv' });
  });

  it('a run that fails as a whole (unknown remote, no rclone) throws instead of dropping the names', async () => {
    const { conf } = setup();
    const unknown = new CryptDecoder({ binary: RCLONE, configFile: conf, mappings: { 'c/': ['nosuch:'] } });
    await assert.rejects(unknown.decode(['c/abc']), (err: Error) => err instanceof CryptDecodeError && /nosuch: failed: .*didn't find section/.test(err.message));
    const missing = new CryptDecoder({ binary: '/nonexistent/rclone', configFile: conf, mappings: { 'c/': ['secret:'] } });
    await assert.rejects(missing.decode(['c/abc']), /\/nonexistent\/rclone not found/);
  });

  it('CRYPT_MAPPINGS in config.json: a drive folder -> a list of remotes (a lone string is a list of one)', () => {
    // plex_autoscan config.py:64 (default {}), rclone.py:18-23 (iterates each folder's remotes).
    const parsed = configSchema.parse({ RCLONE: { CRYPT_MAPPINGS: { 'My Drive/crypt/': ['secret:', 'other:'], 'Team/enc/': 'secret:' } } });
    assert.deepEqual(parsed.RCLONE.CRYPT_MAPPINGS, { 'My Drive/crypt/': ['secret:', 'other:'], 'Team/enc/': ['secret:'] });
    assert.deepEqual(configSchema.parse({}).RCLONE.CRYPT_MAPPINGS, {});
    assert.throws(() => configSchema.parse({ RCLONE: { CRYPT_MAPPINGS: { 'c/': 5 } } }));
  });

  it('RCLONE.BINARY is used when the file exists, else rclone from PATH', () => {
    // plex_autoscan rclone.py:9-11: an empty or missing BINARY falls back to `which rclone`.
    const dir = tempDir('scanrelay-crypt-');
    const bin = join(dir, 'my-rclone');
    writeFileSync(bin, '#!/bin/sh\n');
    chmodSync(bin, 0o755);
    const of = (BINARY: string) => rcloneBinaryOf(configSchema.parse({ RCLONE: { BINARY } }));
    assert.equal(of(bin), bin);
    assert.equal(of('/nonexistent/rclone'), 'rclone');
    assert.equal(of(''), 'rclone');
    assert.equal(rcloneBinaryOf(configSchema.parse({})), 'rclone');
  });

  it('reads a missing or odd answer line as "not decoded" for that name only', () => {
    assert.deepEqual(parseCryptdecode('a \t A\nb \t Failed to decrypt\nc \t C\n', ['a', 'b', 'c']), ['A', undefined, 'C']);
    assert.deepEqual(parseCryptdecode('a \t A\n', ['a', 'b']), ['A', undefined]);
    assert.deepEqual(parseCryptdecode('', ['a']), [undefined]);
  });
});

function cryptPassword(): string {
  const dir = tempDir('scanrelay-crypt-');
  const conf = join(dir, 'x.conf');
  cryptConf(conf, { x: 'pw' });
  return /password = (.*)/.exec(readFileSync(conf, 'utf8'))![1]!;
}
